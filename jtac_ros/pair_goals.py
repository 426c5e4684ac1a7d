"""The pair node's goal servers: control_msgs ``FollowJointTrajectory`` for the whole group of arms
(MoveIt's controller of the pair) and one per arm.

- ``~/follow_joint_trajectory``: a goal over the group's joints (``"<arm>_<joint>"``) is split per
  arm and started on every arm it names at one group instant (``ArmGroup.follow``, the trajectories'
  time 0 on every arm at once). A goal naming every joint of some arms only moves those arms; the
  others keep what they do. A goal naming some but not all joints of an arm, or a joint of no arm,
  is refused (INVALID_JOINTS, naming them) before any arm moves. One result: SUCCESSFUL when every
  arm succeeded; otherwise the first failing arm's code (in the group's order) with every arm's
  message. When one arm's part fails while the others still run, the others are canceled (they
  brake to rest): one goal, one outcome, as a 14-joint JTC would abort on any joint. A part replaced
  by a newer goal (GOAL_ABORTED_DUE_TO_STITCHING after it started) is not a failure of that kind: a
  newer pair goal replaces every part, a goal for one arm leaves the other arm's part running.
  ``header.stamp``: zero = start together after ``ArmGroup``'s lead (``DEFAULT_LEAD_S``); ahead of
  now = start together then; in the past = refused (the arms could not start it at one instant).
- ``~/<arm>/follow_joint_trajectory``: a goal for that arm alone, in the group's joint names
  (``left_fr3_joint1`` ...), handed to that arm's Controller (as the single-arm node does).

Goals are converted by ``trajectory_goals`` (tolerances, stamps, effort refused by the core) and
split here; every value is checked by each arm's core. A goal is accepted while the group runs;
an accepted goal always gets one result.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node

from jtac_py import _native, goals
from jtac_py.arm_group import ArmGroup
from jtac_py.parameters import default_joint_tolerances
from jtac_ros.action_qos import action_qos
from jtac_ros.goal_log import GoalLog
from jtac_ros.result_codes import (
    INVALID_GOAL,
    INVALID_JOINTS,
    GoalConversionError,
    result_code_name,
    result_for_action,
)
from jtac_ros.state_messages import fill_feedback
from jtac_ros.trajectory_goals import core_goal_from_follow_joint_trajectory
from jtac_ros.trajectory_time import TrajectoryTime

__all__ = ["ARM_ACTION", "PAIR_ACTION", "PairGoalServers", "joined_state", "split_trajectory"]

PAIR_ACTION = "~/follow_joint_trajectory"
#: An arm's own action; format with arm=<its name>.
ARM_ACTION = "~/{arm}/follow_joint_trajectory"

ResultCode = _native.ResultCode
_POINT_FIELDS = ("positions_rad", "velocities_rad_s", "accelerations_rad_s2", "effort")
_STATE_FIELDS = ("q", "dq", "q_ref", "dq_ref", "error")


# ====================================================================================== splitting


def _columns_by_arm(
    names: Sequence[str], arm_joints: Mapping[str, Sequence[str]]
) -> dict[str, tuple[list[int], list[str]]]:
    """{arm: (columns of `names`, the arm's own joint names)} for every arm `names` touches;
    GoalConversionError (INVALID_JOINTS) for a joint of no arm or an arm named in part."""
    owner = {f"{arm}_{j}": (arm, j) for arm, joints in arm_joints.items() for j in joints}
    unknown = [n for n in names if n not in owner]
    if unknown or not names:
        raise GoalConversionError(
            INVALID_JOINTS,
            f"trajectory.joint_names: {unknown or 'none'} are not joints of the arms here; "
            f"the joints are {list(owner)}",
        )
    by_arm: dict[str, tuple[list[int], list[str]]] = {}
    for column, name in enumerate(names):
        arm, joint = owner[name]
        by_arm.setdefault(arm, ([], []))
        by_arm[arm][0].append(column)
        by_arm[arm][1].append(joint)
    for arm, (_, joints) in by_arm.items():
        missing = [f"{arm}_{j}" for j in arm_joints[arm] if j not in joints]
        if missing:
            raise GoalConversionError(
                INVALID_JOINTS,
                f"trajectory.joint_names names part of arm '{arm}' only: {missing} are missing "
                "(a goal moves whole arms: name all of an arm's joints, or none)",
            )
    return dict(sorted(by_arm.items(), key=lambda item: list(arm_joints).index(item[0])))


def _pick(values: Sequence[float], columns: Sequence[int], where: str, width: int) -> list[float]:
    """values[columns]; empty stays empty (not given); GoalConversionError when not one per joint."""
    if not len(values):
        return []
    if len(values) != width:
        raise GoalConversionError(
            INVALID_GOAL, f"{where} has {len(values)} values, expected {width} (one per joint_names)"
        )
    return [float(values[c]) for c in columns]


def _arm_part(trajectory: Any, columns: Sequence[int], joints: Sequence[str]) -> Any:
    width = len(trajectory.joint_names)
    points = [
        _native.GoalPoint(
            point.time_from_start_s,
            *(_pick(getattr(point, f), columns, f"trajectory.points[{k}].{f}", width) for f in _POINT_FIELDS),
        )
        for k, point in enumerate(trajectory.points)
    ]
    part = _native.TrajectoryGoal(list(joints), points, start_time_s=trajectory.start_time_s)
    part.path_tolerance_rad = _pick(trajectory.path_tolerance_rad, columns, "path_tolerance", width)
    part.goal_tolerance_rad = _pick(trajectory.goal_tolerance_rad, columns, "goal_tolerance", width)
    part.goal_time_tolerance_s = trajectory.goal_time_tolerance_s
    return part


def split_trajectory(trajectory: Any, arm_joints: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """A ``_native.TrajectoryGoal`` in the group's joint names (``"<arm>_<joint>"``) -> {arm: its
    TrajectoryGoal in the arm's own joint names} for the arms it names (points, tolerances, start
    time and settling time carried over). arm_joints: {arm: its controller's joint names}, in the
    group's order. GoalConversionError for a joint of no arm, an arm named in part (INVALID_JOINTS)
    or a point or tolerance without one value per joint (INVALID_GOAL)."""
    by_arm = _columns_by_arm(list(trajectory.joint_names), arm_joints)
    return {arm: _arm_part(trajectory, columns, joints) for arm, (columns, joints) in by_arm.items()}


def _duration_s(trajectory: Any) -> float:
    """The last point's time [s] (0 without points)."""
    points = trajectory.points
    return float(points[-1].time_from_start_s) if points else 0.0


def _ended_badly(handle: Any) -> bool:
    """An arm's part ended without success, other than replaced by a newer goal after it started
    (a newer pair goal replaces every arm's part, and a goal for one arm leaves the other's running:
    the others are not to be canceled then)."""
    if not handle.done():
        return False
    result = handle.result(timeout=0.0)
    replaced = result.code == ResultCode.GOAL_ABORTED_DUE_TO_STITCHING and result.start_time_s is not None
    return not result.ok and not replaced


def joined_state(states: Sequence[Any]) -> Any:
    """The arms' ControllerStates side by side (q, dq, q_ref, dq_ref, error concatenated in the
    given order), for the messages over the group's joints; None while an arm has no state yet."""
    if any(s is None for s in states):
        return None
    return SimpleNamespace(
        **{f: np.concatenate([np.asarray(getattr(s, f), float) for s in states]) for f in _STATE_FIELDS}
    )


# ====================================================================================== the servers


class _Running:
    """A goal handed to the arms: what cancels it, the arms it moves, their goal handles and the
    last point's time of each arm's trajectory [s]."""

    def __init__(
        self, cancel: Callable[[], None], handles: Mapping[str, Any], parts: Mapping[str, Any]
    ) -> None:
        self.cancel = cancel
        self.handles = dict(handles)
        self.durations_s = {arm: _duration_s(part) for arm, part in parts.items()}

    def done(self) -> bool:
        return all(h.done() for h in self.handles.values())


class PairGoalServers:
    """The group's action and one per arm (module docstring).

    node: the ROS node; group(): the ArmGroup while it runs, else None (goals rejected);
    feedback_period_s(): the feedback period [s]; log: the node's goal log."""

    def __init__(
        self,
        node: Node,
        *,
        group: Callable[[], ArmGroup | None],
        arm_names: Sequence[str],
        feedback_period_s: Callable[[], float],
        log: GoalLog,
    ) -> None:
        self._node = node
        self._group = group
        self._arm_names = list(arm_names)
        self._feedback_period_s = feedback_period_s
        self._log = log
        self._lock = threading.Lock()
        self._running: dict[bytes, _Running] = {}  # action goal UUID -> its goals in the arms
        self._trajectory_times = {arm: TrajectoryTime() for arm in self._arm_names}

    def create_action_servers(self, callback_group: Any) -> list[ActionServer]:
        """The group's action and each arm's; the node destroys them."""
        servers = [self._server(PAIR_ACTION, self._execute_group, callback_group)]
        for arm in self._arm_names:
            execute = lambda goal_handle, arm=arm: self._execute_arm(goal_handle, arm)  # noqa: E731
            servers.append(self._server(ARM_ACTION.format(arm=arm), execute, callback_group))
        return servers

    def _server(self, name: str, execute: Callable[[Any], Any], callback_group: Any) -> ActionServer:
        return ActionServer(
            self._node,
            FollowJointTrajectory,
            name,
            execute_callback=execute,
            goal_callback=lambda _goal: self._on_goal_request(name),
            cancel_callback=self._on_cancel_request,
            callback_group=callback_group,
            **action_qos(),
        )

    def _on_goal_request(self, action: str) -> GoalResponse:
        if self._group() is not None:
            return GoalResponse.ACCEPT
        self._log.log("warning", f"goal on {action} rejected: the arms are not running")
        return GoalResponse.REJECT

    def _on_cancel_request(self, goal_handle: Any) -> CancelResponse:
        """Cancels at once (MoveIt sends its replanned goal right after the cancel)."""
        with self._lock:
            running = self._running.get(bytes(goal_handle.goal_id.uuid))
        if running is not None:
            running.cancel()
        return CancelResponse.ACCEPT

    # ---------------------------------------------------------------------------------- conversion
    @staticmethod
    def _default_tolerances(
        group: ArmGroup, arms: Sequence[str]
    ) -> tuple[dict[str, float], dict[str, float]]:
        """{group joint: default path tolerance}, {...: goal tolerance} [rad] of `arms`."""
        path: dict[str, float] = {}
        goal: dict[str, float] = {}
        for arm in arms:
            c = group.controllers[arm]
            arm_path, arm_goal = default_joint_tolerances(c.values)
            path.update({f"{arm}_{j}": float(v) for j, v in zip(c.joint_names, arm_path, strict=True)})
            goal.update({f"{arm}_{j}": float(v) for j, v in zip(c.joint_names, arm_goal, strict=True)})
        return path, goal

    def _split(
        self, group: ArmGroup, request: Any, arms: Sequence[str], now_s: float
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        """The request as {arm: TrajectoryGoal} for `arms` (start times on the clock of `now_s`), and
        the conversion's notes."""
        path, goal = self._default_tolerances(group, arms)
        converted = core_goal_from_follow_joint_trajectory(
            request,
            controller_joint_names=list(path),
            default_path_tolerance_rad=path,
            default_goal_tolerance_rad=goal,
            ros_now_s=self._node.get_clock().now(),  # a Time: stamp differences exact
            controller_now_s=now_s,
        )
        arm_joints = {arm: group.controllers[arm].joint_names for arm in arms}
        return split_trajectory(converted.goal.trajectory, arm_joints), converted.notes

    # ---------------------------------------------------------------------------------- execution
    def _execute_group(self, goal_handle: Any) -> Any:
        label = f"goal {bytes(goal_handle.goal_id.uuid).hex()[:8]} (follow_joint_trajectory)"
        group = self._group()
        if group is None or group.fault is not None:
            why = (
                "the arms are not running" if group is None else f"arm '{group.fault.arm}' stopped by itself"
            )
            return self._refuse(goal_handle, label, ResultCode.INVALID_STATE, why)

        def start() -> tuple[_Running, Sequence[str]]:
            parts, notes = self._split(group, goal_handle.request, group.names, group.now())
            handle = self._start_group(group, parts)
            return _Running(handle.cancel, handle.handles, parts), notes

        return self._start_and_run(goal_handle, label, group, start)

    @staticmethod
    def _start_group(group: ArmGroup, parts: dict[str, Any]) -> Any:
        """ArmGroup.follow for the named arms: at the stamp's group time when it lies ahead, else
        after the group's lead. A stamp in the past cannot start every arm at once: refused."""
        start_s = {p.start_time_s for p in parts.values()}.pop()
        start_at_s = None
        if start_s != 0.0:
            if start_s <= group.now():
                raise GoalConversionError(
                    INVALID_GOAL,
                    "trajectory.header.stamp lies in the past: the arms cannot start it together; "
                    "send a zero stamp (start now) or one ahead of now",
                )
            start_at_s = start_s
        for part in parts.values():
            part.start_time_s = 0.0  # ArmGroup.follow sets each arm's start on its own clock
        return group.follow(parts, start_at_s=start_at_s, wait=False)

    def _execute_arm(self, goal_handle: Any, arm: str) -> Any:
        label = f"goal {bytes(goal_handle.goal_id.uuid).hex()[:8]} ({arm}/follow_joint_trajectory)"
        group = self._group()
        if group is None:
            return self._refuse(goal_handle, label, ResultCode.INVALID_STATE, "the arms are not running")
        controller = group.controllers[arm]

        def start() -> tuple[_Running, Sequence[str]]:
            parts, notes = self._split(group, goal_handle.request, [arm], controller.controller_time())
            handle = controller.submit(goals.jtac_goal(parts[arm], parts[arm].joint_names))
            return _Running(handle.cancel, {arm: handle}, parts), notes

        return self._start_and_run(goal_handle, label, group, start)

    def _start_and_run(
        self,
        goal_handle: Any,
        label: str,
        group: ArmGroup,
        start: Callable[[], tuple[_Running, Sequence[str]]],
    ) -> Any:
        """Starts the goal with `start()` (a conversion refused with the code it names, any other bad
        input as INVALID_GOAL), logs its notes and follows it to its result."""
        try:
            running, notes = start()
        except GoalConversionError as error:
            return self._refuse(goal_handle, label, error.code, error.message)
        except (ValueError, TypeError, RuntimeError) as error:
            return self._refuse(goal_handle, label, ResultCode.INVALID_GOAL, str(error))
        for note in notes:
            self._log.note(note)
        return self._run(goal_handle, label, group, running)

    def _run(self, goal_handle: Any, label: str, group: ArmGroup, running: _Running) -> Any:
        """Follows the arms' goals to their results and answers the action."""
        key = bytes(goal_handle.goal_id.uuid)
        with self._lock:
            self._running[key] = running
        for arm, handle in running.handles.items():
            if handle.goal_id:
                self._trajectory_times[arm].register(handle.goal_id, handle, running.durations_s[arm])
        if goal_handle.is_cancel_requested:
            running.cancel()
        self._follow(goal_handle, group, running)
        with self._lock:
            self._running.pop(key, None)
        results = {arm: h.result(timeout=0.0) for arm, h in running.handles.items()}
        for arm, handle in running.handles.items():
            self._trajectory_times[arm].forget(handle.goal_id)
        return self._answer(goal_handle, label, results)

    def _follow(self, goal_handle: Any, group: ArmGroup, running: _Running) -> None:
        """Until every arm's goal is done: passes a cancel on, cancels the rest when one arm fails,
        publishes feedback over the goal's arms."""
        canceled = False
        while not running.done():
            failed = any(_ended_badly(h) for h in running.handles.values())
            if (goal_handle.is_cancel_requested or failed) and not canceled:
                running.cancel()  # every arm stops in minimum time; the results come at rest
                canceled = True
            self._publish_feedback(goal_handle, group, list(running.handles))
            time.sleep(self._feedback_period_s())

    def _publish_feedback(self, goal_handle: Any, group: ArmGroup, arms: Sequence[str]) -> None:
        states = [group.controllers[arm].state for arm in arms]
        state = joined_state(states)
        if state is None or not goal_handle.is_active:
            return
        names = [f"{arm}_{j}" for arm in arms for j in group.controllers[arm].joint_names]
        feedback = FollowJointTrajectory.Feedback()
        tau_s = self._trajectory_times[arms[0]].at(states[0])
        fill_feedback(feedback, state, names, self._node.get_clock().now().to_msg(), time_from_start_s=tau_s)
        goal_handle.publish_feedback(feedback)

    # ---------------------------------------------------------------------------------- results
    def _answer(self, goal_handle: Any, label: str, results: Mapping[str, Any]) -> Any:
        """One result for the arms' results: SUCCESSFUL when all succeeded; else the first failing
        arm's code; the message names every arm's outcome."""
        message = "; ".join(
            f"{arm}: {'CANCELED' if r.canceled else result_code_name(r.code)}: {r.message}"
            for arm, r in results.items()
        )
        failed = [r for r in results.values() if not r.ok and not r.canceled]
        if goal_handle.is_cancel_requested and not failed:
            self._log.log("info", f"{label}: canceled, every arm at rest")
            goal_handle.canceled()
            return result_for_action(FollowJointTrajectory, ResultCode.SUCCESSFUL, message)
        if not failed and all(r.ok for r in results.values()):
            self._log.log("info", f"{label}: succeeded: {message}")
            goal_handle.succeed()
            return result_for_action(FollowJointTrajectory, ResultCode.SUCCESSFUL, message)
        code = failed[0].code if failed else ResultCode.INVALID_GOAL
        self._log.log("error", f"{label}: aborted: {result_code_name(code)} ({int(code)}): {message}")
        goal_handle.abort()
        return result_for_action(FollowJointTrajectory, code, message)

    def _refuse(self, goal_handle: Any, label: str, code: Any, message: str) -> Any:
        self._log.log("warning", f"{label}: refused: {result_code_name(code)} ({int(code)}): {message}")
        goal_handle.abort()
        return result_for_action(FollowJointTrajectory, code, message)
