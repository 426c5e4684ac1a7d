"""jtac_ros.conversions: ROS goals -> the core's typed goals, controller state -> ROS messages (no DDS)."""

import math

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointComponentTolerance, JointTolerance
from geometry_msgs.msg import Quaternion
from jtac.action import FollowJointTrajectoryWithAdmittance
from jtac.msg import AdmittanceParameters
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint, MultiDOFJointTrajectoryPoint

from jtac_py import _native
from jtac_py.controller import Controller, ControllerState
from jtac_py.hardware import SimulatedArm
from jtac_ros import conversions as conv

pytestmark = pytest.mark.ros

CONTROLLER_JOINTS = ["j1", "j2", "j3"]
ROS_NOW = Time(sec=1_700_000_000, nanosec=500_000_000)


def _point(t_s, positions, velocities=(), accelerations=(), effort=()):
    return JointTrajectoryPoint(
        positions=list(positions),
        velocities=list(velocities),
        accelerations=list(accelerations),
        effort=list(effort),
        time_from_start=conv.s_to_duration(t_s),
    )


def _trajectory(names, points, stamp=None):
    msg = JointTrajectory(joint_names=list(names), points=list(points))
    if stamp is not None:
        msg.header.stamp = stamp
    return msg


def _convert(goal, **kwargs):
    kwargs.setdefault("ros_now_s", ROS_NOW)
    kwargs.setdefault("controller_now_s", 12.0)
    return conv.core_goal_from_admittance_goal(goal, **kwargs)


def _point_fields(point):
    """A GoalPoint's fields that are given (an empty list = not given)."""
    fields = {"time_from_start_s": point.time_from_start_s}
    for name in ("positions_rad", "velocities_rad_s", "accelerations_rad_s2", "effort"):
        if getattr(point, name):
            fields[name] = getattr(point, name)
    return fields


def _convert_fjt(goal, **kwargs):
    kwargs.setdefault("controller_joint_names", CONTROLLER_JOINTS)
    kwargs.setdefault("default_path_tolerance_rad", {"j1": 0.1, "j2": 0.2, "j3": 0.3})
    kwargs.setdefault("default_goal_tolerance_rad", {"j1": 0.01, "j2": 0.02, "j3": 0.03})
    kwargs.setdefault("ros_now_s", ROS_NOW)
    kwargs.setdefault("controller_now_s", 12.0)
    return conv.core_goal_from_follow_joint_trajectory(goal, **kwargs)


# ================================================================================ time


def test_duration_and_time_helpers():
    assert conv.duration_to_s(Duration(sec=1, nanosec=500_000_000)) == 1.5
    assert conv.duration_to_s(Duration(sec=-1, nanosec=750_000_000)) == -0.25
    d = conv.s_to_duration(-0.25)
    assert (d.sec, d.nanosec) == (-1, 750_000_000)
    d = conv.s_to_duration(2.9999999999)  # rounds to the nanosecond, carrying into sec
    assert (d.sec, d.nanosec) == (3, 0)
    t = conv.s_to_time(12.345678901)
    assert (t.sec, t.nanosec) == (12, 345_678_901)
    assert conv.time_to_s(t) == pytest.approx(12.345678901, abs=1e-9)
    assert conv.time_to_s(4.5) == 4.5
    with pytest.raises(ValueError, match="nan"):
        conv.s_to_duration(math.nan)


def test_rclpy_time_is_accepted():
    from rclpy.time import Time as RclpyTime

    assert conv.time_to_s(RclpyTime(seconds=3, nanoseconds=250_000_000)) == pytest.approx(3.25)


# ================================================================================ admittance goal


