"""Message mapping of the ROS adapter: ROS goals -> the core's typed goals, controller state -> ROS messages.

Pure functions: no node, no spinning, no algorithm. Only *structure* is handled here (field names,
units, joint order, clocks, tolerance sentinels); every *value* (sizes, signs, finiteness, unknown
joints or frames) is checked by the core, whose rejection names the field, the joint and the value,
and is sent back to the client as the result (INVALID_GOAL / INVALID_JOINTS / ...). The few errors
raised here (GoalConversionError) are the ones the core cannot express: a JointTolerance naming a
joint that is not in the trajectory, a multi-DOF trajectory, a header stamp before the controller
clock began.

Length: over 600 lines because it is the adapter's one message mapping (goals, result codes, state
messages), each mapping with its reason; the goal and the state halves share the time helpers.

Goals
-----
``core_goal_from_admittance_goal`` (jtac FollowJointTrajectoryWithAdmittance) and
``core_goal_from_follow_joint_trajectory`` (control_msgs FollowJointTrajectory, the path stock MoveIt
uses) both return a ``ConvertedGoal``: ``goal``, the ``jtac_py._native.JtacGoal`` that the Python API
builds for the same motion (``jtac_py.goals``, which holds the admittance defaults: an
AdmittanceParameters without damping gets the critical damping 2·sqrt(M·K), as ``follow()`` gives),
and ``notes``, what is worth logging once (fields accepted but ignored). The node hands
``converted.goal`` to ``Controller.submit``.

Tolerances: a goal without any keeps the core's tolerance fields empty, and the core applies the
parameter defaults. The core takes a full per-joint vector or none, so a control_msgs JointTolerance
list that leaves joints out or gives ``position`` 0 ("the default") is completed here, in
``_joint_tolerances``, from the defaults the node reads from its parameters (one list in controller
joint order).

Clocks: the controller runs on its own clock (robot time, ``ControllerState.time``). A zero
``header.stamp`` means "start when the controller takes the goal" (``start_time_s`` 0); any other
stamp is a ROS time and is mapped through the offset between the two clocks, read by the caller at
the same moment: ``start_time_s = controller_now_s + (stamp - ros_now_s)``.

Chunks: while the node streams, ``chunk_from_msg`` reads a JointTrajectory as a policy's action chunk
(the arguments of ``Stream.send_chunk``, in the controller's joint order); the stamp is mapped by the
node (``clock_offset``), not here.

Trajectory points: empty ``velocities`` / ``accelerations`` leave the key out, so the core
interpolates from what the points carry (positions only: a C2 cubic spline from the current command
to rest, + velocities: cubic, + accelerations: quintic; docs/trajectory_engine.md). ``effort`` is
passed on and the core refuses the goal naming the point: this controller commands positions, and a
silently ignored effort would run a different motion than the one asked for.

Result codes
------------
Our action has the codes 0..-9 and passes them through unchanged. control_msgs/FollowJointTrajectory
only defines 0..-5. Stock MoveIt (moveit_simple_controller_manager) decides from the action *status*
alone (SUCCEEDED / ABORTED / CANCELED -> ExecutionStatus); the error code only goes into its log line
``failed with error <NAME>: <error_string>``, and a code outside 0..-5 prints as "unknown error". So
each jtac-only code maps onto the control_msgs code a MoveIt user reads right, and the original name
and number lead the error_string:

=====================================  ============================  =====================================
jtac code                              control_msgs code             why
=====================================  ============================  =====================================
-6 ADMITTANCE_ERROR                    -4 PATH_TOLERANCE_VIOLATED    aborted mid-path by a run-time check
                                                                     (non-finite wrench/admittance); the
                                                                     arm braked off the path
-7 FORCE_TORQUE_THRESHOLD_EXCEEDED     -4 PATH_TOLERANCE_VIOLATED    aborted mid-path (contact); braked
-8 GOAL_ABORTED_DUE_TO_STITCHING       -1 INVALID_GOAL               what ros2_controllers' JTC sends for a
                                                                     goal replaced by a newer one ("Current
                                                                     goal cancelled due to new incoming
                                                                     action."); also a goal refused while
                                                                     settling
-9 INVALID_STATE                       -1 INVALID_GOAL               what the JTC sends for a goal ended by
                                                                     deactivation ("... during deactivate
                                                                     transition.")
=====================================  ============================  =====================================

Codes 0..-5 pass through unchanged, with the core's message as it is. ``result_for_action`` builds
the Result message (the two actions name the text field differently: ``error_message`` in ours,
``error_string`` in control_msgs).

State
-----
``fill_feedback``, ``controller_state_msg``, ``joint_state_msg`` and ``wrench_stamped`` build the
published messages from a ``jtac_py.controller.ControllerState`` (joint arrays in controller joint
order; the messages carry ``joint_names`` in that order, like ros2_controllers' JTC). desired /
reference = the trajectory sample without the admittance offset (q_ref, dq_ref), actual / feedback =
measured (q, dq), output = the command to the hardware (q_cmd, dq_cmd), error = desired - actual
(positions from the core's error, the shortest angle for continuous joints).
"""

