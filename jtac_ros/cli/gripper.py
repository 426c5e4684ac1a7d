"""``jtac gripper``: the Franka Hand through the node's franka_ros2-style interfaces —
``move``, ``grasp`` and ``home`` send ``<node>/gripper/move|grasp|homing`` (franka_msgs actions) and
wait for the result, ``stop`` calls ``<node>/gripper/stop`` (std_srvs/Trigger), ``state`` reads the
fingers from ``joint_states``."""

from __future__ import annotations

import argparse
import math
import sys
import uuid
from typing import Any

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError, seconds
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.session import SERVICE_TIMEOUT_S, RosSession, cancel_goal

__all__ = ["add_parser", "handle"]

_DEFAULT_TIMEOUT_S = 30.0  # a gripper command takes about a second: 0.08 m at 0.1 m/s
_NO_HAND_HINT = "does the node have a hand? (parameter hand: jtac param get hand)"


def _number(text: str) -> float:
    """Argument type: a finite number (the node checks the range against the hand's limits)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not finite")
    return value


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``gripper`` sub-parser and its commands."""
    p = sub.add_parser(
        "gripper",
        help="move, grasp, home or stop the Franka Hand; show its width",
        description="Command the node's Franka Hand (parameter hand: true) through franka_ros2's gripper "
        "actions on <node>/gripper/...; prints 'RESULT ok' or 'RESULT failed: <why>' and the width. A new "
        "command preempts the running one; Ctrl-C or --timeout stops the hand.",
    )
    commands = p.add_subparsers(dest="gripper_command", required=True, metavar="COMMAND")
    common = [node_option(), wait_option(), _timeout_option()]
    move = commands.add_parser("move", parents=common, help="move the fingers to a width")
    move.add_argument("width", type=_number, metavar="W", help="width between the fingers [m], 0..0.08")
    _speed_option(move)
    grasp = commands.add_parser(
        "grasp",
        parents=common,
        help="close on an object of width W with a force",
        description="Grasp: succeeds when the fingers stop within W - epsilon_inner .. W + epsilon_outer.",
    )
    grasp.add_argument("width", type=_number, metavar="W", help="the object's width [m]")
    _speed_option(grasp)
    grasp.add_argument(
        "--force", type=_number, default=20.0, metavar="N", help="grasp force [N] (default: 20)"
    )
    for side in ("inner", "outer"):
        grasp.add_argument(
            f"--epsilon-{side}",
            type=_number,
            default=0.005,
            metavar="M",
            help=f"tolerated width {'below' if side == 'inner' else 'above'} W [m] (default: 0.005)",
        )
    commands.add_parser("home", parents=common, help="home the fingers (they open fully)")
    commands.add_parser("stop", parents=[node_option(), wait_option()], help="stop the running command")
    commands.add_parser("state", parents=[node_option(), wait_option()], help="print the hand's width")
    p.set_defaults(func=handle)
    return p


def _timeout_option() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--timeout",
        type=seconds,
        default=_DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"stop the hand and exit 1 without a result after S seconds (default: {_DEFAULT_TIMEOUT_S:g})",
    )
    return parent


def _speed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--speed", type=_number, default=0.1, metavar="M/S", help="width rate [m/s] (default: 0.1)"
    )


def handle(args: argparse.Namespace) -> int:
    """Runs the gripper command; exit 0 on success, 1 when it failed or was refused."""
    if args.gripper_command == "stop":
        return _stop(args)
    if args.gripper_command == "state":
        return _state(args)
    return _command(args)