def test_points_convert_units_and_leave_out_what_is_not_given():
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = _trajectory(
        ["j1", "j2"],
        [
            _point(0.25, [0.1, 0.2]),
            _point(0.5, [0.3, 0.4], velocities=[1.0, 2.0]),
            _point(1.75, [0.5, 0.6], velocities=[0.0, 0.0], accelerations=[3.0, 4.0]),
        ],
    )
    converted = _convert(goal)
    core = converted.goal
    trajectory = core.trajectory
    assert trajectory.joint_names == ["j1", "j2"]
    assert [_point_fields(p) for p in trajectory.points] == [
        {"time_from_start_s": 0.25, "positions_rad": [0.1, 0.2]},
        {"time_from_start_s": 0.5, "positions_rad": [0.3, 0.4], "velocities_rad_s": [1.0, 2.0]},
        {
            "time_from_start_s": 1.75,
            "positions_rad": [0.5, 0.6],
            "velocities_rad_s": [0.0, 0.0],
            "accelerations_rad_s2": [3.0, 4.0],
        },
    ]
    assert trajectory.start_time_s == 0.0  # zero stamp: start when the controller takes it
    assert trajectory.goal_time_tolerance_s == 0.0
    # Empty: the core applies the parameter defaults.
    assert trajectory.path_tolerance_rad == [] and trajectory.goal_tolerance_rad == []
    # A plain trajectory client never touches admittance_parameters: no tip, goal-level defaults.
    assert core.tips == []
    assert core.joint_damping_per_s == 0.0
    assert core.absolute_force_torque_threshold == []
    assert converted.notes == ()
    assert converted.duration_s == 1.75


def test_effort_is_passed_on_for_the_core_to_refuse():
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = _trajectory(["j1"], [_point(1.0, [0.1]), _point(2.0, [0.2], effort=[1.0])])
    converted = _convert(goal)
    points = converted.goal.trajectory.points
    assert points[0].effort == []
    assert points[1].effort == [1.0]
    assert converted.notes == ()


@pytest.mark.parametrize(
    ("stamp", "expected_start_s"),
    [
        (Time(sec=1_700_000_000, nanosec=750_000_000), 12.25),  # 0.25 s in the future
        (Time(sec=1_700_000_001, nanosec=500_000_000), 13.0),  # 1 s in the future
        (Time(sec=1_700_000_000, nanosec=0), 11.5),  # 0.5 s in the past: the core skips the prefix
    ],
)
def test_header_stamp_maps_through_the_clock_offset(stamp, expected_start_s):
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = _trajectory(["j1"], [_point(1.0, [0.1])], stamp=stamp)
    start = _convert(goal).goal.trajectory.start_time_s
    assert start == pytest.approx(expected_start_s, abs=1e-9)
    # ros_now as plain seconds gives the same within float resolution of the epoch time.
    start_s = _convert(goal, ros_now_s=conv.time_to_s(ROS_NOW)).goal.trajectory.start_time_s
    assert start_s == pytest.approx(expected_start_s, abs=1e-6)


def test_stamp_before_the_controller_clock_began():
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    # 20 s ago, controller clock at 12 s: the trajectory (1 s long) ended long ago.
    goal.trajectory = _trajectory(
        ["j1"], [_point(1.0, [0.1])], stamp=Time(sec=1_699_999_980, nanosec=500_000_000)
    )
    with pytest.raises(conv.GoalConversionError) as error:
        _convert(goal)
    assert error.value.code == FollowJointTrajectoryWithAdmittance.Result.OLD_HEADER_TIMESTAMP
    assert "header.stamp" in error.value.message
    # 13 s ago with a 30 s trajectory: still running, but its start is before the controller's origin.
    goal.trajectory = _trajectory(
        ["j1"], [_point(30.0, [0.1])], stamp=Time(sec=1_699_999_987, nanosec=500_000_000)
    )
    with pytest.raises(conv.GoalConversionError) as error:
        _convert(goal)
    assert error.value.code == FollowJointTrajectoryWithAdmittance.Result.INVALID_GOAL
    assert "controller clock" in error.value.message


