"""``jtac param list | get | set``: the node's parameters through its parameter services."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK, CliError
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.parameter_text import parameter_text, parameter_value
from jtac_ros.cli.session import RosSession

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``param`` sub-parser."""
    p = sub.add_parser(
        "param",
        help="list, get or set the node's parameters",
        description="The node's parameters (params/jtac_parameters.yaml): list [PREFIX], get NAME..., "
        "set NAME VALUE (VALUE in YAML, converted to the declared type; the node validates it and a refusal "
        "prints its reason, exit 1).",
    )
    param_sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    q = param_sub.add_parser(
        "list",
        parents=[node_option(), wait_option()],
        help="parameter names (optionally those starting with PREFIX)",
    )
    q.add_argument("prefix", nargs="?", metavar="PREFIX")
    q = param_sub.add_parser("get", parents=[node_option(), wait_option()], help="print NAME = VALUE")
    q.add_argument("names", nargs="+", metavar="NAME")
    q = param_sub.add_parser("set", parents=[node_option(), wait_option()], help="set NAME to VALUE")
    q.add_argument("name", metavar="NAME")
    q.add_argument("value", metavar="VALUE", help="YAML: 50, 0.5, true, [4.0, 4.0, ...], text")
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """list, get or set, through the node's parameter services."""
    action = {"list": _list, "get": _get, "set": _set}[args.action]
    with RosSession("param") as ros:
        return action(ros, args)


def _call(ros: RosSession, args: argparse.Namespace, srv_type: Any, service: str, request: Any) -> Any:
    """Calls <node>/<service>; exit 2 when the node has no parameter services."""
    missing = f"no parameter services on {args.node} — {NO_NODE_HINT}"
    return ros.call(srv_type, f"{args.node}/{service}", request, args.wait, missing)


def _names(ros: RosSession, args: argparse.Namespace) -> list[str]:
    """Every parameter name the node has."""
    from rcl_interfaces.srv import ListParameters

    return list(_call(ros, args, ListParameters, "list_parameters", ListParameters.Request()).result.names)


def _list(ros: RosSession, args: argparse.Namespace) -> int:
    """Prints the names (starting with PREFIX); exit 1 when a PREFIX matches none."""
    names = sorted(n for n in _names(ros, args) if n.startswith(args.prefix or ""))
    for name in names:
        print(name)
    return EXIT_OK if names or not args.prefix else EXIT_FAILED


def _get(ros: RosSession, args: argparse.Namespace) -> int:
    """Prints NAME = VALUE per name; exit 1 naming the parameters the node does not have."""
    from rcl_interfaces.srv import GetParameters

    response = _call(ros, args, GetParameters, "get_parameters", GetParameters.Request(names=args.names))
    if len(response.values) != len(args.names):  # one unknown name empties the answer
        known = _names(ros, args)
        unknown = [n for n in args.names if n not in known]
        raise CliError(EXIT_FAILED, f"{args.node} has no parameter {', '.join(unknown)}")
    for name, value in zip(args.names, response.values, strict=True):
        print(f"{name} = {parameter_text(value)}")
    return EXIT_OK


def _set(ros: RosSession, args: argparse.Namespace) -> int:
    """Sets NAME to VALUE converted to its declared type; exit 1 with the node's reason on a refusal."""
    from rcl_interfaces.msg import Parameter
    from rcl_interfaces.srv import DescribeParameters, SetParameters

    described = _call(
        ros, args, DescribeParameters, "describe_parameters", DescribeParameters.Request(names=[args.name])
    )
    if not described.descriptors:
        raise CliError(EXIT_FAILED, f"{args.node} has no parameter {args.name}")
    value = parameter_value(args.value, described.descriptors[0].type, args.name)
    request = SetParameters.Request(parameters=[Parameter(name=args.name, value=value)])
    response = _call(ros, args, SetParameters, "set_parameters", request)
    result = response.results[0] if response.results else None
    if result is None or not result.successful:
        reason = result.reason if result is not None and result.reason else "no reason given"
        print(f"{args.node} refused {args.name} = {args.value}: {reason}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{args.name} = {parameter_text(value)}")
    return EXIT_OK
