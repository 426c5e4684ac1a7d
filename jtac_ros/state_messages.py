"""Controller state -> the published ROS messages: action feedback, JTC's controller state, joint states,
wrenches.

``fill_feedback``, ``controller_state_msg``, ``joint_state_msg`` and ``wrench_stamped`` build the
published messages from a ``jtac_py.controller.ControllerState`` (joint arrays in controller joint
order; the messages carry ``joint_names`` in that order, like ros2_controllers' JTC). desired /
reference = the trajectory sample without the admittance offset (q_ref, dq_ref), actual / feedback =
measured (q, dq), output = the command to the hardware (q_cmd, dq_cmd), error = desired - actual
(positions from the core's error, the shortest angle for continuous joints).
"""

from __future__ import annotations

import array
from collections.abc import Sequence
from typing import Any

import numpy as np
from control_msgs.msg import JointTrajectoryControllerState
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectoryPoint

from jtac_ros.ros_time import as_time_msg, s_to_duration

__all__ = ["controller_state_msg", "fill_feedback", "joint_state_msg", "wrench_stamped"]


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
    feedback_msg.header.stamp = as_time_msg(stamp)
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
    msg.header.stamp = as_time_msg(stamp)
    msg.joint_names = [str(n) for n in joint_names]
    msg.reference = _point(state, joint_names, "q_ref", "dq_ref")
    msg.feedback = _point(state, joint_names, "q", "dq")
    msg.error = _error_point(state, joint_names)
    msg.output = _point(state, joint_names, "q_cmd", "dq_cmd")
    _set_time_from_start((msg.reference, msg.feedback, msg.error, msg.output), time_from_start_s)
    factor = state.time_scale if speed_scaling_factor is None else speed_scaling_factor
    msg.speed_scaling_factor = float(factor)
    return msg


def joint_state_msg(
    state: Any,
    joint_names: Sequence[str],
    stamp: Any,
    extra: tuple[Sequence[str], Sequence[float]] | None = None,
) -> JointState:
    """sensor_msgs/JointState of the measured joints: position (q), velocity (dq); effort empty.

    `extra`: further joints after the controlled ones, (names, positions) — the hand's fingers (each
    at width / 2 [m]); their velocity is 0, as franka_gripper publishes them."""
    msg = JointState()
    msg.header.stamp = as_time_msg(stamp)
    msg.name = [str(n) for n in joint_names]
    msg.position = _joint_array(state.q, joint_names, "q")
    msg.velocity = _joint_array(state.dq, joint_names, "dq")
    if extra is not None:
        names, positions = extra
        if len(names) != len(positions):
            raise ValueError(f"extra joints: {len(names)} names but {len(positions)} positions")
        msg.name += [str(n) for n in names]
        msg.position.extend(float(p) for p in positions)
        msg.velocity.extend(0.0 for _ in names)
    return msg


def wrench_stamped(wrench6: Any, frame_id: str, stamp: Any) -> WrenchStamped:
    """geometry_msgs/WrenchStamped from Fx Fy Fz Tx Ty Tz [N, N·m] in frame `frame_id`."""
    w = np.asarray(wrench6, dtype=float).reshape(-1)
    if len(w) != 6:
        raise ValueError(f"wrench has {len(w)} values, expected 6 [Fx Fy Fz Tx Ty Tz]")
    msg = WrenchStamped()
    msg.header.stamp = as_time_msg(stamp)
    msg.header.frame_id = str(frame_id)
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in w)
    return msg