from __future__ import annotations

import array
import math
import numbers
from collections.abc import Mapping, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from builtin_interfaces.msg import Duration, Time
from control_msgs.msg import JointTrajectoryControllerState
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectoryPoint

from jtac_py import _native, goals

__all__ = [
    "RESULT_CODE_NAMES",
    "ConvertedGoal",
    "GoalConversionError",
    "chunk_from_msg",
    "controller_state_msg",
    "core_goal_from_admittance_goal",
    "core_goal_from_follow_joint_trajectory",
    "core_goal_from_joint_trajectory",
    "duration_to_s",
    "fill_feedback",
    "is_default_admittance",
    "joint_state_msg",
    "pose_to_core",
    "result_code_for_action",
    "result_code_name",
    "result_for_action",
    "s_to_duration",
    "s_to_time",
    "time_to_s",
    "tip_from_admittance_parameters",
    "trajectory_goal_from_msg",
    "wrench_stamped",
]

# ================================================================================ result codes

#: The result codes' names (the action constants; the same numbers as jtac_py._native.ResultCode).
RESULT_CODE_NAMES: dict[int, str] = {
    0: "SUCCESSFUL",
    -1: "INVALID_GOAL",
    -2: "INVALID_JOINTS",
    -3: "OLD_HEADER_TIMESTAMP",
    -4: "PATH_TOLERANCE_VIOLATED",
    -5: "GOAL_TOLERANCE_VIOLATED",
    -6: "ADMITTANCE_ERROR",
    -7: "FORCE_TORQUE_THRESHOLD_EXCEEDED",
    -8: "GOAL_ABORTED_DUE_TO_STITCHING",
    -9: "INVALID_STATE",
}

SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4

#: jtac-only code -> the code of an action that lacks it (see the table in the module docstring).
_FALLBACK_CODES: dict[int, int] = {
    -6: PATH_TOLERANCE_VIOLATED,
    -7: PATH_TOLERANCE_VIOLATED,
    -8: INVALID_GOAL,
    -9: INVALID_GOAL,
}


def result_code_name(code: Any) -> str:
    """The constant's name of a result code (an int or a _native.ResultCode); 'UNKNOWN' otherwise."""
    return RESULT_CODE_NAMES.get(int(code), "UNKNOWN")


def _action_defines(action: Any, code: int) -> bool:
    name = RESULT_CODE_NAMES.get(code)
    return name is not None and getattr(action.Result, name, None) == code


def result_code_for_action(code: Any, action: Any) -> int:
    """The error_code to send for core result `code` on `action` (the action type, e.g.
    ``control_msgs.action.FollowJointTrajectory``): unchanged where the action defines the code,
    otherwise the fallback of the module docstring's table (an unknown code -> INVALID_GOAL)."""
    value = int(code)
    if _action_defines(action, value):
        return value
    return _FALLBACK_CODES.get(value, INVALID_GOAL)


def result_for_action(action: Any, code: Any, message: str) -> Any:
    """``action.Result`` with error_code (result_code_for_action) and the text field the action has
    (error_message or error_string). A remapped code keeps its name and number in front of the text:
    ``"FORCE_TORQUE_THRESHOLD_EXCEEDED (-7): <core message>"``."""
    value = int(code)
    mapped = result_code_for_action(value, action)
    text = message if mapped == value else f"{result_code_name(value)} ({value}): {message}"
    result = action.Result()
    result.error_code = mapped
    fields = action.Result.get_fields_and_field_types()
    if "error_message" in fields:
        result.error_message = text
    else:
        result.error_string = text
    return result