def test_tolerances_pass_through_in_trajectory_joint_order():
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = _trajectory(["j3", "j1", "j2"], [_point(1.0, [0.3, 0.1, 0.2])])
    goal.path_tolerance = [0.3, 0.1, 0.2]
    goal.goal_tolerance = [0.03, 0.01, 0.02]
    goal.goal_time_tolerance = Duration(sec=1, nanosec=250_000_000)
    goal.absolute_force_torque_threshold = [10.0, 11.0, 12.0, 1.0, 2.0, 3.0]
    trajectory = (core := _convert(goal).goal).trajectory
    assert trajectory.path_tolerance_rad == [0.3, 0.1, 0.2]
    assert trajectory.goal_tolerance_rad == [0.03, 0.01, 0.02]
    assert trajectory.goal_time_tolerance_s == 1.25
    assert core.absolute_force_torque_threshold == [10.0, 11.0, 12.0, 1.0, 2.0, 3.0]


def _admittance(**fields):
    msg = AdmittanceParameters()
    for name, value in fields.items():
        setattr(msg, name, value)
    return msg


def test_tips_keep_their_order_and_fields():
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = _trajectory(["j1"], [_point(1.0, [0.1])])
    goal.admittance_parameters = _admittance(
        mass=[1.0] * 6,
        stiffness=[100.0] * 6,
        damping=[20.0] * 6,
        selected_axes=[False, False, True, False, False, False],
        joint_damping=0.5,
        end_effector_frame="left_ee",
        end_effector_mass=1.5,
        end_effector_cog=[0.0, 0.0, 0.05],
        absolute_force_torque_threshold=[30.0, 30.0, 30.0, 5.0, 5.0, 5.0],
    )
    goal.admittance_parameters.ee_pose_control.position.z = 0.1
    goal.admittance_parameters.ee_pose_control.orientation = Quaternion(
        x=0.0, y=0.0, z=0.7071068, w=0.7071068
    )
    goal.additional_tips = [_admittance(end_effector_frame="right_ee", mass=[2.0] * 6, joint_damping=3.0)]
    converted = _convert(goal)
    core, notes = converted.goal, converted.notes
    assert core.joint_damping_per_s == 0.5
    assert len(core.tips) == 2
    first, second = core.tips
    assert first.end_effector_frame == "left_ee"
    assert first.mass == [1.0] * 6 and first.stiffness == [100.0] * 6 and first.damping == [20.0] * 6
    assert first.selected_axes == [False, False, True, False, False, False]
    np.testing.assert_allclose(
        first.ee_pose_control,
        _native.TipGoal(ee_pose_control=([0.0, 0.0, 0.1], [0.0, 0.0, 0.7071068, 0.7071068])).ee_pose_control,
    )
    assert first.end_effector_mass_kg == 1.5 and first.end_effector_cog_m == [0.0, 0.0, 0.05]
    assert first.absolute_force_torque_threshold == [30.0, 30.0, 30.0, 5.0, 5.0, 5.0]
    assert second.end_effector_frame == "right_ee" and second.mass == [2.0] * 6
    assert second.selected_axes == [] and second.absolute_force_torque_threshold == []
    # Only one joint damping per goal: the additional tip's is reported, not used.
    assert len(notes) == 1 and "additional_tips[0].joint_damping" in notes[0]


def test_a_default_first_tip_stays_as_a_placeholder_next_to_additional_tips():
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = _trajectory(["j1"], [_point(1.0, [0.1])])
    goal.additional_tips = [_admittance(mass=[2.0] * 6, selected_axes=[True] * 6)]
    tips = _convert(goal).goal.tips
    assert len(tips) == 2
    assert tips[0].mass == [] and tips[0].selected_axes == []
    assert tips[1].selected_axes == [True] * 6


def test_zero_quaternion_means_identity():
    params = AdmittanceParameters()
    assert conv.pose_to_core(params.ee_pose_control) == ([0.0] * 3, [0.0, 0.0, 0.0, 1.0])  # ROS 2 default
    params.ee_pose_control.orientation = Quaternion(x=0.0, y=0.0, z=0.0, w=0.0)
    assert conv.pose_to_core(params.ee_pose_control) == ([0.0] * 3, [0.0, 0.0, 0.0, 1.0])
    assert conv.is_default_admittance(params)
    params.ee_pose_control.orientation = Quaternion(x=1.0, y=0.0, z=0.0, w=0.0)
    assert conv.pose_to_core(params.ee_pose_control)[1] == [1.0, 0.0, 0.0, 0.0]
    assert not conv.is_default_admittance(params)


