"""``jtac state``: echo the controller state, one compact line per message."""

from __future__ import annotations

import argparse
from typing import Any

from jtac_py.cli.common import EXIT_OK, EXIT_USAGE, CliError, positive_int
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.session import RosSession

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``state`` sub-parser."""
    p = sub.add_parser(
        "state",
        parents=[node_option(), wait_option()],
        help="echo the controller state, one line per message",
        description="Echo <node>/controller_state: stamp, speed scaling factor, |position error| "
        "per joint and its maximum.",
    )
    p.add_argument(
        "--count", type=positive_int, metavar="N", help="exit after N messages (default: until Ctrl-C)"
    )
    p.set_defaults(func=handle)
    return p


def _state_line(msg: Any) -> str:
    """One compact line of a JointTrajectoryControllerState: stamp, speed scaling, |error| per joint."""
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    errors = [abs(e) for e in msg.error.positions]
    line = f"t {stamp:.3f}  scale {msg.speed_scaling_factor:.3f}"
    if errors:
        worst = max(range(len(errors)), key=errors.__getitem__)
        names = list(msg.joint_names)
        joint = names[worst] if worst < len(names) else str(worst)
        line += f"  |err| [{' '.join(f'{e:.4f}' for e in errors)}] rad  max {errors[worst]:.4f} ({joint})"
    return line


def handle(args: argparse.Namespace) -> int:
    """Prints one line per controller_state message until --count or Ctrl-C."""
    from control_msgs.msg import JointTrajectoryControllerState
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    topic = f"{args.node}/controller_state"
    received = 0

    def on_state(msg: Any) -> None:
        nonlocal received
        if args.count is None or received < args.count:
            received += 1
            print(_state_line(msg), flush=True)

    with RosSession("state") as ros:
        # Best effort matches both reliable and best-effort publishers.
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
        ros.node.create_subscription(JointTrajectoryControllerState, topic, on_state, qos)
        if not ros.wait_until(lambda: ros.node.count_publishers(topic) > 0, args.wait):
            raise CliError(EXIT_USAGE, f"no publisher on {topic} — {NO_NODE_HINT}")
        while args.count is None or received < args.count:
            ros.spin_once()
    return EXIT_OK
