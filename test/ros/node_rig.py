"""The controller node and a client on separate rclpy contexts (two DDS participants, localhost, the
session's random domain): shared by the node tests.

The node runs in this process on its own context and executor; the clients run on another, so every
goal, feedback, result, topic message, service call, parameter change and log line crosses DDS.
"""

from __future__ import annotations

import gc
import itertools
import math
import time

import numpy as np
import rclpy
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from jtac.action import FollowJointTrajectoryWithAdmittance as Fjta
from rcl_interfaces.msg import Log, ParameterType, ParameterValue
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.srv import SetParameters
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from spinning import Spinner
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectoryPoint

from jtac_py import robots
from jtac_ros.action_qos import action_qos
from jtac_ros.node import DEFAULT_NODE_NAME, JtacNode

JOINTS = list(robots.joint_names("fr3"))
Q_HOME = np.array(robots.robot_spec("fr3").q_home_rad)
_RIG_NUMBER = itertools.count(1)
DELTA = np.array([0.2, -0.15, 0.1, 0.2, -0.2, 0.15, 0.25])


def _duration(seconds: float) -> Duration:
    return Duration(sec=int(seconds), nanosec=round((seconds - int(seconds)) * 1e9))


def _points(start, goal, duration_s, samples=20):
    """A rest-to-rest quintic as JointTrajectoryPoints (positions and velocities)."""
    start, goal = np.asarray(start, float), np.asarray(goal, float)
    points = []
    for k in range(1, samples + 1):
        s = k / samples
        p = 10 * s**3 - 15 * s**4 + 6 * s**5
        v = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration_s
        points.append(
            JointTrajectoryPoint(
                positions=list(start + p * (goal - start)),
                velocities=list(v * (goal - start)),
                time_from_start=_duration(s * duration_s),
            )
        )
    return points


def _goal(start, goal, duration_s=1.0, *, joints=JOINTS, compliant=False):
    msg = Fjta.Goal()
    msg.trajectory.joint_names = list(joints)
    msg.trajectory.points = _points(start, goal, duration_s)
    if compliant:
        a = msg.admittance_parameters
        a.mass = [4.0, 4.0, 4.0, 1.0, 1.0, 1.0]
        a.stiffness = [400.0, 400.0, 400.0, 50.0, 50.0, 50.0]
        a.damping = [2 * math.sqrt(m * k) for m, k in zip(a.mass, a.stiffness, strict=True)]
        a.selected_axes = [True, True, True, False, False, False]
    return msg


# How long close() waits for an executor to stop and its spin thread to end [s].
_STOP_TIMEOUT_S = 60.0