@pytest.mark.parametrize(
    "field",
    [
        {"mass": [1.0] * 6},
        {"selected_axes": [False] * 6},
        {"end_effector_frame": "fr3_ee"},
        {"end_effector_mass": 0.5},
        {"absolute_force_torque_threshold": [1.0] * 6},
    ],
)
def test_any_set_field_makes_a_tip(field):
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = _trajectory(["j1"], [_point(1.0, [0.1])])
    goal.admittance_parameters = _admittance(**field)
    assert len(_convert(goal).goal.tips) == 1
    # joint_damping is the goal's: alone it makes no tip.
    goal.admittance_parameters = _admittance(joint_damping=2.0)
    core = _convert(goal).goal
    assert core.tips == [] and core.joint_damping_per_s == 2.0


# ================================================================================ control_msgs goal


def _fjt_goal(names=("j3", "j1", "j2")):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory = _trajectory(names, [_point(1.0, [0.3, 0.1, 0.2][: len(names)])])
    return goal


def test_joint_tolerance_semantics_in_trajectory_joint_order():
    goal = _fjt_goal()  # trajectory order j3, j1, j2; controller order j1, j2, j3
    goal.path_tolerance = [
        JointTolerance(name="j1", position=0.0),  # default of j1
        JointTolerance(name="j3", position=-1.0),  # no limit
        # j2 not named: its default
    ]
    goal.goal_tolerance = [
        JointTolerance(name="j2", position=0.25),
        JointTolerance(name="j3", position=-0.5),  # passed on: the core refuses it, naming j3
    ]
    goal.goal_time_tolerance = Duration(sec=2, nanosec=0)
    converted = _convert_fjt(goal)
    core = converted.goal
    trajectory = core.trajectory
    assert trajectory.path_tolerance_rad == [math.inf, 0.1, 0.2]
    assert trajectory.goal_tolerance_rad == [-0.5, 0.01, 0.25]
    assert trajectory.goal_time_tolerance_s == 2.0
    assert core.tips == [] and core.absolute_force_torque_threshold == []
    assert converted.notes == ()


def test_defaults_as_sequence_or_number():
    goal = _fjt_goal()
    goal.path_tolerance = [JointTolerance(name="j2", position=0.0)]
    core = _convert_fjt(goal, default_path_tolerance_rad=[0.1, 0.2, 0.3], default_goal_tolerance_rad=0.05)
    assert core.goal.trajectory.path_tolerance_rad == [0.3, 0.1, 0.2]
    assert core.goal.trajectory.goal_tolerance_rad == []  # no JointTolerance: the core's defaults
    with pytest.raises(ValueError, match="default_path_tolerance_rad has 2 values"):
        _convert_fjt(goal, default_path_tolerance_rad=[0.1, 0.2])


def test_tolerance_for_a_joint_not_in_the_trajectory_is_invalid_joints():
    goal = _fjt_goal()
    goal.goal_tolerance = [
        JointTolerance(name="j1", position=0.1),
        JointTolerance(name="elbow", position=0.1),
    ]
    with pytest.raises(conv.GoalConversionError) as error:
        _convert_fjt(goal)
    assert error.value.code == FollowJointTrajectory.Result.INVALID_JOINTS == -2
    assert "goal_tolerance[1]" in error.value.message and "'elbow'" in error.value.message


def test_multi_dof_trajectory_is_refused():
    goal = _fjt_goal()
    goal.multi_dof_trajectory.joint_names = ["base"]
    goal.multi_dof_trajectory.points = [MultiDOFJointTrajectoryPoint()]
    with pytest.raises(conv.GoalConversionError) as error:
        _convert_fjt(goal)
    assert error.value.code == FollowJointTrajectory.Result.INVALID_GOAL
    assert "multi_dof_trajectory is not supported" in error.value.message


