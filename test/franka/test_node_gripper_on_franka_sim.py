"""The ROS node's hand on a Franka arm (hardware: franka, hand: true) against franka-sim with its gripper
server and a 30 mm virtual object: ~/gripper_cmd over DDS (a client on another rclpy context), the
fingers in joint_states and the built-in robot with the hand on robot_description — the FrankaArm
path of the node, which test/ros runs only on the simulated arm.
"""

from __future__ import annotations

import threading
import time
import xml.etree.ElementTree as ET

import pytest

pylibfranka = pytest.importorskip("pylibfranka")
rclpy = pytest.importorskip("rclpy")


from jtac_py import _native  # noqa: E402

pytestmark = [
    pytest.mark.franka_sim,
    pytest.mark.skipif(not _native.HAVE_LIBFRANKA, reason="built without libfranka (see the CMake message)"),
]

OBJECT_WIDTH_M = 0.03
# Test servers of test/franka/conftest.py take second octets 10..21, test_gripper_on_franka_sim 22.
SECOND_OCTET = 23
FINGERS = ["fr3_finger_joint1", "fr3_finger_joint2"]


def _wait(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_gripper_cmd_joint_states_and_description_on_a_franka_arm(hand_sim):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import GripperCommand
    from rclpy.action import ActionClient
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.parameter import Parameter
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from jtac_ros.node import JtacNode

    contexts, executors, threads = [], [], []
    for _ in range(2):
        context = rclpy.context.Context()
        rclpy.init(context=context)
        executor = MultiThreadedExecutor(num_threads=4, context=context)
        contexts.append(context)
        executors.append(executor)
    name = "jtac_franka_hand_node"
    node = JtacNode(
        name,
        context=contexts[0],
        parameter_overrides=[
            Parameter("hardware", value="franka"),
            Parameter("robot_ip", value=hand_sim.ip),
            Parameter("late_commands", value="applied"),
            Parameter("hand", value=True),
        ],
    )
    client = rclpy.create_node("jtac_franka_hand_client", context=contexts[1])
    executors[0].add_node(node)
    executors[1].add_node(client)
    for executor in executors:
        threads.append(threading.Thread(target=executor.spin, daemon=True))
        threads[-1].start()
    action = ActionClient(client, GripperCommand, f"/{name}/gripper_cmd")
    states: list[JointState] = []
    descriptions: list[String] = []
    client.create_subscription(JointState, "/joint_states", states.append, 10)
    latched = QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
    )
    client.create_subscription(String, "/robot_description", descriptions.append, latched)

    def run(position_m, max_effort_n=0.0):
        goal = GripperCommand.Goal()
        goal.command.position, goal.command.max_effort = position_m, max_effort_n
        sent = action.send_goal_async(goal)
        _wait(sent.done, 10.0, "the goal response")
        assert sent.result().accepted
        result = sent.result().get_result_async()
        _wait(result.done, 10.0, "the result")
        return result.result()

    try:
        assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
        gripper = node._controller.gripper
        assert gripper.present
        assert action.wait_for_server(timeout_sec=10.0)

        opened = run(0.04)
        assert opened.status == GoalStatus.STATUS_SUCCEEDED and opened.result.reached_goal
        assert gripper.state.width_m == pytest.approx(0.08, abs=1e-6)

        held = run(OBJECT_WIDTH_M / 2, max_effort_n=20.0)  # closing: a grasp at 20 N
        assert held.status == GoalStatus.STATUS_SUCCEEDED
        assert held.result.reached_goal and held.result.stalled and held.result.effort == 20.0
        assert held.result.position == pytest.approx(OBJECT_WIDTH_M / 2, abs=1e-6)

        n = len(states)
        _wait(lambda: len(states) > n + 1, 5.0, "joint_states")
        positions = dict(zip(states[-1].name, states[-1].position, strict=True))
        assert [positions[f] for f in FINGERS] == pytest.approx([OBJECT_WIDTH_M / 2] * 2, abs=1e-6)

        _wait(lambda: descriptions, 5.0, "robot_description")
        urdf = ET.fromstring(descriptions[0].data)
        movable = [j.get("name") for j in urdf.iter("joint") if j.get("type") != "fixed"]
        assert movable[-2:] == FINGERS and set(movable) == set(states[-1].name)

        assert run(0.04).status == GoalStatus.STATUS_SUCCEEDED
        assert node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS
    finally:
        if node._controller is not None or node._entities:
            node.trigger_shutdown()
        for executor in executors:
            executor.shutdown(timeout_sec=5.0)
        for thread in threads:
            thread.join(timeout=5.0)  # before the contexts go: a spin on a dead context raises
        action.destroy()
        client.destroy_node()
        node.destroy_node()
        for context in contexts:
            rclpy.shutdown(context=context)
