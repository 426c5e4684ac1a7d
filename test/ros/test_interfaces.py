"""The generated interfaces have the field lists and constants clients rely on (no DDS needed)."""

import pytest

pytestmark = pytest.mark.ros


def _fields(msg_class):
    return dict(msg_class.get_fields_and_field_types())


def test_action_is_field_compatible_with_the_public_definition():
    from jtac.action import FollowJointTrajectoryWithAdmittance as Fjta

    goal = _fields(Fjta.Goal)
    # The public MoveIt Pro goal fields, same names and types...
    assert goal["trajectory"] == "trajectory_msgs/JointTrajectory"
    assert goal["path_tolerance"] == "sequence<double>"
    assert goal["goal_tolerance"] == "sequence<double>"
    assert goal["absolute_force_torque_threshold"] == "sequence<double>"
    assert goal["admittance_parameters"] == "jtac/AdmittanceParameters"
    # ... and our extension.
    assert goal["additional_tips"] == "sequence<jtac/AdmittanceParameters>"
    assert goal["goal_time_tolerance"] == "builtin_interfaces/Duration"
    assert _fields(Fjta.Result) == {"error_code": "int32", "error_message": "string"}
    assert _fields(Fjta.Feedback) == {
        "header": "std_msgs/Header",
        "joint_names": "sequence<string>",
        "desired": "trajectory_msgs/JointTrajectoryPoint",
        "actual": "trajectory_msgs/JointTrajectoryPoint",
        "error": "trajectory_msgs/JointTrajectoryPoint",
    }


def test_result_codes_match_the_core():
    from jtac.action import FollowJointTrajectoryWithAdmittance as Fjta

    from jtac_py import _native

    for code in _native.ResultCode.__members__.values():
        assert getattr(Fjta.Result, code.name) == int(code), code.name
    assert len(_native.ResultCode.__members__) == 10


def test_admittance_parameters_fields():
    from jtac.msg import AdmittanceParameters

    fields = _fields(AdmittanceParameters)
    assert list(fields)[:6] == [
        "mass",
        "stiffness",
        "damping",
        "joint_damping",
        "ee_pose_control",
        "selected_axes",
    ]
    assert fields["mass"] == "sequence<double>"
    assert fields["selected_axes"] == "sequence<boolean>"
    assert fields["ee_pose_control"] == "geometry_msgs/Pose"
    assert fields["end_effector_frame"] == "string"
    assert fields["end_effector_mass"] == "double"
    assert fields["end_effector_cog"] == "double[3]"
    msg = AdmittanceParameters()
    assert list(msg.end_effector_cog) == [0.0, 0.0, 0.0] and msg.end_effector_mass == 0.0


def test_control_msgs_have_the_jazzy_fields():
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointComponentTolerance, JointTolerance, JointTrajectoryControllerState

    assert list(_fields(FollowJointTrajectory.Goal)) == [
        "trajectory",
        "multi_dof_trajectory",
        "path_tolerance",
        "component_path_tolerance",
        "goal_tolerance",
        "component_goal_tolerance",
        "goal_time_tolerance",
    ]
    assert list(_fields(FollowJointTrajectory.Feedback)) == [
        "header",
        "joint_names",
        "desired",
        "actual",
        "error",
        "multi_dof_joint_names",
        "multi_dof_desired",
        "multi_dof_actual",
        "multi_dof_error",
    ]
    assert _fields(FollowJointTrajectory.Result) == {"error_code": "int32", "error_string": "string"}
    assert FollowJointTrajectory.Result.OLD_HEADER_TIMESTAMP == -3
    assert FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED == -5
    assert list(_fields(JointTolerance)) == ["name", "position", "velocity", "acceleration"]
    assert list(_fields(JointComponentTolerance)) == [
        "joint_name",
        "component",
        "position",
        "velocity",
        "acceleration",
    ]
    assert (JointComponentTolerance.X_AXIS, JointComponentTolerance.ROTATION) == (1, 5)
    state = _fields(JointTrajectoryControllerState)
    assert list(state) == [
        "header",
        "joint_names",
        "reference",
        "feedback",
        "error",
        "output",
        "multi_dof_joint_names",
        "multi_dof_reference",
        "multi_dof_feedback",
        "multi_dof_error",
        "multi_dof_output",
        "speed_scaling_factor",
    ]
    assert state["speed_scaling_factor"] == "double"