def test_unsupported_tolerance_components_are_noted():
    goal = _fjt_goal()
    goal.path_tolerance = [
        JointTolerance(name="j1", position=0.1, velocity=0.5, acceleration=-1.0),
        JointTolerance(name="j2", position=0.1, velocity=0.0, acceleration=0.0),
    ]
    goal.component_goal_tolerance = [JointComponentTolerance(joint_name="base", component=1, position=0.1)]
    core = _convert_fjt(goal)
    notes = core.notes
    assert core.goal.trajectory.path_tolerance_rad == [0.3, 0.1, 0.1]
    assert len(notes) == 2
    assert "path_tolerance[0].velocity" in notes[0] and "'j1'" in notes[0]
    assert "component_goal_tolerance" in notes[1]


def test_fjt_stamp_maps_like_the_admittance_goal():
    goal = _fjt_goal()
    goal.trajectory.header.stamp = Time(sec=1_700_000_001, nanosec=0)
    assert _convert_fjt(goal, controller_now_s=3.0).goal.trajectory.start_time_s == pytest.approx(3.5)


# ================================================================================ state messages


def _state():
    return ControllerState(
        time=1.5,
        tick=1500,
        q=np.array([0.1, 0.2, 0.3]),
        dq=np.array([1.0, 2.0, 3.0]),
        q_cmd=np.array([0.15, 0.25, 0.35]),
        dq_cmd=np.array([1.5, 2.5, 3.5]),
        q_ref=np.array([0.12, 0.23, 0.34]),
        dq_ref=np.array([1.25, 2.5, 2.0]),
        error=np.array([0.02, 0.03, 0.04]),
        joint_offset=np.zeros(3),
        wrench_raw=np.zeros((1, 6)),
        wrench_filtered=np.zeros((1, 6)),
        wrench_control=np.zeros((1, 6)),
        mode=None,
        status=None,
        goal_id=3,
        time_scale=0.5,
        timing={},
    )


@pytest.mark.parametrize("action", [FollowJointTrajectoryWithAdmittance, FollowJointTrajectory])
def test_feedback_is_reference_measured_and_their_difference(action):
    feedback = conv.fill_feedback(action.Feedback(), _state(), CONTROLLER_JOINTS, Time(sec=5, nanosec=7))
    assert (feedback.header.stamp.sec, feedback.header.stamp.nanosec) == (5, 7)
    assert list(feedback.joint_names) == CONTROLLER_JOINTS
    assert list(feedback.desired.positions) == [0.12, 0.23, 0.34]
    assert list(feedback.desired.velocities) == [1.25, 2.5, 2.0]
    assert list(feedback.actual.positions) == [0.1, 0.2, 0.3]
    assert list(feedback.actual.velocities) == [1.0, 2.0, 3.0]
    desired_minus_actual = np.subtract(feedback.desired.positions, feedback.actual.positions)
    np.testing.assert_allclose(feedback.error.positions, desired_minus_actual, atol=1e-12)
    np.testing.assert_allclose(feedback.error.velocities, [0.25, 0.5, -1.0], atol=1e-12)


def test_feedback_with_wrong_joint_count_names_the_field():
    with pytest.raises(ValueError, match=r"state\.q_ref has 3 values, expected 2"):
        conv.fill_feedback(FollowJointTrajectory.Feedback(), _state(), ["j1", "j2"], 0.0)


