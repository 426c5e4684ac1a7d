"""jtac's own action, FollowJointTrajectoryWithAdmittance: its goal -> the core's goal, tip by tip.

Each AdmittanceParameters becomes a ``_native.TipGoal`` directly, through the builder the Python API
uses (``jtac_py.goals.build_tip_goal``, which holds the admittance defaults: an AdmittanceParameters
without damping gets the critical damping 2·sqrt(M·K), as ``follow()`` gives), so an admittance gets
the same goal whichever way it is sent. The trajectory and its clock are read as for the control_msgs
action (``trajectory_goals``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jtac_py import goals
from jtac_ros.ros_time import duration_to_s
from jtac_ros.trajectory_goals import ConvertedGoal, floats, trajectory_goal_from_msg

__all__ = [
    "core_goal_from_admittance_goal",
    "is_default_admittance",
    "pose_to_core",
    "tip_from_admittance_parameters",
]


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
    """jtac/AdmittanceParameters -> the core's ``_native.TipGoal`` through ``jtac_py.goals.build_tip_goal``,
    the Python API's defaults included: empty damping (not given) = critical, 2·sqrt(M·K) per axis.
    selected_axes goes as given (empty = this tip only tracks the trajectory); `index` names the tip
    in error messages."""
    return goals.build_tip_goal(
        end_effector_frame=str(params.end_effector_frame),
        mass=floats(params.mass),
        stiffness=floats(params.stiffness),
        damping=floats(params.damping),
        selected_axes=[bool(s) for s in params.selected_axes],
        ee_pose_control=pose_to_core(params.ee_pose_control),
        end_effector_mass_kg=float(params.end_effector_mass),
        end_effector_cog_m=floats(params.end_effector_cog),
        absolute_force_torque_threshold=floats(params.absolute_force_torque_threshold),
        index=index,
    )


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
    trajectory.path_tolerance_rad = floats(goal_msg.path_tolerance)
    trajectory.goal_tolerance_rad = floats(goal_msg.goal_tolerance)
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
    threshold = floats(goal_msg.absolute_force_torque_threshold)
    goal = goals.jtac_goal(
        trajectory,
        trajectory.joint_names,
        admittance=tips,
        thresholds=threshold if threshold else None,
        joint_damping_per_s=float(first.joint_damping),
    )
    return ConvertedGoal(goal, tuple(notes))
