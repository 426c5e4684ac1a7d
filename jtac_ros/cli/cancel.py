"""``jtac cancel``: cancel every goal of the node's action (action_msgs: a zero goal id cancels all)."""

from __future__ import annotations

import argparse
import sys

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.session import RosSession, action_name, constant_names

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``cancel`` sub-parser."""
    p = sub.add_parser(
        "cancel",
        parents=[node_option(), wait_option()],
        help="cancel every goal of the node's action",
        description="Cancel every goal of <node>/follow_joint_trajectory (the arm stops along its "
        "stop_accelerations).",
    )
    p.add_argument(
        "--moveit", action="store_true", help="cancel the goals of <node>/moveit/follow_joint_trajectory"
    )
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Cancels every goal of the action; 0 goals canceling (no goal running) is not a failure."""
    from action_msgs.srv import CancelGoal

    action = action_name(args.node, args.moveit)
    service = f"{action}/_action/cancel_goal"
    with RosSession("cancel") as ros:
        # A zero goal id with a zero stamp cancels every goal of the server (action_msgs semantics).
        response = ros.call(
            CancelGoal,
            service,
            CancelGoal.Request(),
            args.wait,
            f"no action server {action} — {NO_NODE_HINT}",
        )
    count = len(response.goals_canceling)
    if count == 0:
        # No goal running (the server then answers ERROR_REJECTED): nothing to do is not a failure.
        print(f"0 goals canceling on {action} (no active goal)")
        return EXIT_OK
    print(f"{count} goal{'s' if count != 1 else ''} canceling on {action}")
    if response.return_code != CancelGoal.Response.ERROR_NONE:
        code_name = constant_names(CancelGoal.Response).get(response.return_code, response.return_code)
        print(f"cancel return code {code_name}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