def test_controller_state_joint_state_and_wrench():
    msg = conv.controller_state_msg(_state(), CONTROLLER_JOINTS, 2.25)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (2, 250_000_000)
    assert list(msg.reference.positions) == [0.12, 0.23, 0.34]
    assert list(msg.feedback.velocities) == [1.0, 2.0, 3.0]
    assert list(msg.output.positions) == [0.15, 0.25, 0.35]
    assert list(msg.output.velocities) == [1.5, 2.5, 3.5]
    assert list(msg.error.positions) == [0.02, 0.03, 0.04]
    assert msg.speed_scaling_factor == 0.5
    assert conv.controller_state_msg(_state(), CONTROLLER_JOINTS, 0.0, 0.8).speed_scaling_factor == 0.8

    joints = conv.joint_state_msg(_state(), CONTROLLER_JOINTS, Time(sec=1))
    assert joints.name == CONTROLLER_JOINTS
    assert list(joints.position) == [0.1, 0.2, 0.3] and list(joints.velocity) == [1.0, 2.0, 3.0]
    assert list(joints.effort) == []

    wrench = conv.wrench_stamped([1.0, 2.0, 3.0, 0.1, 0.2, 0.3], "fr3_ft_sensor", Time(sec=4))
    assert wrench.header.frame_id == "fr3_ft_sensor" and wrench.header.stamp.sec == 4
    w = wrench.wrench
    assert [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z] == [
        1.0,
        2.0,
        3.0,
        0.1,
        0.2,
        0.3,
    ]
    with pytest.raises(ValueError, match="expected 6"):
        conv.wrench_stamped([1.0, 2.0], "f", 0.0)


# ================================================================================ result codes


def test_result_code_names_match_the_core():
    for code in _native.ResultCode.__members__.values():
        assert conv.result_code_name(code) == code.name
    assert len(conv.RESULT_CODE_NAMES) == len(_native.ResultCode.__members__)


def test_result_code_mapping():
    for code in range(0, -6, -1):
        assert conv.result_code_for_action(code, FollowJointTrajectory) == code
    assert conv.result_code_for_action(-6, FollowJointTrajectory) == -4
    assert conv.result_code_for_action(-7, FollowJointTrajectory) == -4
    assert conv.result_code_for_action(-8, FollowJointTrajectory) == -1
    assert conv.result_code_for_action(-9, FollowJointTrajectory) == -1
    assert (
        conv.result_code_for_action(_native.ResultCode.FORCE_TORQUE_THRESHOLD_EXCEEDED, FollowJointTrajectory)
        == -4
    )
    for code in range(0, -10, -1):
        assert conv.result_code_for_action(code, FollowJointTrajectoryWithAdmittance) == code


def test_result_messages_keep_the_original_code():
    result = conv.result_for_action(FollowJointTrajectory, -7, "Fz = 50 N exceeds 45 N")
    assert result.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
    assert result.error_string == "FORCE_TORQUE_THRESHOLD_EXCEEDED (-7): Fz = 50 N exceeds 45 N"
    result = conv.result_for_action(FollowJointTrajectory, -4, "joint j1 off by 0.1 rad")
    assert (result.error_code, result.error_string) == (-4, "joint j1 off by 0.1 rad")
    result = conv.result_for_action(FollowJointTrajectoryWithAdmittance, -7, "Fz = 50 N exceeds 45 N")
    assert (result.error_code, result.error_message) == (-7, "Fz = 50 N exceeds 45 N")


def test_goal_conversion_error_carries_code_and_message():
    error = conv.GoalConversionError(-2, "no such joint")
    assert (error.code, error.message) == (-2, "no such joint")
    assert str(error) == "INVALID_JOINTS (-2): no such joint"


# ================================================================================ into the real core


@pytest.fixture
def controller():
    c = Controller(SimulatedArm("fr3", clock="lockstep"))
    c.start()
    c.step(20)
    yield c
    c.stop()


def _submit(controller, converted):
    assert converted.notes == ()
    return controller._core.submit_goal(converted.goal, controller.state.time)


def _run_to_result(controller, goal_id, seconds):
    for _ in range(int(seconds * 100)):
        controller.step(10)
        for event in controller.events:
            if event.goal_id == goal_id and event.type in (
                _native.EventType.GOAL_SUCCEEDED,
                _native.EventType.GOAL_ABORTED,
                _native.EventType.GOAL_CANCELED,
            ):
                return event
    raise AssertionError(f"goal {goal_id} has no result after {seconds} s")


def _reversed_trajectory(controller, stamp=None):
    names = controller.joint_names[::-1]
    q0 = controller.state.q[::-1]
    return _trajectory(
        names,
        [_point(0.25, q0 + 0.01), _point(0.5, q0 + 0.02, velocities=[0.0] * len(names))],
        stamp=stamp,
    )


