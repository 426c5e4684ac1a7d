"""Re-exports the ROS adapter's message mapping under its public path, ``jtac_ros.conversions``.

One concern per module: ``trajectory_goals`` (JointTrajectory, control_msgs FollowJointTrajectory),
``admittance_goals`` (FollowJointTrajectoryWithAdmittance), ``chunk_messages`` (a JointTrajectory as
an action chunk), ``state_messages`` (feedback and published state), ``result_codes``, ``ros_time``.
"""

from jtac_ros.admittance_goals import (
    core_goal_from_admittance_goal,
    is_default_admittance,
    pose_to_core,
    tip_from_admittance_parameters,
)
from jtac_ros.chunk_messages import chunk_from_msg, chunk_notes
from jtac_ros.result_codes import (
    RESULT_CODE_NAMES,
    GoalConversionError,
    result_code_for_action,
    result_code_name,
    result_for_action,
)
from jtac_ros.ros_time import duration_to_s, s_to_duration, s_to_time, time_to_s
from jtac_ros.state_messages import controller_state_msg, fill_feedback, joint_state_msg, wrench_stamped
from jtac_ros.trajectory_goals import (
    ConvertedGoal,
    core_goal_from_follow_joint_trajectory,
    core_goal_from_joint_trajectory,
    trajectory_goal_from_msg,
)

__all__ = [
    "RESULT_CODE_NAMES",
    "ConvertedGoal",
    "GoalConversionError",
    "chunk_from_msg",
    "chunk_notes",
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