class Rig:
    """The node on its own context and executor; a client node on another."""

    def __init__(self, overrides=None, name=None):
        from rclpy.parameter import Parameter

        # A name of its own per rig: rcl keys /rosout publishers by node name, and rclpy may destroy
        # the previous test's node of the same name late, unregistering this one's (its log lines
        # would be lost). `name` = DEFAULT_NODE_NAME where a test needs the documented name.
        self.name = name or f"{DEFAULT_NODE_NAME}_{next(_RIG_NUMBER)}"
        self.ns = f"/{self.name}"
        ns = self.ns

        self.node_context = rclpy.context.Context()
        rclpy.init(context=self.node_context)
        params = [Parameter(k, value=v) for k, v in (overrides or {}).items()]
        self.node = JtacNode(self.name, context=self.node_context, parameter_overrides=params)
        self.node_executor = MultiThreadedExecutor(num_threads=8, context=self.node_context)
        self.node_executor.add_node(self.node)
        self.node_spinner = Spinner(self.node_executor)
        self.client_context = rclpy.context.Context()
        rclpy.init(context=self.client_context)
        self.client = rclpy.create_node("jtac_test_client", context=self.client_context)
        # One thread: the client's callbacks only append, and its entities share the default
        # mutually exclusive group, which a multi-threaded executor contends for (rclpy retries the
        # group busily): here a 100 Hz state topic then delayed the client's service and action
        # replies by 50-900 ms in about one process in five.
        self.client_executor = SingleThreadedExecutor(context=self.client_context)
        self.client_executor.add_node(self.client)
        self.client_spinner = Spinner(self.client_executor)
        self.action = ActionClient(self.client, Fjta, f"{ns}/follow_joint_trajectory", **action_qos())
        self.moveit = ActionClient(
            self.client, FollowJointTrajectory, f"{ns}/moveit/follow_joint_trajectory", **action_qos()
        )
        self.extra_action_clients: list[ActionClient] = []  # a test's own, destroyed by close()
        self.states: list[JointTrajectoryControllerState] = []
        self.client.create_subscription(
            JointTrajectoryControllerState, f"{ns}/controller_state", self.states.append, 100
        )
        # The node's log lines, as any ROS tool sees them (/rosout over DDS).
        self.logs: list[Log] = []
        self.client.create_subscription(
            Log,
            "/rosout",
            lambda m: self.logs.append(m) if m.name == self.name else None,
            # Transient local like the node's /rosout writer: lines sent before the two matched arrive.
            QoSProfile(
                depth=1000,
                reliability=ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.TRANSIENT_LOCAL,
            ),
        )

    def activate(self):
        from rclpy.lifecycle import TransitionCallbackReturn

        assert self.node.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert self.node.trigger_activate() == TransitionCallbackReturn.SUCCESS
        assert self.action.wait_for_server(timeout_sec=10.0)
        assert self.moveit.wait_for_server(timeout_sec=10.0)
        return self

    def wait(self, future, timeout=30.0):
        deadline = time.monotonic() + timeout
        while not future.done():
            assert time.monotonic() < deadline, "timed out waiting for a ROS future"
            time.sleep(0.005)
        return future.result()

    def send(self, goal, client=None, feedback=None):
        client = client or self.action
        handle = self.wait(client.send_goal_async(goal, feedback_callback=feedback))
        assert handle.accepted
        return handle

    def run(self, goal, client=None, feedback=None, timeout=30.0):
        handle = self.send(goal, client, feedback)
        return self.wait(handle.get_result_async(), timeout).result

    def log_lines(self, since=0, level=None):
        """The node's /rosout lines from index `since` on (optionally of one level: Log.INFO, …)."""
        return [m for m in self.logs[since:] if level is None or m.level == level]

    def wait_for(self, condition, timeout=10.0, what="a condition"):
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.01)

    def fresh_state(self):
        """A controller_state published after this call (not one still in flight from before: the
        node's executor sometimes falls behind by tenths of a second, more under load)."""
        n = len(self.states)
        deadline = time.monotonic() + 5.0
        while len(self.states) <= n:
            assert time.monotonic() < deadline, "no controller_state"
            time.sleep(0.005)
        return self.states[-1]

    def q_cmd(self):
        """The commanded position of a controller_state published after this call (fresh_state)."""
        return np.array(self.fresh_state().output.positions)

    def set_parameter(self, name, value):
        client = self.client.create_client(SetParameters, f"{self.ns}/set_parameters")
        assert client.wait_for_service(timeout_sec=5.0)
        if isinstance(value, float):
            pv = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)
        else:
            pv = ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=value)
        request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=pv)])
        return self.wait(client.call_async(request)).results[0]

    def tare(self, frame="fr3_ft_sensor"):
        client = self.client.create_client(Trigger, f"{self.ns}/zero_fts/{frame}")
        assert client.wait_for_service(timeout_sec=5.0)
        return self.wait(client.call_async(Trigger.Request()))

    def close(self):
        # The action clients are destroyed only once the client's spin thread has stopped: a thread
        # still inside wait_for_ready_callbacks raises on a client destroyed under it.
        self.client_spinner.stop(_STOP_TIMEOUT_S)
        self.action.destroy()
        self.moveit.destroy()
        for client in self.extra_action_clients:
            client.destroy()
        # Each spin thread is joined before its context shuts down, too: a thread still inside the
        # executor's wait would build a wait set on a dead context and raise (RCLError).
        self.client.destroy_node()
        rclpy.shutdown(context=self.client_context)
        if self.node._controller is not None:
            self.node.trigger_shutdown()
        self.node_spinner.stop(_STOP_TIMEOUT_S)
        self.node.destroy_node()
        # rclpy defers a node's destruction while anything still uses its handle (an action goal's
        # last callback); a node of this name destroyed late would unregister the /rosout publisher
        # of the next test's node (rcl keys them by name) and its log lines would be lost.
        gc.collect()
        rclpy.shutdown(context=self.node_context)