def test_converted_admittance_goal_is_accepted_and_executed_by_the_core(controller):
    ros_now = Time(sec=100, nanosec=0)
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = _reversed_trajectory(controller, stamp=Time(sec=100, nanosec=100_000_000))
    n = len(goal.trajectory.joint_names)
    goal.path_tolerance = [0.1] * n
    goal.goal_tolerance = [0.05] * n
    goal.goal_time_tolerance = conv.s_to_duration(0.5)
    goal.absolute_force_torque_threshold = [60.0, 60.0, 60.0, 15.0, 15.0, 15.0]
    goal.admittance_parameters = _admittance(
        mass=[5.0] * 6,
        stiffness=[500.0] * 6,
        damping=[100.0] * 6,
        selected_axes=[False, False, True, False, False, False],
        joint_damping=1.0,
        end_effector_frame=controller.values["ee_frames"][0],
    )
    goal.admittance_parameters.ee_pose_control.orientation = Quaternion(x=0.0, y=0.0, z=0.0, w=0.0)
    converted = _convert(
        goal,
        ros_now_s=ros_now,
        controller_now_s=controller.state.time,
        controller_joint_names=controller.joint_names,
    )
    assert converted.goal.trajectory.start_time_s == pytest.approx(controller.state.time + 0.1)
    result = _submit(controller, converted)
    assert result.code == _native.ResultCode.SUCCESSFUL, result.message
    event = _run_to_result(controller, result.goal_id, 3.0)
    assert event.type == _native.EventType.GOAL_SUCCEEDED, event.message


def test_converted_follow_joint_trajectory_goal_is_accepted_and_executed_by_the_core(controller):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory = _reversed_trajectory(controller)
    goal.path_tolerance = [JointTolerance(name=controller.joint_names[0], position=-1.0)]
    goal.goal_tolerance = [JointTolerance(name=controller.joint_names[1], position=0.0)]
    defaults = dict.fromkeys(controller.joint_names, 0.05)
    converted = _convert_fjt(
        goal,
        controller_joint_names=controller.joint_names,
        default_path_tolerance_rad=defaults,
        default_goal_tolerance_rad=defaults,
        controller_now_s=controller.state.time,
    )
    result = _submit(controller, converted)
    assert result.code == _native.ResultCode.SUCCESSFUL, result.message
    event = _run_to_result(controller, result.goal_id, 3.0)
    assert event.type == _native.EventType.GOAL_SUCCEEDED, event.message


def test_values_are_left_to_the_core_which_names_the_joint(controller):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory = _reversed_trajectory(controller)
    bad_joint = controller.joint_names[2]
    goal.goal_tolerance = [JointTolerance(name=bad_joint, position=-0.5)]
    converted = _convert_fjt(
        goal,
        controller_joint_names=controller.joint_names,
        default_path_tolerance_rad=0.05,
        default_goal_tolerance_rad=0.05,
        controller_now_s=controller.state.time,
    )
    result = _submit(controller, converted)
    assert result.code == _native.ResultCode.INVALID_GOAL
    assert bad_joint in result.message and "-0.5" in result.message


# ================================================================================ one goal, three paths


def _goal_fields(goal):
    """Every field of a JtacGoal, as plain values to compare."""
    trajectory = goal.trajectory
    return {
        "joint_names": trajectory.joint_names,
        "points": [_point_fields(p) for p in trajectory.points],
        "start_time_s": trajectory.start_time_s,
        "path_tolerance_rad": trajectory.path_tolerance_rad,
        "goal_tolerance_rad": trajectory.goal_tolerance_rad,
        "goal_time_tolerance_s": trajectory.goal_time_tolerance_s,
        "tips": [
            {
                "end_effector_frame": t.end_effector_frame,
                "mass": t.mass,
                "stiffness": t.stiffness,
                "damping": t.damping,
                "selected_axes": t.selected_axes,
                "ee_pose_control": t.ee_pose_control.tolist(),
                "end_effector_mass_kg": t.end_effector_mass_kg,
                "end_effector_cog_m": t.end_effector_cog_m,
                "absolute_force_torque_threshold": t.absolute_force_torque_threshold,
            }
            for t in goal.tips
        ],
        "joint_damping_per_s": goal.joint_damping_per_s,
        "absolute_force_torque_threshold": goal.absolute_force_torque_threshold,
    }