# ---------------------------------------------------------------------------------- move, grasp, home
def _goal(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """The action type, its goal and a description of the command."""
    from franka_msgs.action import Grasp, Homing, Move

    if args.gripper_command == "move":
        return Move, Move.Goal(width=args.width, speed=args.speed), f"move to {args.width:g} m"
    if args.gripper_command == "grasp":
        goal = Grasp.Goal(width=args.width, speed=args.speed, force=args.force)
        goal.epsilon.inner, goal.epsilon.outer = args.epsilon_inner, args.epsilon_outer
        return Grasp, goal, f"grasp {args.width:g} m at {args.force:g} N"
    return Homing, Homing.Goal(), "home"


def _command(args: argparse.Namespace) -> int:
    from rclpy.action import ActionClient

    action_type, goal, text = _goal(args)
    suffix = "homing" if args.gripper_command == "home" else args.gripper_command
    name = f"{args.node}/gripper/{suffix}"
    with RosSession("gripper") as ros:
        states = _JointStates(ros, args.node)
        client = ActionClient(ros.node, action_type, name)
        try:
            if not ros.wait_until(client.server_is_ready, args.wait):
                raise CliError(EXIT_USAGE, f"no action server {name} — {NO_NODE_HINT}")
            print(f"{text} ({name})", file=sys.stderr)
            response = _send(ros, client, name, goal, args.timeout)
            # The width where the fingers ended: a joint_states published after the result.
            fingers = states.next_fingers() if response is not None else None
        finally:
            client.destroy()
    if response is None:
        return EXIT_FAILED
    result = response.result
    width = f"; width {sum(p for _, p in fingers):.4f} m" if fingers else ""
    print(f"RESULT ok{width}" if result.success else f"RESULT failed: {result.error}{width}", flush=True)
    return EXIT_OK if result.success else EXIT_FAILED


def _send(ros: RosSession, client: Any, name: str, goal: Any, timeout_s: float) -> Any:
    """The result response, or None when the node rejected the goal; a Ctrl-C or the timeout cancels
    the goal (the node stops the hand) first."""
    from unique_identifier_msgs.msg import UUID

    # Our own goal id: a Ctrl-C before the goal response still cancels it.
    goal_id = UUID(uuid=list(uuid.uuid4().bytes))
    try:
        send_future = client.send_goal_async(goal, goal_uuid=goal_id)
        if not ros.wait(send_future, timeout_s):
            cancel_goal(ros, name, goal_id)
            raise CliError(EXIT_FAILED, f"timeout: {name} did not answer the goal; cancel requested")
        handle = send_future.result()
        if not handle.accepted:
            print(f"REJECTED: {name} rejected the goal — {_NO_HAND_HINT} (the node's log says why)")
            return None
        result_future = handle.get_result_async()
        if not ros.wait(result_future, timeout_s):
            cancel_goal(ros, name, goal_id)
            raise CliError(EXIT_FAILED, f"timeout: no result after {timeout_s:g} s; the hand was stopped")
        return result_future.result()
    except KeyboardInterrupt:
        print("interrupted: stopping the hand", file=sys.stderr)
        cancel_goal(ros, name, goal_id)
        raise


# ---------------------------------------------------------------------------------- stop, state
def _stop(args: argparse.Namespace) -> int:
    from std_srvs.srv import Trigger

    service = f"{args.node}/gripper/stop"
    with RosSession("gripper") as ros:
        response = ros.call(
            Trigger, service, Trigger.Request(), args.wait, f"no service {service} — {NO_NODE_HINT}"
        )
    print(response.message or ("stopped" if response.success else "refused"))
    return EXIT_OK if response.success else EXIT_FAILED


def _state(args: argparse.Namespace) -> int:
    """The width from the next joint_states message: the two finger joints (each at width / 2)."""
    with RosSession("gripper") as ros:
        states = _JointStates(ros, args.node)
        if not ros.wait_until(lambda: ros.node.count_publishers(states.topic) > 0, args.wait):
            raise CliError(EXIT_USAGE, f"no publisher on {states.topic} — {NO_NODE_HINT}")
        fingers = states.next_fingers()
    if fingers is None:
        raise CliError(
            EXIT_FAILED, f"no message on {states.topic} within {SERVICE_TIMEOUT_S:g} s (is the node active?)"
        )
    if not fingers:
        raise CliError(EXIT_FAILED, f"{states.topic} has no finger joints — {_NO_HAND_HINT}")
    width_m = sum(p for _, p in fingers)
    print(f"width {width_m:.4f} m (" + ", ".join(f"{n} {p:.4f} m" for n, p in fingers) + ")")
    return EXIT_OK


class _JointStates:
    """The node's joint_states (in its namespace), subscribed from the start of the session."""

    def __init__(self, ros: RosSession, node: str):
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState

        self.ros = ros
        self.topic = f"{node.rpartition('/')[0]}/joint_states"
        self.messages: list[Any] = []
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        ros.node.create_subscription(JointState, self.topic, self.messages.append, qos)

    def next_fingers(self) -> list[tuple[str, float]] | None:
        """(name, position [m]) of each finger joint ([] when there is none) in the second message
        received after this call (the first may have been on its way before it); None when none
        arrives within SERVICE_TIMEOUT_S."""
        count = len(self.messages)

        def arrived() -> bool:
            self.ros.spin_once()
            return len(self.messages) > count + 1

        if not self.ros.wait_until(arrived, SERVICE_TIMEOUT_S):
            return None
        msg = self.messages[-1]
        return [(n, p) for n, p in zip(msg.name, msg.position, strict=True) if "_finger_joint" in n]