class GoalConversionError(Exception):
    """A goal the adapter cannot express as a core goal: send it back as a result with `code`.

    code: the result code (INVALID_GOAL -1, INVALID_JOINTS -2, OLD_HEADER_TIMESTAMP -3);
    message: names the field, the joint and the value.
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{result_code_name(code)} ({code}): {message}")
        self.code = int(code)
        self.message = message


# ================================================================================ time


def _as_msg(stamp: Any) -> Any:
    """An rclpy Time/Duration as its message; anything else as is."""
    return stamp.to_msg() if hasattr(stamp, "to_msg") else stamp


def time_to_s(stamp: Any) -> float:
    """builtin_interfaces/Time (or an rclpy Time, or anything with sec and nanosec) -> seconds; a number
    is returned as a float."""
    if isinstance(stamp, numbers.Real):
        return float(stamp)
    stamp = _as_msg(stamp)
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


def duration_to_s(duration: Any) -> float:
    """builtin_interfaces/Duration -> seconds (sec may be negative; nanosec is always added)."""
    return time_to_s(duration)


def _sec_nanosec(seconds: float) -> tuple[int, int]:
    if not math.isfinite(seconds):
        raise ValueError(f"cannot represent {seconds!r} s as sec/nanosec")
    sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
    return int(sec), int(nanosec)


def s_to_duration(seconds: float) -> Duration:
    """Seconds -> builtin_interfaces/Duration (nanosec in [0, 1e9), rounded to the nanosecond)."""
    sec, nanosec = _sec_nanosec(float(seconds))
    return Duration(sec=sec, nanosec=nanosec)


def s_to_time(seconds: float) -> Time:
    """Seconds -> builtin_interfaces/Time (nanosec in [0, 1e9), rounded to the nanosecond)."""
    sec, nanosec = _sec_nanosec(float(seconds))
    return Time(sec=sec, nanosec=nanosec)


def _as_time(stamp: Any) -> Time:
    """A header stamp from a Time message, an rclpy Time or seconds."""
    return s_to_time(stamp) if isinstance(stamp, numbers.Real) else _as_msg(stamp)


def _seconds_between(later: Any, earlier: Any) -> float:
    """later - earlier [s]; exact in integers when both are times (not plain seconds)."""
    later, earlier = _as_msg(later), _as_msg(earlier)
    if hasattr(later, "sec") and hasattr(earlier, "sec"):
        return (later.sec - earlier.sec) + (int(later.nanosec) - int(earlier.nanosec)) * 1e-9
    return time_to_s(later) - time_to_s(earlier)


# ================================================================================ trajectories


def _floats(values: Any) -> list[float]:
    return [float(v) for v in values]


def _start_time_s(trajectory: Any, ros_now: Any, controller_now_s: float) -> float:
    """header.stamp -> controller-clock start time; 0 = start when the controller takes the goal."""
    stamp = trajectory.header.stamp
    if stamp.sec == 0 and stamp.nanosec == 0:
        return 0.0
    start_s = float(controller_now_s) + _seconds_between(stamp, ros_now)
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
            _floats(point.positions),
            # Empty = not given: the core interpolates from what the points carry.
            _floats(point.velocities),
            _floats(point.accelerations),
            # Refused by the core, which names the point (jtac commands positions).
            _floats(point.effort),
        )
        for point in trajectory.points
    ]
    return _native.TrajectoryGoal(
        [str(name) for name in trajectory.joint_names],
        points,
        start_time_s=_start_time_s(trajectory, ros_now_s, controller_now_s),
    )


def chunk_from_msg(trajectory: Any, controller_joint_names: Sequence[str]) -> dict[str, Any]:
    """trajectory_msgs/JointTrajectory read as an action chunk (the node's streaming mode) -> the
    arguments of ``Stream.send_chunk`` in the controller's joint order::

        {"times_s": (H,) [s] = each point's time_from_start, relative to the observation,
         "positions_rad": (H, n), "velocities_rad_s": (H, n) or None, "notes": [str, ...]}

    Only structure is checked here (joint names, sizes, which fields are present); times and values
    (finite, strictly increasing, >= 0) are checked by ``Stream.send_chunk``, whose message names the
    point, the joint and the value. Raises GoalConversionError naming the field and the joint.
    """
    names = [str(name) for name in trajectory.joint_names]
    known = list(controller_joint_names)
    for k, name in enumerate(names):
        if name not in known:
            raise GoalConversionError(
                INVALID_JOINTS, f"joint_names[{k}] = '{name}' is not a joint of this controller: {known}"
            )
        if names.index(name) != k:
            raise GoalConversionError(INVALID_JOINTS, f"joint_names[{k}] = '{name}' is named twice")
    missing = [name for name in known if name not in names]
    if missing:
        # A chunk replaces the whole future: a joint it leaves out would have no target to follow.
        raise GoalConversionError(
            INVALID_JOINTS, f"joint_names lacks {missing}: a chunk must give every joint of the controller"
        )
    order = [names.index(name) for name in known]
    n, points = len(names), trajectory.points
    with_velocities = bool(points) and len(points[0].velocities) > 0
    times = np.empty(len(points))
    q = np.empty((len(points), n))
    dq = np.empty((len(points), n)) if with_velocities else None
    notes: list[str] = []
    for k, point in enumerate(points):
        if len(point.positions) != n:
            raise GoalConversionError(
                INVALID_GOAL, f"points[{k}].positions has {len(point.positions)} values for {n} joints"
            )
        if len(point.velocities) != (n if with_velocities else 0):
            raise GoalConversionError(
                INVALID_GOAL,
                f"points[{k}].velocities has {len(point.velocities)} values; a chunk gives velocities "
                f"for every point ({n}) or for none",
            )
        if len(point.effort):  # jtac commands positions: an ignored effort would be another motion
            raise GoalConversionError(
                INVALID_GOAL, f"points[{k}].effort is set: this controller commands positions only"
            )
        if len(point.accelerations) and not notes:
            notes.append(
                "~/joint_trajectory chunks: points' accelerations are ignored (the chunk's spline and "
                "blend give the command's acceleration)"
            )
        times[k] = duration_to_s(point.time_from_start)
        q[k] = [float(point.positions[i]) for i in order]
        if dq is not None:
            dq[k] = [float(point.velocities[i]) for i in order]
    return {"times_s": times, "positions_rad": q, "velocities_rad_s": dq, "notes": notes}


# ================================================================================ admittance


def pose_to_core(pose: Any) -> tuple[list[float], list[float]]:
    """geometry_msgs/Pose -> (xyz [m], quaternion [x, y, z, w]), the core's pair form.

    An all-zero quaternion means identity: ROS 2's Quaternion defaults to w = 1, but ROS 1 messages,
    C structs zeroed by memset and clients that fill only the position send x = y = z = w = 0, which
    is no rotation at all. Any other quaternion goes through as given (not normalised: the core
    refuses one that is not of unit length).
    """
    p, q = pose.position, pose.orientation
    xyzw = [float(q.x), float(q.y), float(q.z), float(q.w)]
    if xyzw == [0.0, 0.0, 0.0, 0.0]:
        xyzw = [0.0, 0.0, 0.0, 1.0]
    return [float(p.x), float(p.y), float(p.z)], xyzw


def is_default_admittance(params: Any) -> bool:
    """True when an AdmittanceParameters is exactly what a client sends that never set it: no
    mass/stiffness/damping/selected_axes, no frame, no payload (mass 0, cog 0), no per-tip threshold
    and an identity (or all-zero) ee_pose_control. joint_damping is the goal's, not the tip's: not
    looked at."""
    xyz, xyzw = pose_to_core(params.ee_pose_control)
    return (
        not len(params.mass)
        and not len(params.stiffness)
        and not len(params.damping)
        and not len(params.selected_axes)
        and not params.end_effector_frame
        and params.end_effector_mass == 0.0
        and all(float(c) == 0.0 for c in params.end_effector_cog)
        and not len(params.absolute_force_torque_threshold)
        and xyz == [0.0, 0.0, 0.0]
        and xyzw == [0.0, 0.0, 0.0, 1.0]
    )


def tip_from_admittance_parameters(params: Any, index: int = 0) -> Any:
    """jtac/AdmittanceParameters -> the core's ``_native.TipGoal`` through ``jtac_py.goals.tip_goal``,
    the Python API's defaults included: empty damping (not given) = critical, 2·sqrt(M·K) per axis.
    selected_axes goes as given (empty = this tip only tracks the trajectory); `index` names the tip
    in error messages."""
    return goals.tip_goal(
        {
            "end_effector_frame": str(params.end_effector_frame),
            "mass": _floats(params.mass),
            "stiffness": _floats(params.stiffness),
            "damping": _floats(params.damping),
            "selected_axes": [bool(s) for s in params.selected_axes],
            "ee_pose_control": pose_to_core(params.ee_pose_control),
            "end_effector_mass_kg": float(params.end_effector_mass),
            "end_effector_cog_m": _floats(params.end_effector_cog),
            "absolute_force_torque_threshold": _floats(params.absolute_force_torque_threshold),
        },
        index,
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


def core_goal_from_admittance_goal(
    goal_msg: Any,
    *,
    ros_now_s: Any,
    controller_now_s: float,
    controller_joint_names: Sequence[str] | None = None,
) -> ConvertedGoal:
    """jtac FollowJointTrajectoryWithAdmittance.Goal -> ConvertedGoal.

    controller_joint_names is accepted so that both converters take the same call; it is not needed
    (the core maps the trajectory's joints by name and names a missing or unknown one).

    - path_tolerance / goal_tolerance: per joint in trajectory.joint_names order [rad], passed as is
      (the core reads them in that order too); empty = the parameter defaults (applied by the core).
    - goal_time_tolerance (jtac extension): seconds; 0 = default_goal_time_tolerance.
    - tips: admittance_parameters, then additional_tips[...], in that order, so that the core's
      messages name them right (tips[0] = "admittance_parameters", tips[k] = "additional_tips[k-1]")
      and a tip without end_effector_frame binds to the ee frame at its position. The one exception:
      a goal whose only tip is all default (is_default_admittance: what any client that never
      touches the field sends) gets no tip at all, the same core goal as a plain trajectory (the
      Python API's follow(admittance=None)). A default first tip next to additional tips stays, as a
      placeholder that keeps the positions. Each tip through tip_from_admittance_parameters (empty
      damping = critical).
    - joint_damping: admittance_parameters.joint_damping [1/s] (one per goal); the additional tips'
      joint_damping is ignored (noted when nonzero).
    - absolute_force_torque_threshold: 6 values or empty (= default_absolute_force_torque_threshold).
    """
    del controller_joint_names  # see the docstring
    trajectory = trajectory_goal_from_msg(
        goal_msg.trajectory, ros_now_s=ros_now_s, controller_now_s=controller_now_s
    )
    trajectory.path_tolerance_rad = _floats(goal_msg.path_tolerance)
    trajectory.goal_tolerance_rad = _floats(goal_msg.goal_tolerance)
    trajectory.goal_time_tolerance_s = duration_to_s(goal_msg.goal_time_tolerance)

    first = goal_msg.admittance_parameters
    extra = list(goal_msg.additional_tips)
    if not extra and is_default_admittance(first):
        tips = []
    else:
        tips = [tip_from_admittance_parameters(p, k) for k, p in enumerate([first, *extra])]
    notes = [
        f"additional_tips[{k}].joint_damping = {params.joint_damping} is ignored: joint damping "
        "is one per goal (admittance_parameters.joint_damping)"
        for k, params in enumerate(extra)
        if params.joint_damping != 0.0
    ]
    threshold = _floats(goal_msg.absolute_force_torque_threshold)
    goal = goals.jtac_goal(
        trajectory,
        trajectory.joint_names,
        admittance=tips,
        thresholds=threshold if threshold else None,
        joint_damping_per_s=float(first.joint_damping),
    )
    return ConvertedGoal(goal, tuple(notes))


# ================================================================================ control_msgs


def _defaults_by_joint(defaults: Any, controller_joint_names: Sequence[str], name: str) -> dict[str, float]:
    """A default tolerance per controller joint from a {joint: rad} mapping, a sequence in controller
    joint order, or one number for every joint."""
    if isinstance(defaults, Mapping):
        return {str(k): float(v) for k, v in defaults.items()}
    if isinstance(defaults, numbers.Real):
        return dict.fromkeys(controller_joint_names, float(defaults))
    values = _floats(defaults)
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


# ================================================================================ state messages


def _joint_array(values: Any, joint_names: Sequence[str], name: str) -> array.array:
    a = np.asarray(values, dtype=float).reshape(-1)
    if len(a) != len(joint_names):
        raise ValueError(
            f"state.{name} has {len(a)} values, expected {len(joint_names)} (one per joint_names)"
        )
    return array.array("d", a.tolist())


def _point(state: Any, joint_names: Sequence[str], positions: str, velocities: str) -> JointTrajectoryPoint:
    point = JointTrajectoryPoint()
    point.positions = _joint_array(getattr(state, positions), joint_names, positions)
    point.velocities = _joint_array(getattr(state, velocities), joint_names, velocities)
    return point


def _error_point(state: Any, joint_names: Sequence[str]) -> JointTrajectoryPoint:
    point = JointTrajectoryPoint()
    point.positions = _joint_array(state.error, joint_names, "error")
    dq_error = np.asarray(state.dq_ref, dtype=float) - np.asarray(state.dq, dtype=float)
    point.velocities = _joint_array(dq_error, joint_names, "dq_ref - dq")
    return point


def _set_time_from_start(points: Sequence[JointTrajectoryPoint], time_from_start_s: float) -> None:
    duration = s_to_duration(max(float(time_from_start_s), 0.0))
    for point in points:
        point.time_from_start = duration


def fill_feedback(
    feedback_msg: Any,
    state: Any,
    joint_names: Sequence[str],
    stamp: Any,
    time_from_start_s: float = 0.0,
) -> Any:
    """Fills either action's Feedback (ours, or control_msgs' whose multi-DOF fields stay empty) from
    a ControllerState and returns it: header.stamp (ROS time: a Time or seconds), joint_names (the
    controller's, the state's order), desired = (q_ref, dq_ref), actual = (q, dq), error = desired -
    actual (positions: the core's error, shortest for continuous joints). time_from_start of all three
    = `time_from_start_s`, the trajectory time of the sampled reference [s] (as JTC fills it; the
    three describe the same instant)."""
    feedback_msg.header.stamp = _as_time(stamp)
    feedback_msg.joint_names = [str(n) for n in joint_names]
    feedback_msg.desired = _point(state, joint_names, "q_ref", "dq_ref")
    feedback_msg.actual = _point(state, joint_names, "q", "dq")
    feedback_msg.error = _error_point(state, joint_names)
    _set_time_from_start((feedback_msg.desired, feedback_msg.actual, feedback_msg.error), time_from_start_s)
    return feedback_msg


def controller_state_msg(
    state: Any,
    joint_names: Sequence[str],
    stamp: Any,
    speed_scaling_factor: float | None = None,
    time_from_start_s: float = 0.0,
) -> JointTrajectoryControllerState:
    """control_msgs/JointTrajectoryControllerState: reference = (q_ref, dq_ref), feedback = (q, dq),
    error = reference - feedback, output = (q_cmd, dq_cmd), speed_scaling_factor = the given factor,
    or the state's current time scale (1.0 = full speed) when None; time_from_start of the four points
    = `time_from_start_s`, the trajectory time of the sampled reference [s] (0 while no goal runs)."""
    msg = JointTrajectoryControllerState()
    msg.header.stamp = _as_time(stamp)
    msg.joint_names = [str(n) for n in joint_names]
    msg.reference = _point(state, joint_names, "q_ref", "dq_ref")
    msg.feedback = _point(state, joint_names, "q", "dq")
    msg.error = _error_point(state, joint_names)
    msg.output = _point(state, joint_names, "q_cmd", "dq_cmd")
    _set_time_from_start((msg.reference, msg.feedback, msg.error, msg.output), time_from_start_s)
    factor = state.time_scale if speed_scaling_factor is None else speed_scaling_factor
    msg.speed_scaling_factor = float(factor)
    return msg


def joint_state_msg(state: Any, joint_names: Sequence[str], stamp: Any) -> JointState:
    """sensor_msgs/JointState of the measured joints: position (q), velocity (dq); effort empty."""
    msg = JointState()
    msg.header.stamp = _as_time(stamp)
    msg.name = [str(n) for n in joint_names]
    msg.position = _joint_array(state.q, joint_names, "q")
    msg.velocity = _joint_array(state.dq, joint_names, "dq")
    return msg


def wrench_stamped(wrench6: Any, frame_id: str, stamp: Any) -> WrenchStamped:
    """geometry_msgs/WrenchStamped from [Fx Fy Fz Tx Ty Tz] [N, N·m] in frame `frame_id`."""
    w = np.asarray(wrench6, dtype=float).reshape(-1)
    if len(w) != 6:
        raise ValueError(f"wrench has {len(w)} values, expected 6 [Fx Fy Fz Tx Ty Tz]")
    msg = WrenchStamped()
    msg.header.stamp = _as_time(stamp)
    msg.header.frame_id = str(frame_id)
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in w)
    return msg
