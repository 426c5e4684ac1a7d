"""The ROS adapter's message mapping, re-exported in one namespace (the public ``jtac_ros.conversions``).

ROS goals and chunks -> the core's typed goals and jtac's chunks, controller state -> ROS messages,
one concern per module:

- ``trajectory_goals``: JointTrajectory and control_msgs FollowJointTrajectory goals, their clocks
  and tolerances; ``admittance_goals``: jtac's FollowJointTrajectoryWithAdmittance goal, tip by tip;
- ``chunk_messages``: a JointTrajectory read as an action chunk while the node streams;
- ``state_messages``: feedback, controller state, joint states and wrenches from a ControllerState;
- ``result_codes``: result codes, their mapping onto control_msgs, GoalConversionError;
- ``ros_time``: Time / Duration messages <-> seconds.

Pure functions: no node, no spinning, no algorithm. Only *structure* is handled there (field names,
units, joint order, clocks, tolerance sentinels); every *value* (sizes, signs, finiteness, unknown
joints or frames) is checked by the core (a goal) or by ``jtac_py.chunks.Chunk.build`` (a chunk),
whose rejection names the field, the joint and the value, and is sent back to the client as the
result (INVALID_GOAL / INVALID_JOINTS / ...). The few errors raised there (GoalConversionError) are
the ones the core cannot express: a JointTolerance naming a joint that is not in the trajectory, a
multi-DOF trajectory, a header stamp before the controller clock began, a chunk's joint names.
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
