"""The Franka Hand over DDS: ~/gripper_cmd (control_msgs/GripperCommand, franka_ros2's mapping), the
per-command franka_msgs actions and ~/gripper/stop, the fingers in joint_states and
robot_description, the hand's parameters, and an arm without a hand.

The node runs the simulated FR3 with the hand (parameter hand: true); where a test needs something
between the fingers, the simulated arm carries a GraspObject (a 30 mm box at the TCP), built through
the node's own arm builder (jtac_py.arms.ARM_BUILDERS).
"""

from __future__ import annotations

import math
import time
import xml.etree.ElementTree as ET

import pytest

rclpy = pytest.importorskip("rclpy")

from action_msgs.msg import GoalStatus  # noqa: E402
from control_msgs.action import GripperCommand  # noqa: E402
from franka_msgs.action import Grasp, Homing, Move  # noqa: E402
from node_rig import Rig  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from rcl_interfaces.srv import GetParameters  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from jtac_py import arms  # noqa: E402
from jtac_py.hardware import SimulatedArm  # noqa: E402

pytestmark = pytest.mark.ros

OBJECT_WIDTH_M = 0.03
FINGERS = ["fr3_finger_joint1", "fr3_finger_joint2"]
MM = 1e-3


class HandRig:
    """A Rig with the hand, the gripper clients, and the joint_states the client received."""

    def __init__(self, rig: Rig):
        self.rig = rig
        client = rig.client
        self.gripper_cmd = self._action(GripperCommand, "gripper_cmd")
        self.move = self._action(Move, "gripper/move")
        self.grasp = self._action(Grasp, "gripper/grasp")
        self.homing = self._action(Homing, "gripper/homing")
        self.joint_states: list[JointState] = []
        client.create_subscription(JointState, "/joint_states", self.joint_states.append, 100)

    def _action(self, action_type, name):
        action = ActionClient(self.rig.client, action_type, f"{self.rig.ns}/{name}")
        self.rig.extra_action_clients.append(action)
        return action

    def wait_for_servers(self):
        for action in (self.gripper_cmd, self.move, self.grasp, self.homing):
            assert action.wait_for_server(timeout_sec=10.0)

    def run(self, client, goal, timeout=20.0):
        """The result response (status, result) of an accepted goal."""
        handle = self.rig.send(goal, client)
        return self.rig.wait(handle.get_result_async(), timeout)

    def width_m(self):
        """The node's hand's width right now [m] (the Gripper the node drives)."""
        return self.rig.node._controller.gripper.state.width_m

    def fingers_in_next_joint_states(self):
        """(names, finger positions, the node's width when it arrived) of a joint_states message
        published after this call."""
        n = len(self.joint_states)
        self.rig.wait_for(lambda: len(self.joint_states) > n + 1, what="joint_states")
        msg = self.joint_states[-1]
        width_m = self.width_m()
        positions = dict(zip(msg.name, msg.position, strict=True))
        return list(msg.name), [positions[f] for f in FINGERS], width_m


def gripper_cmd_goal(position_m, max_effort_n=0.0):
    goal = GripperCommand.Goal()
    goal.command.position = position_m
    goal.command.max_effort = max_effort_n
    return goal


def open_hand(hand: HandRig):
    response = hand.run(hand.gripper_cmd, gripper_cmd_goal(0.04))
    assert response.status == GoalStatus.STATUS_SUCCEEDED
    assert abs(hand.width_m() - 0.08) < 0.5 * MM


@pytest.fixture
def hand_with_object(monkeypatch):
    """The node with the hand and a 30 mm box between the open fingers, active."""
    from jtac_py.robots import GraspObject

    def arm_with_object(values):
        grasp_object = GraspObject(OBJECT_WIDTH_M)
        return SimulatedArm(values["robot"], clock="realtime", hand=True, grasp_object=grasp_object)

    monkeypatch.setitem(arms.ARM_BUILDERS, "sim", arm_with_object)
    rig = Rig({"hand": True}).activate()
    hand = HandRig(rig)
    hand.wait_for_servers()
    yield hand
    rig.close()


@pytest.fixture
def hand():
    """The node with the hand (nothing between the fingers), active."""
    rig = Rig({"hand": True}).activate()
    hand = HandRig(rig)
    hand.wait_for_servers()
    yield hand
    rig.close()


def get_parameters(rig, names):
    client = rig.client.create_client(GetParameters, f"{rig.ns}/get_parameters")
    assert client.wait_for_service(timeout_sec=5.0)
    response = rig.wait(client.call_async(GetParameters.Request(names=names)))
    return response.values


