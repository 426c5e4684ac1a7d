"""Trajectory goals: JointTrajectory and control_msgs FollowJointTrajectory -> the core's goal.

``core_goal_from_joint_trajectory`` (JTC's command topic) and ``core_goal_from_follow_joint_trajectory``
(control_msgs FollowJointTrajectory, the path stock MoveIt uses) return a ``ConvertedGoal``: ``goal``,
the ``jtac_py._native.JtacGoal`` the Python API builds for the same motion (``jtac_py.goals``), and
``notes``, what is worth logging once (fields accepted but ignored). The node hands ``converted.goal``
to ``Controller.submit``. jtac's own action, with admittance, is in ``admittance_goals``.

Pure functions: only *structure* is handled here (field names, units, joint order, clocks, tolerance
sentinels); every *value* (sizes, signs, finiteness, unknown joints or frames) is checked by the
core, whose rejection names the field, the joint and the value and goes back to the client as the
result. GoalConversionError is raised only for what the core cannot express: a JointTolerance naming
a joint that is not in the trajectory, a multi-DOF trajectory, a header stamp before the controller
clock began.

Clocks: the controller runs on its own clock (robot time, ``ControllerState.time``). A zero
``header.stamp`` means "start when the controller takes the goal" (``start_time_s`` 0); any other
stamp is a ROS time and is mapped through the offset between the two clocks, read by the caller at
the same moment: ``start_time_s = controller_now_s + (stamp - ros_now_s)``.

Trajectory points: empty ``velocities`` / ``accelerations`` leave the field empty, so the core
interpolates from what the points carry (positions only: a C2 cubic spline from the current command
to rest, + velocities: cubic, + accelerations: quintic; docs/trajectory_engine.md). ``effort`` is
passed on and the core refuses the goal naming the point: this controller commands positions, and a
silently ignored effort would run a different motion than the one asked for.

Tolerances: a goal without any keeps the core's tolerance fields empty, and the core applies the
parameter defaults. The core takes a full per-joint vector or none, so a control_msgs JointTolerance
list that leaves joints out or gives ``position`` 0 ("the default") is completed here, in
``_joint_tolerances``, from the defaults the node reads from its parameters (one list in controller
joint order).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any

from jtac_py import _native, goals
from jtac_ros.result_codes import (
    INVALID_GOAL,
    INVALID_JOINTS,
    OLD_HEADER_TIMESTAMP,
    GoalConversionError,
)
from jtac_ros.ros_time import duration_to_s, seconds_between, time_to_s

__all__ = [
    "ConvertedGoal",
    "core_goal_from_follow_joint_trajectory",
    "core_goal_from_joint_trajectory",
    "floats",
    "trajectory_goal_from_msg",
]


def floats(values: Any) -> list[float]:
    return [float(v) for v in values]


def _start_time_s(trajectory: Any, ros_now: Any, controller_now_s: float) -> float:
    """header.stamp -> controller-clock start time; 0 = start when the controller takes the goal."""
    stamp = trajectory.header.stamp
    if stamp.sec == 0 and stamp.nanosec == 0:
        return 0.0
    start_s = float(controller_now_s) + seconds_between(stamp, ros_now)
    if start_s > 0.0:
        return start_s
    # The core reads start_time_s 0 as "now" and refuses a negative one as a malformed value, so a
    # stamp from before the controller clock's origin is answered here, in ROS time.
    duration_s = duration_to_s(trajectory.points[-1].time_from_start) if trajectory.points else 0.0
    stamp_s, now_s = time_to_s(stamp), time_to_s(ros_now)
    if start_s + duration_s < float(controller_now_s):
        raise GoalConversionError(
            OLD_HEADER_TIMESTAMP,
            f"trajectory.header.stamp = {stamp_s:.9f} s: the whole trajectory ended at "
            f"{stamp_s + duration_s:.9f} s, {now_s - stamp_s - duration_s:.9f} s before now ({now_s:.9f} s)",
        )
    raise GoalConversionError(
        INVALID_GOAL,
        f"trajectory.header.stamp = {stamp_s:.9f} s lies {now_s - stamp_s:.9f} s in the past, before the "
        f"controller clock began ({float(controller_now_s):.9f} s ago); send a zero stamp to start now",
    )


def trajectory_goal_from_msg(trajectory: Any, *, ros_now_s: Any, controller_now_s: float) -> Any:
    """trajectory_msgs/JointTrajectory -> the core's ``_native.TrajectoryGoal`` (no tolerances: the
    core's defaults unless the caller sets them).

    ros_now_s: ROS time now (seconds, or a builtin_interfaces/Time / rclpy Time, whose difference to
    the stamp is then exact); controller_now_s: the controller clock now (ControllerState.time), read
    at the same moment.
    Raises GoalConversionError for a nonzero stamp before the controller clock's origin.
    """
    points = [
        _native.GoalPoint(
            duration_to_s(point.time_from_start),
            floats(point.positions),
            # Empty = not given: the core interpolates from what the points carry.
            floats(point.velocities),
            floats(point.accelerations),
            # Refused by the core, which names the point (jtac commands positions).
            floats(point.effort),
        )
        for point in trajectory.points
    ]
    return _native.TrajectoryGoal(
        [str(name) for name in trajectory.joint_names],
        points,
        start_time_s=_start_time_s(trajectory, ros_now_s, controller_now_s),
    )


@dataclass(frozen=True)
class ConvertedGoal:
    """A ROS goal as the core's goal, and what the conversion noticed."""

    #: The ``_native.JtacGoal`` to submit (``Controller.submit``).
    goal: Any
    #: Fields accepted but ignored, worth logging once each.
    notes: tuple[str, ...] = ()

    @property
    def duration_s(self) -> float:
        """time_from_start of the last point [s]; 0 without points."""
        points = self.goal.trajectory.points
        return points[-1].time_from_start_s if points else 0.0


