"""``jtac time-scale``: set or show the node's time_scale_percentage (0 halts along the path)."""

from __future__ import annotations

import argparse
import sys

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.session import RosSession

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``time-scale`` sub-parser."""
    p = sub.add_parser(
        "time-scale",
        parents=[node_option(), wait_option()],
        help="set time_scale_percentage (0-100), or show it",
        description="Set the node's time_scale_percentage: 100 = as planned, 50 = half speed, 0 = halt "
        "along the path. Without PERCENT, print the current value.",
    )
    p.add_argument("percent", type=_percent, nargs="?", metavar="PERCENT", help="0 to 100")
    p.set_defaults(func=handle)
    return p


def _percent(text: str) -> float:
    """time_scale_percentage, checked by the parameter schema's own rule (same message as the node)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (a percentage, 0 to 100)") from None
    from jtac_py.parameters import ParameterError, default_schema

    try:
        return default_schema().spec("time_scale_percentage").check(value)
    except ParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_TIME_SCALE = "time_scale_percentage"


def handle(args: argparse.Namespace) -> int:
    """Sets time_scale_percentage to PERCENT, or prints it without PERCENT."""
    with RosSession("time_scale") as ros:
        return _show(ros, args) if args.percent is None else _set(ros, args)


def _missing(args: argparse.Namespace) -> str:
    """The error when the node has no parameter services."""
    return f"no parameter services on {args.node} — {NO_NODE_HINT}"


def _show(ros: RosSession, args: argparse.Namespace) -> int:
    """Prints the current time_scale_percentage."""
    from rcl_interfaces.msg import ParameterType
    from rcl_interfaces.srv import GetParameters

    request = GetParameters.Request(names=[_TIME_SCALE])
    response = ros.call(GetParameters, f"{args.node}/get_parameters", request, args.wait, _missing(args))
    value = response.values[0] if response.values else None
    if value is None or value.type != ParameterType.PARAMETER_DOUBLE:
        print(f"{args.node} has no double parameter {_TIME_SCALE}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{_TIME_SCALE} = {value.double_value:g}")
    return EXIT_OK


def _set(ros: RosSession, args: argparse.Namespace) -> int:
    """Sets time_scale_percentage; exit 1 with the node's reason on a refusal."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    parameter = Parameter(
        name=_TIME_SCALE,
        value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=args.percent),
    )
    request = SetParameters.Request(parameters=[parameter])
    response = ros.call(SetParameters, f"{args.node}/set_parameters", request, args.wait, _missing(args))
    result = response.results[0] if response.results else None
    if result is None or not result.successful:
        reason = result.reason if result is not None and result.reason else "no reason given"
        print(f"{args.node} refused {_TIME_SCALE} = {args.percent:g}: {reason}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{_TIME_SCALE} = {args.percent:g}")
    return EXIT_OK