def test_gripper_cmd_grasps_the_object_and_opens(hand_with_object):
    hand = hand_with_object
    open_hand(hand)

    # Closing is a grasp at max_effort (franka_gripper's mapping): position = one finger = width / 2.
    response = hand.run(hand.gripper_cmd, gripper_cmd_goal(OBJECT_WIDTH_M / 2, max_effort_n=30.0))
    result = response.result
    assert response.status == GoalStatus.STATUS_SUCCEEDED
    assert result.reached_goal and result.stalled  # holding: exerting the force, not moving
    assert result.effort == 30.0
    assert abs(result.position - OBJECT_WIDTH_M / 2) < 2.5 * MM  # within the 5 mm band of the width
    assert hand.rig.node._controller.gripper.state.is_grasped

    # Opening is a move at 0.1 m/s; it lets go.
    response = hand.run(hand.gripper_cmd, gripper_cmd_goal(0.04))
    assert response.status == GoalStatus.STATUS_SUCCEEDED
    assert response.result.reached_goal and not response.result.stalled
    assert abs(response.result.position - 0.04) < 0.5 * MM
    assert response.result.effort == 0.0


def test_gripper_cmd_grasp_outside_the_band_aborts_stalled(hand_with_object):
    hand = hand_with_object
    open_hand(hand)
    # 10 mm asked, the 30 mm box stops the fingers: outside 10 ± 5 mm, stopped above it.
    since = len(hand.rig.logs)
    response = hand.run(hand.gripper_cmd, gripper_cmd_goal(0.005, max_effort_n=20.0))
    assert response.status == GoalStatus.STATUS_ABORTED
    hand.rig.wait_for(
        lambda: any("not_grasped" in m.msg for m in hand.rig.log_lines(since, Log.WARN)), what="WARN line"
    )
    result = response.result
    assert not result.reached_goal and result.stalled
    assert abs(2 * result.position - OBJECT_WIDTH_M) < 5 * MM
    assert result.effort == 0.0


def test_franka_actions_move_blocked_grasp_and_home(hand_with_object):
    hand = hand_with_object
    open_hand(hand)

    blocked = hand.run(hand.move, Move.Goal(width=0.01, speed=0.05))
    assert blocked.status == GoalStatus.STATUS_ABORTED
    assert not blocked.result.success and blocked.result.error
    assert abs(hand.width_m() - OBJECT_WIDTH_M) < 5 * MM

    goal = Grasp.Goal(width=OBJECT_WIDTH_M, speed=0.05, force=40.0)
    goal.epsilon.inner = goal.epsilon.outer = 0.005
    grasped = hand.run(hand.grasp, goal)
    assert grasped.status == GoalStatus.STATUS_SUCCEEDED
    assert grasped.result.success and grasped.result.error == ""

    homed = hand.run(hand.homing, Homing.Goal(), timeout=30.0)
    assert homed.status == GoalStatus.STATUS_SUCCEEDED and homed.result.success
    assert abs(hand.width_m() - 0.08) < 0.5 * MM


def test_a_new_goal_preempts_and_a_cancel_stops(hand):
    open_hand(hand)
    # A slow close (0.08 m at 0.02 m/s: 4 s), replaced after 0.5 s by an open: the first ends ABORTED.
    first = hand.rig.send(Move.Goal(width=0.0, speed=0.02), hand.move)
    time.sleep(0.5)
    assert 0.06 < hand.width_m() < 0.079
    second = hand.rig.send(gripper_cmd_goal(0.04), hand.gripper_cmd)
    first_response = hand.rig.wait(first.get_result_async(), 10.0)
    assert first_response.status == GoalStatus.STATUS_ABORTED
    assert not first_response.result.success
    second_response = hand.rig.wait(second.get_result_async(), 10.0)
    assert second_response.status == GoalStatus.STATUS_SUCCEEDED
    assert abs(second_response.result.position - 0.04) < 0.5 * MM
    assert "preempted by move" in first_response.result.error

    # A cancel stops the hand where it is: CANCELED, and the width holds afterwards.
    closing = hand.rig.send(Move.Goal(width=0.0, speed=0.02), hand.move)
    time.sleep(0.5)
    hand.rig.wait(closing.cancel_goal_async(), 5.0)
    response = hand.rig.wait(closing.get_result_async(), 10.0)
    assert response.status == GoalStatus.STATUS_CANCELED
    stopped_m = hand.width_m()
    assert 0.05 < stopped_m < 0.078  # about 0.07 m: 0.5 s of 0.02 m/s, plus the stop
    time.sleep(0.5)
    assert abs(hand.width_m() - stopped_m) < 0.2 * MM

    # ~/gripper/stop during a move: success, the hand rests.
    moving = hand.rig.send(Move.Goal(width=0.0, speed=0.02), hand.move)
    time.sleep(0.3)
    stop = hand.rig.client.create_client(Trigger, f"{hand.rig.ns}/gripper/stop")
    assert stop.wait_for_service(timeout_sec=5.0)
    answer = hand.rig.wait(stop.call_async(Trigger.Request()))
    assert answer.success, answer.message
    assert hand.rig.wait(moving.get_result_async(), 10.0).status == GoalStatus.STATUS_ABORTED


