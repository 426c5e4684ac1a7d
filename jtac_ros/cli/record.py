"""``jtac record start [--path P] [--per-goal] | stop``: the node records to .mcap
(``<node>/record/start``, rcl_interfaces/SetParameters; ``<node>/record/stop``, std_srvs/Trigger)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.session import RosSession

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``record`` sub-parser."""
    p = sub.add_parser(
        "record",
        help="start or stop the node's recording (.mcap)",
        description="The node records every controller cycle, the standard ROS 2 channels and its "
        "events to .mcap (docs/python_api.md, 'Recordings as MCAP'): start [--path P] [--per-goal], "
        "stop. Paths are on the node's machine, relative to its working directory.",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    q = actions.add_parser("start", parents=[node_option(), wait_option()], help="start recording")
    q.add_argument(
        "--path",
        default="",
        metavar="P",
        help="the .mcap file (default jtac_<date>_<time>.mcap); with --per-goal a folder",
    )
    q.add_argument(
        "--per-goal", action="store_true", help="one file per goal, <path>/goal_<id>.mcap (the goal's id)"
    )
    actions.add_parser("stop", parents=[node_option(), wait_option()], help="stop: the file complete")
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """start or stop; exit 1 with the node's reason when it refuses, 2 when there is no node."""
    with RosSession("record") as ros:
        ok, text = _start(ros, args) if args.action == "start" else _stop(ros, args)
    print(text, file=sys.stdout if ok else sys.stderr)
    return EXIT_OK if ok else EXIT_FAILED


def _missing(args: argparse.Namespace, service: str) -> str:
    return f"no service {args.node}/{service} — {NO_NODE_HINT}"


def _start(ros: RosSession, args: argparse.Namespace) -> tuple[bool, str]:
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    parameters = [
        Parameter(
            name="path", value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=args.path)
        ),
        Parameter(
            name="per_goal", value=ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=args.per_goal)
        ),
    ]
    service = "record/start"
    request = SetParameters.Request(parameters=parameters)
    response: Any = ros.call(
        SetParameters, f"{args.node}/{service}", request, args.wait, _missing(args, service)
    )
    result = response.results[0] if response.results else None
    if result is None:
        return False, "the node gave no answer"
    return bool(result.successful), result.reason


def _stop(ros: RosSession, args: argparse.Namespace) -> tuple[bool, str]:
    from std_srvs.srv import Trigger

    service = "record/stop"
    response = ros.call(
        Trigger, f"{args.node}/{service}", Trigger.Request(), args.wait, _missing(args, service)
    )
    return bool(response.success), response.message
