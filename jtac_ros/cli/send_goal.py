"""``jtac send-goal``: execute a goal file; progress on stderr, the RESULT line on stdout; Ctrl-C or
--timeout cancels the goal."""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from typing import Any

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError, seconds
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.progress import GoalProgress
from jtac_ros.cli.session import (
    RosSession,
    action_name,
    constant_names,
)

__all__ = ["add_parser", "handle"]

_CANCEL_TIMEOUT_S = 2.0  # how long an interrupted send-goal waits for its cancel to be acknowledged


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``send-goal`` sub-parser."""
    p = sub.add_parser(
        "send-goal",
        parents=[node_option(), wait_option()],
        help="execute a goal file: progress on stderr, RESULT line on stdout",
        description="Send a goal file (format: jtac_ros/goal_file.py) and wait for the result; print "
        "'RESULT <code> <NAME>: <message>'. Exit 0 only on SUCCESSFUL. Ctrl-C cancels the goal.",
    )
    p.add_argument("file", metavar="FILE.yaml", help="goal file")
    p.add_argument(
        "--moveit",
        action="store_true",
        help="send as control_msgs/FollowJointTrajectory to <node>/moveit/follow_joint_trajectory "
        "(no admittance or thresholds in the file)",
    )
    p.add_argument(
        "--timeout", type=seconds, metavar="S", help="cancel and exit 1 without a result after S seconds"
    )
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    from jtac_ros.goal_file import GoalFileError, read_goal_file

    try:
        spec = read_goal_file(args.file)
        if args.moveit:
            spec.moveit_goal()  # the jtac-only keys fail here, before any ROS traffic
    except GoalFileError as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None

    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from jtac.action import FollowJointTrajectoryWithAdmittance
    from rclpy.action import ActionClient
    from unique_identifier_msgs.msg import UUID

    action_type = FollowJointTrajectory if args.moveit else FollowJointTrajectoryWithAdmittance
    name = action_name(args.node, args.moveit)
    status_names = {v: k.removeprefix("STATUS_") for v, k in constant_names(GoalStatus).items()}
    deadline = None if args.timeout is None else time.monotonic() + args.timeout

    def remaining() -> float | None:
        return None if deadline is None else max(deadline - time.monotonic(), 0.0)

    with RosSession("send_goal") as ros:
        client = ActionClient(ros.node, action_type, name)
        progress = None
        goal_id = None
        try:
            if not client.wait_for_server(timeout_sec=args.wait):
                raise CliError(EXIT_USAGE, f"no action server {name} — {NO_NODE_HINT}")
            now_ns = ros.node.get_clock().now().nanoseconds
            goal = spec.moveit_goal(now_ns) if args.moveit else spec.jtac_goal(now_ns)
            stamp = goal.trajectory.header.stamp
            start_ns = (stamp.sec * 1_000_000_000 + stamp.nanosec) or now_ns
            progress = GoalProgress(sys.stderr, spec.duration_s, start_ns)
            print(
                f"sending {args.file} to {name}: {len(goal.trajectory.points)} points, "
                f"{len(goal.trajectory.joint_names)} joints, {spec.duration_s:g} s",
                file=sys.stderr,
            )
            # Our own goal id: a Ctrl-C before the goal response (which rclpy can delay) still cancels it.
            goal_id = UUID(uuid=list(uuid.uuid4().bytes))
            send_future = client.send_goal_async(goal, feedback_callback=progress.update, goal_uuid=goal_id)
            if not ros.wait(send_future, remaining()):
                progress.finish()
                _cancel(ros, name, goal_id)  # in case it was accepted after all
                raise CliError(EXIT_FAILED, f"timeout: {name} did not answer the goal; cancel requested")
            handle = send_future.result()
            if not handle.accepted:
                print(f"REJECTED: {name} rejected the goal")
                return EXIT_FAILED
            result_future = handle.get_result_async()
            if not ros.wait(result_future, remaining()):
                progress.finish()
                _cancel(ros, name, goal_id)
                raise CliError(EXIT_FAILED, f"timeout: no result after {args.timeout:g} s; cancel requested")
            goal_id = None  # done: nothing to cancel any more
        except KeyboardInterrupt:
            if progress is not None:
                progress.finish()
            if goal_id is not None:
                print("interrupted: canceling the goal", file=sys.stderr)
                _cancel(ros, name, goal_id)
            raise
        finally:
            client.destroy()
        progress.finish()
        response = result_future.result()
        result = response.result
        code = result.error_code
        message = result.error_string if args.moveit else result.error_message
        text = f"RESULT {code} {constant_names(type(result)).get(code, 'UNKNOWN')}"
        if message:
            text += f": {message}"
        if response.status != GoalStatus.STATUS_SUCCEEDED:
            text += f" (goal {status_names.get(response.status, response.status)})"
        print(text, flush=True)
        return EXIT_OK if code == 0 and response.status == GoalStatus.STATUS_SUCCEEDED else EXIT_FAILED


def _cancel(ros: RosSession, action: str, goal_id: Any) -> None:
    """Ask the action server to cancel one goal (by id); wait briefly for the acknowledgement."""
    from action_msgs.srv import CancelGoal

    client = ros.node.create_client(CancelGoal, f"{action}/_action/cancel_goal")
    try:
        request = CancelGoal.Request()
        request.goal_info.goal_id = goal_id
        if not ros.wait(client.call_async(request), _CANCEL_TIMEOUT_S):
            print(f"no answer to the cancel request within {_CANCEL_TIMEOUT_S:g} s", file=sys.stderr)
    finally:
        ros.node.destroy_client(client)
