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
from jtac_ros.cli.session import RosSession, action_name, cancel_goal, constant_names

__all__ = ["add_parser", "handle"]


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
    """Sends the goal file's goal and follows it; exit 0 only when it ends SUCCESSFUL."""
    spec = _read_spec(args)
    from control_msgs.action import FollowJointTrajectory
    from jtac.action import FollowJointTrajectoryWithAdmittance
    from rclpy.action import ActionClient

    action_type = FollowJointTrajectory if args.moveit else FollowJointTrajectoryWithAdmittance
    name = action_name(args.node, args.moveit)
    with RosSession("send_goal") as ros:
        client = ActionClient(ros.node, action_type, name)
        try:
            response = _GoalRun(ros, client, name, args).execute(spec)
        finally:
            client.destroy()
    if response is None:
        return EXIT_FAILED
    return _print_result(response, args.moveit)


def _read_spec(args: argparse.Namespace) -> Any:
    """The goal file, checked before any ROS traffic (exit 2 on a bad file)."""
    from jtac_ros.goal_file import GoalFileError, read_goal_file

    try:
        spec = read_goal_file(args.file)
        if args.moveit:
            spec.moveit_goal()  # the jtac-only keys fail here
    except GoalFileError as exc:
        raise CliError(EXIT_USAGE, str(exc)) from None
    return spec


class _GoalRun:
    """One goal sent and followed; canceled on --timeout or Ctrl-C."""

    def __init__(self, ros: RosSession, client: Any, name: str, args: argparse.Namespace):
        self.ros = ros
        self.client = client
        self.name = name
        self.args = args
        self.deadline = None if args.timeout is None else time.monotonic() + args.timeout
        self.progress: GoalProgress | None = None
        self.goal_id: Any = None  # set while there is a goal to cancel

    def remaining(self) -> float | None:
        """Time left before --timeout [s]; None without one."""
        return None if self.deadline is None else max(self.deadline - time.monotonic(), 0.0)

    def execute(self, spec: Any) -> Any:
        """The goal's result response; None when the server rejected the goal."""
        try:
            return self._send_and_wait(spec)
        except KeyboardInterrupt:
            if self.progress is not None:
                self.progress.finish()
            if self.goal_id is not None:
                print("interrupted: canceling the goal", file=sys.stderr)
                cancel_goal(self.ros, self.name, self.goal_id)
            raise

    def _send_and_wait(self, spec: Any) -> Any:
        """Sends the goal and waits for its result within --timeout."""
        from unique_identifier_msgs.msg import UUID

        if not self.ros.wait_until(self.client.server_is_ready, self.args.wait):
            raise CliError(EXIT_USAGE, f"no action server {self.name} — {NO_NODE_HINT}")
        goal = self._goal(spec)
        # Our own goal id: a Ctrl-C before the goal response (which rclpy can delay) still cancels it.
        self.goal_id = UUID(uuid=list(uuid.uuid4().bytes))
        send_future = self.client.send_goal_async(
            goal, feedback_callback=self.progress.update, goal_uuid=self.goal_id
        )
        if not self.ros.wait(send_future, self.remaining()):
            # Canceled in case it was accepted after all.
            self._give_up(f"timeout: {self.name} did not answer the goal; cancel requested")
        goal_handle = send_future.result()
        if not goal_handle.accepted:
            print(f"REJECTED: {self.name} rejected the goal")
            return None
        result_future = goal_handle.get_result_async()
        if not self.ros.wait(result_future, self.remaining()):
            self._give_up(f"timeout: no result after {self.args.timeout:g} s; cancel requested")
        self.goal_id = None  # done: nothing to cancel any more
        self.progress.finish()
        return result_future.result()

    def _goal(self, spec: Any) -> Any:
        """The goal message, stamped now; starts the progress bar and says what is sent."""
        now_ns = self.ros.node.get_clock().now().nanoseconds
        goal = spec.moveit_goal(now_ns) if self.args.moveit else spec.jtac_goal(now_ns)
        stamp = goal.trajectory.header.stamp
        start_ns = (stamp.sec * 1_000_000_000 + stamp.nanosec) or now_ns
        self.progress = GoalProgress(sys.stderr, spec.duration_s, start_ns)
        print(
            f"sending {self.args.file} to {self.name}: {len(goal.trajectory.points)} points, "
            f"{len(goal.trajectory.joint_names)} joints, {spec.duration_s:g} s",
            file=sys.stderr,
        )
        return goal

    def _give_up(self, message: str) -> None:
        """Ends the progress bar, cancels the goal and fails with ``message`` (exit 1)."""
        self.progress.finish()
        cancel_goal(self.ros, self.name, self.goal_id)
        raise CliError(EXIT_FAILED, message)


def _print_result(response: Any, moveit: bool) -> int:
    """Prints 'RESULT <code> <NAME>: <message>' (and the goal status when not SUCCEEDED)."""
    from action_msgs.msg import GoalStatus

    status_names = {v: k.removeprefix("STATUS_") for v, k in constant_names(GoalStatus).items()}
    result = response.result
    code = result.error_code
    message = result.error_string if moveit else result.error_message
    text = f"RESULT {code} {constant_names(type(result)).get(code, 'UNKNOWN')}"
    if message:
        text += f": {message}"
    if response.status != GoalStatus.STATUS_SUCCEEDED:
        text += f" (goal {status_names.get(response.status, response.status)})"
    print(text, flush=True)
    return EXIT_OK if code == 0 and response.status == GoalStatus.STATUS_SUCCEEDED else EXIT_FAILED
