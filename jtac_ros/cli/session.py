"""One rclpy session per command: a fresh context, one node and a single-threaded executor, and the small
helpers the verbs share to wait on futures, call services and name constants."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from jtac_py.cli.common import EXIT_FAILED, EXIT_USAGE, CliError

__all__ = ["SERVICE_TIMEOUT_S", "SPIN_STEP_S", "RosSession", "action_name", "constant_names", "seconds_of"]

SERVICE_TIMEOUT_S = 10.0  # answer time of a service the node has (rclpy can be slow under load)
SPIN_STEP_S = 0.1  # executor wait per step: Ctrl-C is seen within this
_POLL_S = 0.05  # discovery poll period [s]


class RosSession:
    """A fresh rclpy context with one node and a single-threaded executor, shut down on exit.

    Inside ``with``, Ctrl-C sets a flag that ``wait``, ``wait_until`` and ``spin_once`` turn into a
    KeyboardInterrupt between two executor steps: raised inside one of rclpy's native calls, it can come
    out as another exception (a TypeError from a return value that failed to convert) and escape the
    verb's Ctrl-C handling.
    """

    def __init__(self, role: str):
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        self.context = Context()
        # rclpy installs no signal handlers for a non-default context: Ctrl-C is ours (see above).
        rclpy.init(args=["jtac"], context=self.context)
        try:
            self.node = rclpy.create_node(
                f"jtac_cli_{role}_{os.getpid()}",
                context=self.context,
                enable_rosout=False,
                start_parameter_services=False,
            )
            self.executor = SingleThreadedExecutor(context=self.context)
            self.executor.add_node(self.node)
        except BaseException:
            self.context.try_shutdown()
            raise
        self._interrupted = False
        self._previous_sigint: Any = None

    def __enter__(self) -> RosSession:
        if threading.current_thread() is threading.main_thread():
            self._previous_sigint = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            self.executor.shutdown(timeout_sec=1.0)
            self.node.destroy_node()
            self.context.try_shutdown()
        finally:
            if self._previous_sigint is not None:
                signal.signal(signal.SIGINT, self._previous_sigint)
        if exc_type is None:
            self.check_interrupt()  # a Ctrl-C during the shutdown still interrupts

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self._interrupted = True

    def check_interrupt(self) -> None:
        """Raises KeyboardInterrupt (once) after a Ctrl-C."""
        if self._interrupted:
            self._interrupted = False
            raise KeyboardInterrupt

    def spin_once(self) -> None:
        """One executor step (at most SPIN_STEP_S), then a Ctrl-C check."""
        self.executor.spin_once(timeout_sec=SPIN_STEP_S)
        self.check_interrupt()

    def wait(self, future: Any, timeout_s: float | None) -> bool:
        """Spin until the future is done or timeout_s passes (None: no limit); True if done."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not future.done():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            self.spin_once()
        return True

    def wait_until(self, ready: Callable[[], bool], timeout_s: float) -> bool:
        """Poll ready() (a discovery check) until it holds or timeout_s passes."""
        deadline = time.monotonic() + timeout_s
        while not ready():
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)
            self.check_interrupt()
        return True

    def call(self, srv_type: Any, name: str, request: Any, wait_s: float, missing: str) -> Any:
        """Call a service: exit 2 with ``missing`` if it is not found within wait_s."""
        client = self.node.create_client(srv_type, name)
        try:
            if not self.wait_until(client.service_is_ready, wait_s):
                raise CliError(EXIT_USAGE, missing)
            future = client.call_async(request)
            if not self.wait(future, SERVICE_TIMEOUT_S):
                raise CliError(EXIT_FAILED, f"no answer from {name} within {SERVICE_TIMEOUT_S:g} s")
            return future.result()
        finally:
            self.node.destroy_client(client)


CANCEL_TIMEOUT_S = 2.0  # how long an interrupted command waits for its cancel to be acknowledged [s]


def cancel_goal(ros: RosSession, action: str, goal_id: Any) -> None:
    """Asks the action server to cancel one goal (by id); waits briefly for the acknowledgement."""
    from action_msgs.srv import CancelGoal

    client = ros.node.create_client(CancelGoal, f"{action}/_action/cancel_goal")
    try:
        request = CancelGoal.Request()
        request.goal_info.goal_id = goal_id
        if not ros.wait(client.call_async(request), CANCEL_TIMEOUT_S):
            print(f"no answer to the cancel request within {CANCEL_TIMEOUT_S:g} s", file=sys.stderr)
    finally:
        ros.node.destroy_client(client)


def action_name(node: str, moveit: bool) -> str:
    """The node's trajectory action: jtac's own, or the MoveIt-facing control_msgs one."""
    return f"{node}/moveit/follow_joint_trajectory" if moveit else f"{node}/follow_joint_trajectory"


def constant_names(cls: type) -> dict[int, str]:
    """Integer constants of a message class by value (SUCCESSFUL, INVALID_GOAL, ...)."""
    return {
        value: name
        for name, value in vars(cls).items()
        if name.isupper() and isinstance(value, int) and not isinstance(value, bool)
    }


def seconds_of(duration: Any) -> float:
    """A builtin_interfaces Duration in seconds."""
    return duration.sec + duration.nanosec * 1e-9