def test_out_of_range_goal_is_aborted_with_the_reason_logged(hand):
    since = len(hand.rig.logs)
    response = hand.run(hand.gripper_cmd, gripper_cmd_goal(0.05))  # width 0.1 m > 0.08 m
    assert response.status == GoalStatus.STATUS_ABORTED
    assert not response.result.reached_goal
    hand.rig.wait_for(
        lambda: any("outside 0..0.08 m" in m.msg for m in hand.rig.log_lines(since)), what="the refusal"
    )


def test_joint_states_description_and_parameters_carry_the_hand(hand):
    open_hand(hand)
    names, fingers, width_m = hand.fingers_in_next_joint_states()
    assert names[-2:] == FINGERS and len(names) == 9
    assert all(abs(f - width_m / 2) < MM for f in fingers)
    assert all(abs(f - 0.04) < MM for f in fingers)

    hand.run(hand.move, Move.Goal(width=0.05, speed=0.1))
    names, fingers, width_m = hand.fingers_in_next_joint_states()
    assert abs(width_m - 0.05) < 0.5 * MM
    assert all(abs(f - 0.025) < MM for f in fingers)

    # robot_description (latched): the URDF with the fingers, and its movable joints are exactly the
    # names of joint_states.
    descriptions: list[String] = []
    latched = QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
    )
    hand.rig.client.create_subscription(String, "/robot_description", descriptions.append, latched)
    hand.rig.wait_for(lambda: descriptions, what="robot_description")
    urdf = ET.fromstring(descriptions[0].data)
    movable = [j.get("name") for j in urdf.iter("joint") if j.get("type") != "fixed"]
    assert set(movable) == set(names)
    finger = next(j for j in urdf.iter("joint") if j.get("name") == FINGERS[0])
    assert finger.get("type") == "prismatic"
    assert float(finger.find("limit").get("upper")) == pytest.approx(0.04)

    values = get_parameters(
        hand.rig,
        ["hand", "hand_limits.max_width_m", "hand_limits.max_speed_m_s", "hand_limits.max_force_n"],
    )
    assert values[0].bool_value is True
    assert [v.double_value for v in values[1:]] == [0.08, 0.1, 140.0]
    refused = hand.rig.set_parameter("hand_limits.max_width_m", 0.1)
    assert not refused.successful


def test_without_a_hand_goals_are_rejected_with_the_reason(rig):
    since = len(rig.logs)
    action = ActionClient(rig.client, GripperCommand, f"{rig.ns}/gripper_cmd")
    rig.extra_action_clients.append(action)
    assert action.wait_for_server(timeout_sec=10.0)
    handle = rig.wait(action.send_goal_async(gripper_cmd_goal(0.02)))
    assert not handle.accepted
    rig.wait_for(
        lambda: any("the arm has no hand" in m.msg for m in rig.log_lines(since)), what="the rejection"
    )
    assert get_parameters(rig, ["hand"])[0].bool_value is False
    assert not rig.node.has_parameter("hand_limits.max_width_m")
    states: list[JointState] = []
    rig.client.create_subscription(JointState, "/joint_states", states.append, 10)
    rig.wait_for(lambda: states, what="joint_states")
    assert not any("finger" in n for n in states[0].name) and len(states[0].name) == 7
    assert math.isnan(rig.node._controller.gripper.state.width_m)


def test_a_franka_arm_with_a_hand_publishes_the_builtin_robot_with_it():
    """FrankaArm keeps no URDF of its own: the node publishes the built-in robot, with the hand when
    the parameter says so (and the configured description when one is given)."""
    from types import SimpleNamespace

    from jtac_py.config import resolve
    from jtac_ros.node import JtacNode

    def description(**given):
        return JtacNode._configured_description(SimpleNamespace(values=resolve(given)))

    with_hand = ET.fromstring(description(hand=True))
    movable = [j.get("name") for j in with_hand.iter("joint") if j.get("type") != "fixed"]
    assert movable[-2:] == FINGERS and len(movable) == 9
    assert "finger_joint" not in description(hand=False)
    assert description(hand=True, robot_description="<robot name='mine'/>") == "<robot name='mine'/>"
