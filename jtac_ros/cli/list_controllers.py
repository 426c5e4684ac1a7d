"""``jtac list-controllers``: the controller this node runs, its type and state, like
``ros2 control list_controllers``."""

from __future__ import annotations

import argparse

from jtac_py.cli.common import EXIT_OK
from jtac_ros.cli.lifecycle import lifecycle_state
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.session import RosSession

__all__ = ["CONTROLLER_TYPE", "add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``list-controllers`` sub-parser."""
    p = sub.add_parser(
        "list-controllers",
        parents=[node_option(), wait_option()],
        help="the controller this node runs: name, type, state",
        description=f"Print '<name> {CONTROLLER_TYPE} <state>' like `ros2 control list_controllers`; "
        "--verbose adds the claimed and required interfaces (<joint>/position).",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="print the interfaces too")
    p.set_defaults(func=handle)
    return p


CONTROLLER_TYPE = "jtac/JointTrajectoryAdmittanceController"


def _controller_joints(ros: RosSession, node: str, wait_s: float) -> list[str]:
    """The controlled joints: the `joints` parameter, else the robot's."""
    from rcl_interfaces.srv import GetParameters

    response = ros.call(
        GetParameters,
        f"{node}/get_parameters",
        GetParameters.Request(names=["joints", "robot"]),
        wait_s,
        f"no parameter services on {node} — {NO_NODE_HINT}",
    )
    if len(response.values) == 2 and list(response.values[0].string_array_value):
        return list(response.values[0].string_array_value)
    from jtac_py import robots

    robot = response.values[1].string_value if len(response.values) == 2 else "fr3"
    return list(robots.joint_names(robot or "fr3"))


def handle(args: argparse.Namespace) -> int:
    """Prints '<name> <type> <state>' (and the interfaces with --verbose)."""
    name = args.node.rpartition("/")[2]
    with RosSession("list_controllers") as ros:
        _, state = lifecycle_state(ros, args.node, args.wait)
        joints = _controller_joints(ros, args.node, args.wait) if args.verbose else []
    print(f"{name:<40} {CONTROLLER_TYPE:<42} {state}")
    if args.verbose:
        interfaces = [f"{j}/position" for j in joints]
        claimed = interfaces if state == "active" else []
        print(f"  claimed interfaces: {', '.join(claimed) or '(none)'}")
        print(f"  required command interfaces: {', '.join(interfaces)}")
        states = [f"{j}/{k}" for j in joints for k in ("position", "velocity")]
        print(f"  required state interfaces: {', '.join(states)}")
    return EXIT_OK