def test_the_python_api_the_ros_action_and_a_goal_file_build_the_same_goal():
    """One compliant goal without damping, written three ways: the Python API's arguments, the ROS
    action's message, a goal file (sent as that message). All three get the critical damping."""
    from jtac_py import goals
    from jtac_ros.goal_file import goal_from_dict

    names = ["j1", "j2"]
    mass, stiffness = [4.0, 4.0, 4.0, 1.0, 1.0, 1.0], [400.0, 400.0, 400.0, 50.0, 50.0, 50.0]
    axes = [True, True, True, False, False, False]
    python_api = goals.jtac_goal(
        {"joint_names": names, "points": [{"positions": [0.1, 0.2], "time_from_start": 1.5}]},
        names,
        # end_effector_cog_m: the message's float64[3] is never empty (no payload: mass 0 at the origin).
        admittance={
            "mass": mass,
            "stiffness": stiffness,
            "selected_axes": axes,
            "end_effector_cog_m": [0.0] * 3,
        },
        tolerances={"path": [0.1, 0.2], "goal": 0.01, "goal_time": 0.5},
        thresholds=[30.0, 30.0, 30.0, 5.0, 5.0, 5.0],
        joint_damping_per_s=0.5,
    )

    message = FollowJointTrajectoryWithAdmittance.Goal()
    message.trajectory = _trajectory(names, [_point(1.5, [0.1, 0.2])])
    message.path_tolerance = [0.1, 0.2]
    message.goal_tolerance = [0.01, 0.01]
    message.goal_time_tolerance = conv.s_to_duration(0.5)
    message.absolute_force_torque_threshold = [30.0, 30.0, 30.0, 5.0, 5.0, 5.0]
    message.admittance_parameters = _admittance(
        mass=mass, stiffness=stiffness, selected_axes=axes, joint_damping=0.5
    )
    ros_action = _convert(message).goal

    goal_file = goal_from_dict(
        {
            "joint_names": names,
            "points": [{"positions": [0.1, 0.2], "time_from_start": 1.5}],
            "tolerances": {"path": [0.1, 0.2], "goal": 0.01, "goal_time": 0.5},
            "thresholds": [30, 30, 30, 5, 5, 5],
            "admittance": {"mass": mass, "stiffness": stiffness, "selected_axes": axes, "joint_damping": 0.5},
        },
        now_ns=0,
    )
    from_file = _convert(goal_file).goal

    expected = _goal_fields(python_api)
    # 2·sqrt(M·K): 2·sqrt(4 kg · 400 N/m), 2·sqrt(1 kg·m² · 50 N·m/rad)
    assert expected["tips"][0]["damping"] == pytest.approx([80.0] * 3 + [2.0 * math.sqrt(50.0)] * 3)
    assert _goal_fields(ros_action) == expected
    assert _goal_fields(from_file) == expected


def test_an_admittance_goal_without_damping_gets_the_critical_damping():
    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = _trajectory(["j1"], [_point(1.0, [0.1])])
    goal.admittance_parameters = _admittance(mass=[2.0] * 6, stiffness=[200.0] * 6, selected_axes=[True] * 6)
    (tip,) = _convert(goal).goal.tips
    assert tip.damping == pytest.approx([40.0] * 6)  # 2·sqrt(2 kg · 200 N/m)
    # Given damping is kept, and empty selected_axes stays empty (the tip only tracks the trajectory).
    goal.admittance_parameters = _admittance(mass=[2.0] * 6, stiffness=[200.0] * 6, damping=[5.0] * 6)
    (tip,) = _convert(goal).goal.tips
    assert tip.damping == [5.0] * 6 and tip.selected_axes == []