def core_goal_from_joint_trajectory(
    trajectory: Any, *, ros_now_s: Any, controller_now_s: float
) -> ConvertedGoal:
    """trajectory_msgs/JointTrajectory (JTC's command topic) -> ConvertedGoal: the trajectory alone,
    no tips, every tolerance the parameter default (applied by the core). Clocks as
    trajectory_goal_from_msg."""
    goal = trajectory_goal_from_msg(trajectory, ros_now_s=ros_now_s, controller_now_s=controller_now_s)
    return ConvertedGoal(goals.jtac_goal(goal, goal.joint_names))


def _defaults_by_joint(defaults: Any, controller_joint_names: Sequence[str], name: str) -> dict[str, float]:
    """A default tolerance per controller joint from a {joint: rad} mapping, a sequence in controller
    joint order, or one number for every joint."""
    if isinstance(defaults, Mapping):
        return {str(k): float(v) for k, v in defaults.items()}
    if isinstance(defaults, numbers.Real):
        return dict.fromkeys(controller_joint_names, float(defaults))
    values = floats(defaults)
    if len(values) != len(controller_joint_names):
        raise ValueError(
            f"{name} has {len(values)} values, expected {len(controller_joint_names)} "
            "(one per controller joint)"
        )
    return dict(zip(controller_joint_names, values, strict=True))


def _joint_tolerances(
    tolerances: Sequence[Any],
    field: str,
    joint_names: Sequence[str],
    defaults: Mapping[str, float],
    notes: MutableSequence[str],
) -> list[float] | None:
    """JointTolerance[] -> position tolerance per joint in trajectory joint order, or None (none given).

    position 0 -> the joint's default, -1 -> no limit (inf), anything else as is (the core refuses a
    value that is not > 0, naming the joint). velocity / acceleration: not checked by this controller.
    """
    if not len(tolerances):
        return None
    # A joint missing from `defaults` is not a controller joint: the core refuses the trajectory's
    # joint names (INVALID_JOINTS) before it reads any tolerance, so the NaN never matters.
    values = {name: defaults.get(name, math.nan) for name in joint_names}
    for i, tol in enumerate(tolerances):
        if tol.name not in values:
            raise GoalConversionError(
                INVALID_JOINTS,
                f"{field}[{i}].name = '{tol.name}' is not a joint of the trajectory "
                f"(trajectory.joint_names: {list(joint_names)})",
            )
        position = float(tol.position)
        if position == 0.0:
            values[tol.name] = defaults.get(tol.name, math.nan)
        elif position == -1.0:
            values[tol.name] = math.inf
        else:
            values[tol.name] = position
        for component in ("velocity", "acceleration"):
            value = float(getattr(tol, component))
            if value not in (0.0, -1.0):
                notes.append(
                    f"{field}[{i}].{component} = {value} (joint '{tol.name}') is ignored: this controller "
                    "checks position tolerances only"
                )
    return [values[name] for name in joint_names]


def core_goal_from_follow_joint_trajectory(
    goal_msg: Any,
    *,
    controller_joint_names: Sequence[str],
    default_path_tolerance_rad: Any,
    default_goal_tolerance_rad: Any,
    ros_now_s: Any,
    controller_now_s: float,
) -> ConvertedGoal:
    """control_msgs FollowJointTrajectory.Goal -> ConvertedGoal (no tips: plain trajectory tracking).

    default_*_tolerance_rad: the controller's effective per-joint defaults (a sequence in
    controller_joint_names order, one number, or {joint: rad}), used for a JointTolerance whose
    position is 0 and for the joints a non-empty tolerance list leaves out. No JointTolerance at all
    leaves the goal's field empty (the core applies the same defaults).

    - JointTolerance.position: 0 = default, -1 = no limit, > 0 = the tolerance [rad]; other values go
      to the core, which refuses them naming the joint. A name that is not a trajectory joint ->
      GoalConversionError(INVALID_JOINTS); a joint named twice takes the last entry.
      velocity / acceleration and component_*_tolerance are not supported: ignored, with a note.
    - goal_time_tolerance: the settling time [s]; 0 = default_goal_time_tolerance.
    - multi_dof_trajectory with joints or points -> GoalConversionError(INVALID_GOAL).
    """
    multi_dof = goal_msg.multi_dof_trajectory
    if len(multi_dof.joint_names) or len(multi_dof.points):
        raise GoalConversionError(
            INVALID_GOAL,
            f"multi_dof_trajectory is not supported (joint_names {list(multi_dof.joint_names)}, "
            f"{len(multi_dof.points)} points); send joint trajectories only",
        )
    notes: list[str] = []
    trajectory = trajectory_goal_from_msg(
        goal_msg.trajectory, ros_now_s=ros_now_s, controller_now_s=controller_now_s
    )
    names = trajectory.joint_names
    for field, attr, defaults in (
        ("path_tolerance", "path_tolerance_rad", default_path_tolerance_rad),
        ("goal_tolerance", "goal_tolerance_rad", default_goal_tolerance_rad),
    ):
        by_joint = _defaults_by_joint(defaults, controller_joint_names, f"default_{field}_rad")
        values = _joint_tolerances(getattr(goal_msg, field), field, names, by_joint, notes)
        if values is not None:
            setattr(trajectory, attr, values)
    for field in ("component_path_tolerance", "component_goal_tolerance"):
        if len(getattr(goal_msg, field)):
            notes.append(f"{field} is ignored (multi-DOF joints are not supported)")
    trajectory.goal_time_tolerance_s = duration_to_s(goal_msg.goal_time_tolerance)
    return ConvertedGoal(goals.jtac_goal(trajectory, names), tuple(notes))
