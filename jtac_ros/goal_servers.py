"""The node's goal servers: jtac's FollowJointTrajectoryWithAdmittance action, control_msgs'
FollowJointTrajectory for stock MoveIt, and JTC's command topic ``~/joint_trajectory`` (while no
stream is open).

Goals are accepted at the action level while the node is active and answered with a result (so a
refused goal carries its code and message, which an action-level rejection could not): INVALID_GOAL /
INVALID_JOINTS / … from the core. While the node is not active a goal is rejected at the action level,
as JTC does, with the reason in the log. Every accepted goal gets exactly one result, after the arm
has stopped. Every result is logged with the goal's id, code and message (success and cancel at INFO,
refusals and stops at WARN, aborts at ERROR) through the node's rate-limited goal log. Each goal is
converted (``conversions``) and handed to the core; no algorithm lives here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node

from jtac_py import _native
from jtac_py.controller import Controller
from jtac_ros.action_qos import action_qos
from jtac_ros.admittance_goals import core_goal_from_admittance_goal
from jtac_ros.goal_log import GoalLog
from jtac_ros.result_codes import GoalConversionError, result_code_name, result_for_action
from jtac_ros.state_messages import fill_feedback
from jtac_ros.trajectory_goals import (
    ConvertedGoal,
    core_goal_from_follow_joint_trajectory,
    core_goal_from_joint_trajectory,
)
from jtac_ros.trajectory_time import TrajectoryTime

__all__ = ["ADMITTANCE_ACTION", "MOVEIT_ACTION", "GoalServers"]

ADMITTANCE_ACTION = "~/follow_joint_trajectory"
MOVEIT_ACTION = "~/moveit/follow_joint_trajectory"

ResultCode = _native.ResultCode
EventType = _native.EventType
EventDetail = _native.EventDetail


class _Tracked:
    """A goal handed to the core: its jtac_py handle, where it came from and what was logged."""

    def __init__(self, handle: Any, label: str) -> None:
        self.handle = handle
        self.label = label
        self.stop_logged = False
        self.stopped_by_topic = False


class GoalServers:
    """The two actions and JTC's command topic, and the goals they handed to the core.

    node: the ROS node (clock, action servers); active_controller(): the Controller while the node is
    active, else None; lifecycle_state(): the node's state's label (for a rejection's log line);
    feedback_period_s(): the feedback period [s] (1 / state_publish_rate); default_tolerances(): the
    default path and goal tolerance per controller joint [rad] (control_msgs' JointTolerance 0)."""

    def __init__(
        self,
        node: Node,
        *,
        active_controller: Callable[[], Controller | None],
        lifecycle_state: Callable[[], str],
        feedback_period_s: Callable[[], float],
        default_tolerances: Callable[[], tuple[list[float], list[float]]],
        log: GoalLog,
    ) -> None:
        self._node = node
        self._active_controller = active_controller
        self._lifecycle_state = lifecycle_state
        self._feedback_period_s = feedback_period_s
        self._default_tolerances = default_tolerances
        self._log = log
        self._trajectory_time = TrajectoryTime()
        self._lock = threading.Lock()
        self._tracked: dict[int, _Tracked] = {}  # core goal id -> goals not finished yet
        self._topic_goals: list[_Tracked] = []  # from ~/joint_trajectory: watched by the state timer
        self._action_goals: dict[bytes, _Tracked] = {}  # action goal UUID -> its goal in the core

    def create_action_servers(self, callback_group: Any) -> list[ActionServer]:
        """Both action servers, created at configure; the node destroys them at cleanup."""
        from control_msgs.action import FollowJointTrajectory
        from jtac.action import FollowJointTrajectoryWithAdmittance

        return [
            ActionServer(
                self._node,
                FollowJointTrajectoryWithAdmittance,
                ADMITTANCE_ACTION,
                execute_callback=self._execute_admittance,
                goal_callback=lambda _goal: self._on_goal_request("follow_joint_trajectory"),
                cancel_callback=self._on_cancel_request,
                callback_group=callback_group,
                **action_qos(),
            ),
            ActionServer(
                self._node,
                FollowJointTrajectory,
                MOVEIT_ACTION,
                execute_callback=self._execute_moveit,
                goal_callback=lambda _goal: self._on_goal_request("moveit/follow_joint_trajectory"),
                cancel_callback=self._on_cancel_request,
                callback_group=callback_group,
                **action_qos(),
            ),
        ]

    def time_from_start_s(self, state: Any) -> float:
        """The trajectory time of the state's reference [s] (JTC's time_from_start; 0 while idle)."""
        return self._trajectory_time.at(state)

    def _ros_now_s(self) -> float:
        return self._node.get_clock().now().nanoseconds * 1e-9

    # ---------------------------------------------------------------------------------- the topic
    def on_trajectory_msg(self, controller: Controller, msg: Any) -> None:
        """JTC's command topic: the message replaces the running trajectory from its header stamp,
        through the same intake and stitching as the actions; an empty one stops every goal."""
        label = "~/joint_trajectory message"
        if not len(msg.points):
            with self._lock:
                running = list(self._tracked.values())
            for tracked in running:
                tracked.stopped_by_topic = True
                tracked.handle.cancel()
            self._log.log(
                "info", f"{label} with no points: stopping {len(running)} goal(s) (minimum-time stop)"
            )
            return
        try:
            converted = core_goal_from_joint_trajectory(
                msg, ros_now_s=self._node.get_clock().now(), controller_now_s=controller.controller_time()
            )
        except GoalConversionError as error:
            self._log.log("warning", f"{label} refused: {error}")
            return
        try:
            tracked = self._submit(controller, converted, "~/joint_trajectory")
        except (ValueError, TypeError, RuntimeError) as error:
            self._log.log("warning", f"{label} refused: INVALID_GOAL (-1): {error}")
            return
        with self._lock:
            self._topic_goals.append(tracked)

    def watch_topic_goals(self) -> None:
        """The topic's goals have no one waiting on them: their stops and results are logged here
        (called by the node's state timer)."""
        with self._lock:  # the timer may run on two executor threads at once
            finished = [t for t in self._topic_goals if t.handle.done()]
            self._topic_goals = [t for t in self._topic_goals if t not in finished]
            running = list(self._topic_goals)
        for tracked in running:
            self._log_stop(tracked)
        for tracked in finished:
            self._log_stop(tracked)
            self._settle(tracked, tracked.handle.result(timeout=0.0))

    # ---------------------------------------------------------------------------------- goals in the core
    def _submit(self, controller: Controller, converted: ConvertedGoal, source: str) -> _Tracked:
        """Hands a converted goal to the core and tracks it until its result (a goal the core refuses
        at intake comes back already done). Raises ValueError/TypeError/RuntimeError for a goal the
        bindings cannot even build."""
        for note in converted.notes:
            self._log.note(note)
        handle = controller.submit(converted.goal)
        if handle.done():  # refused at submission: the core gave it no id and it never runs
            return _Tracked(handle, f"goal ({source})")
        tracked = _Tracked(handle, f"goal {handle.goal_id} ({source})")
        if handle.warning:  # accepted, e.g. an admittance axis with little damping: said once, here
            self._log.log("warning", f"{tracked.label}: accepted with a warning: {handle.warning}")
        self._trajectory_time.register(handle.goal_id, handle, converted.duration_s)
        with self._lock:
            self._tracked[handle.goal_id] = tracked
        return tracked

    def _settle(self, tracked: _Tracked, result: Any) -> None:
        self._log_result(tracked, tracked.label, result)
        goal_id = tracked.handle.goal_id
        if goal_id:
            self._trajectory_time.forget(goal_id)
            with self._lock:
                if self._tracked.get(goal_id) is tracked:
                    del self._tracked[goal_id]

    # ---------------------------------------------------------------------------------- the actions
    def _on_goal_request(self, action: str) -> GoalResponse:
        """Goals are taken only while active (JTC's rule): an inactive controller would only abort
        them. The action level carries no reason, so the log does."""
        if self._active_controller() is not None:
            return GoalResponse.ACCEPT
        state = self._lifecycle_state()
        self._log.log(
            "warning", f"goal on {action} rejected: the controller is not active (lifecycle state '{state}')"
        )
        return GoalResponse.REJECT

    def _on_cancel_request(self, goal_handle: Any) -> CancelResponse:
        """Cancels the core's goal at once, not at the execute loop's next poll: MoveIt sends the
        replanned goal right after the cancel, and the core must see the cancel first (then it holds
        the new goal through the brake instead of stitching it onto the path being canceled)."""
        with self._lock:
            tracked = self._action_goals.get(bytes(goal_handle.goal_id.uuid))
        if tracked is not None:
            tracked.handle.cancel()
        return CancelResponse.ACCEPT

    def _execute_admittance(self, goal_handle: Any) -> Any:
        from jtac.action import FollowJointTrajectoryWithAdmittance

        def convert(controller: Controller) -> ConvertedGoal:
            return core_goal_from_admittance_goal(
                goal_handle.request,
                controller_joint_names=controller.joint_names,
                ros_now_s=self._ros_now_s(),
                controller_now_s=controller.controller_time(),
            )

        return self._execute(
            goal_handle, FollowJointTrajectoryWithAdmittance, convert, "follow_joint_trajectory"
        )

    def _execute_moveit(self, goal_handle: Any) -> Any:
        from control_msgs.action import FollowJointTrajectory

        def convert(controller: Controller) -> ConvertedGoal:
            path, goal = self._default_tolerances()
            return core_goal_from_follow_joint_trajectory(
                goal_handle.request,
                controller_joint_names=controller.joint_names,
                default_path_tolerance_rad=path,
                default_goal_tolerance_rad=goal,
                ros_now_s=self._ros_now_s(),
                controller_now_s=controller.controller_time(),
            )

        return self._execute(goal_handle, FollowJointTrajectory, convert, "moveit/follow_joint_trajectory")

    def _execute(self, goal_handle: Any, action_type: Any, convert: Any, action: str) -> Any:
        uuid = bytes(goal_handle.goal_id.uuid).hex()[:8]
        label = f"goal {uuid} ({action})"
        controller = self._active_controller()
        if controller is None:  # deactivated between acceptance and execution
            return self._finish(
                goal_handle, action_type, label, ResultCode.INVALID_STATE, "the controller is not active"
            )
        try:
            converted = convert(controller)
        except GoalConversionError as error:
            return self._finish(goal_handle, action_type, label, error.code, error.message)
        except (ValueError, TypeError) as error:  # a field the core's goal types cannot hold
            return self._finish(goal_handle, action_type, label, ResultCode.INVALID_GOAL, str(error))
        try:
            tracked = self._submit(controller, converted, f"{action}, action goal {uuid}")
        except (ValueError, TypeError, RuntimeError) as error:
            return self._finish(goal_handle, action_type, label, ResultCode.INVALID_GOAL, str(error))
        uuid_key = bytes(goal_handle.goal_id.uuid)
        with self._lock:
            self._action_goals[uuid_key] = tracked
        if goal_handle.is_cancel_requested:  # canceled while it was being converted
            tracked.handle.cancel()
        self._follow(goal_handle, action_type, controller, tracked)
        with self._lock:
            self._action_goals.pop(uuid_key, None)
        result = tracked.handle.result(timeout=0.0)
        self._settle(tracked, result)
        code, message, was_canceled = result.code, result.message, result.canceled
        if was_canceled and tracked.stopped_by_topic and not goal_handle.is_cancel_requested:
            # Stopped by a command on ~/joint_trajectory: replaced by another command, as a newer goal
            # would have replaced it (the arm braked to rest).
            code = ResultCode.GOAL_ABORTED_DUE_TO_STITCHING
            message = "stopped by an empty message on ~/joint_trajectory; the arm braked to rest"
        return self._finish(goal_handle, action_type, label, code, message, was_canceled, logged=True)

    def _follow(self, goal_handle: Any, action_type: Any, controller: Controller, tracked: _Tracked) -> None:
        """Until the core's goal is done: passes a cancel on, logs a stop once, publishes feedback."""
        handle = tracked.handle
        period_s = self._feedback_period_s()
        canceled = False
        while not handle.done():
            if goal_handle.is_cancel_requested and not canceled:
                handle.cancel()  # a minimum-time stop; the result comes at rest
                canceled = True
            self._log_stop(tracked)
            state = controller.state
            if state is not None and goal_handle.is_active:
                feedback = action_type.Feedback()
                fill_feedback(
                    feedback,
                    state,
                    controller.joint_names,
                    self._node.get_clock().now().to_msg(),
                    time_from_start_s=self._trajectory_time.at(state),
                )
                goal_handle.publish_feedback(feedback)
            time.sleep(period_s)
        self._log_stop(tracked)

    def _finish(
        self,
        goal_handle: Any,
        action_type: Any,
        label: str,
        code: Any,
        message: str,
        canceled: bool = False,
        logged: bool = False,
    ) -> Any:
        code_value = int(code)
        if not logged:  # refused before the core saw it
            name = result_code_name(code_value)
            self._log.log("warning", f"{label}: refused: {name} ({code_value}): {message}")
        # control_msgs knows only 0 … -5: result_for_action maps the rest and keeps our text.
        result = result_for_action(action_type, code_value, message)
        if canceled and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif code_value == int(ResultCode.SUCCESSFUL) and not canceled:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    # ---------------------------------------------------------------------------------- goal log
    def _log_stop(self, tracked: _Tracked) -> None:
        """The reason of a stop, once, when it begins (the result follows at rest)."""
        if tracked.stop_logged:
            return
        for event in list(tracked.handle.events):
            if event.type != EventType.STOP_STARTED:
                continue
            tracked.stop_logged = True
            name = result_code_name(event.code)
            stop = f"stopping within {event.stop_duration_s:.3f} s"
            if event.detail == EventDetail.CANCELED:
                self._log.log("info", f"{tracked.label}: canceled, {stop}")
            else:
                self._log.log(
                    "warning", f"{tracked.label}: {stop}: {name} ({int(event.code)}): {event.message}"
                )
            return

    def _log_result(self, tracked: _Tracked, label: str, result: Any) -> None:
        """One line per result: success and cancel INFO, refusals (nothing moved) and a goal replaced
        by a newer one WARN/INFO, aborts after motion ERROR."""
        code = int(result.code)
        name = result_code_name(code)
        text = f"{label}: {{}} {name} ({code}): {result.message}"
        started = tracked.handle.start_time_s is not None
        details = [e.detail for e in tracked.handle.events]
        if result.canceled:
            by = "an empty message on ~/joint_trajectory" if tracked.stopped_by_topic else "request"
            self._log.log("info", f"{label}: canceled by {by}, at rest")
        elif code == int(ResultCode.SUCCESSFUL):
            self._log.log("info", text.format("succeeded:"))
        elif EventDetail.REPLACED_BY_STITCHING in details:
            self._log.log("info", text.format("replaced:"))
        elif not started or code in (int(ResultCode.INVALID_STATE), int(ResultCode.OLD_HEADER_TIMESTAMP)):
            self._log.log("warning", text.format("refused:" if not started else "ended:"))
        else:
            self._log.log("error", text.format("aborted:"))
