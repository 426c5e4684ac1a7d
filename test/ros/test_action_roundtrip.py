"""FollowJointTrajectoryWithAdmittance and control_msgs/FollowJointTrajectory over real DDS.

A client in this process talks to test/ros/echo_action_server.py in another process: goals,
feedback and results cross DDS on localhost (conftest sets the discovery range and a random domain).
"""

import threading

import pytest
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from jtac.action import FollowJointTrajectoryWithAdmittance as Fjta
from jtac.msg import AdmittanceParameters
from rclpy.action import ActionClient
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = pytest.mark.ros

JOINTS = [f"fr3_joint{i}" for i in range(1, 8)]
# rclpy's action client can take seconds to answer under load (rclpy #1123): generous timeouts.
TIMEOUT_S = 30.0


def _trajectory(n_points=3):
    traj = JointTrajectory(joint_names=JOINTS)
    for k in range(n_points):
        traj.points.append(JointTrajectoryPoint(positions=[0.1 * k] * 7, time_from_start=Duration(sec=k + 1)))
    return traj


def _send(client, goal):
    """Sends a goal, collects feedback, returns (feedback list, result message)."""
    assert client.wait_for_server(timeout_sec=TIMEOUT_S), "action server not discovered"
    feedback = []
    done = threading.Event()
    box = {}

    def on_goal(future):
        handle = future.result()
        box["accepted"] = handle.accepted
        handle.get_result_async().add_done_callback(lambda f: (box.update(result=f.result()), done.set()))

    client.send_goal_async(goal, feedback_callback=lambda m: feedback.append(m.feedback)).add_done_callback(
        on_goal
    )
    assert done.wait(TIMEOUT_S), "no result"
    assert box["accepted"]
    return feedback, box["result"].result


def test_single_tip_goal_gets_feedback_and_result(ros, echo_server):
    client = ActionClient(ros.node("client"), Fjta, "/echo/follow_joint_trajectory")
    goal = Fjta.Goal(trajectory=_trajectory(3))
    # The public single-tip form: only the first six AdmittanceParameters fields are set.
    goal.admittance_parameters = AdmittanceParameters(
        mass=[10.0] * 6,
        stiffness=[500.0] * 6,
        damping=[140.0] * 6,
        joint_damping=0.5,
        selected_axes=[True, True, True, False, False, False],
    )
    goal.absolute_force_torque_threshold = [45.0, 45.0, 45.0, 10.0, 10.0, 10.0]
    feedback, result = _send(client, goal)
    assert result.error_code == Fjta.Result.SUCCESSFUL == 0
    assert "points=3 tips=1 frames=-" in result.error_message
    assert "mass0=[10.0, 10.0, 10.0, 10.0, 10.0, 10.0]" in result.error_message
    assert "threshold=[45.0, 45.0, 45.0, 10.0, 10.0, 10.0]" in result.error_message
    # Feedback may be dropped under load, but at least one arrives and it is well formed.
    assert 1 <= len(feedback) <= 3
    assert list(feedback[-1].joint_names) == JOINTS
    assert len(feedback[-1].desired.positions) == 7


def test_multi_tip_goal_crosses_dds(ros, echo_server):
    client = ActionClient(ros.node("client"), Fjta, "/echo/follow_joint_trajectory")
    goal = Fjta.Goal(trajectory=_trajectory(2))
    goal.admittance_parameters.end_effector_frame = "left_ee"
    goal.admittance_parameters.end_effector_mass = 1.2
    goal.admittance_parameters.end_effector_cog = [0.0, 0.01, 0.05]
    goal.additional_tips = [AdmittanceParameters(end_effector_frame="right_ee")]
    goal.goal_time_tolerance = Duration(sec=0, nanosec=250_000_000)
    _, result = _send(client, goal)
    assert result.error_code == 0
    assert "tips=2 frames=left_ee,right_ee" in result.error_message
    assert "settle=0.250000000" in result.error_message


def test_bad_goal_result_names_the_field(ros, echo_server):
    client = ActionClient(ros.node("client"), Fjta, "/echo/follow_joint_trajectory")
    traj = _trajectory(2)
    traj.points[1].positions = [0.0] * 6
    _, result = _send(client, Fjta.Goal(trajectory=traj))
    assert result.error_code == Fjta.Result.INVALID_GOAL == -1
    assert result.error_message == "trajectory.points[1].positions has 6 values, expected 7"


def test_moveit_follow_joint_trajectory(ros, echo_server):
    client = ActionClient(ros.node("client"), FollowJointTrajectory, "/echo/follow_joint_trajectory_moveit")
    goal = FollowJointTrajectory.Goal(trajectory=_trajectory(2))
    goal.path_tolerance = [
        JointTolerance(name="fr3_joint1", position=0.1),
        JointTolerance(name="fr3_joint2", position=-1.0),
    ]
    feedback, result = _send(client, goal)
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert result.error_string == "fr3_joint1:0.1,fr3_joint2:-1.0"
    assert feedback and list(feedback[0].joint_names) == JOINTS
