"""The pair node (jtac_ros.pair_node) over real DDS: the node on its own rclpy context, a client on
another, both on a ROS domain of this test's own (localhost only, test/conftest.py). Two simulated
FR3s in real time ("left", "right"): the 14-joint goal, its cancel and its failure, a goal per arm,
a goal naming some arms or some joints, /joint_states and /robot_description, per-arm time scale and
tare. Liveness timeouts only: the machine may be loaded.
"""

from __future__ import annotations

import gc
import random
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from action_msgs.msg import GoalStatus  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.msg import ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.duration import Duration as RosDuration  # noqa: E402
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from spinning import Spinner  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from jtac_py import robots  # noqa: E402
from jtac_ros.pair_node import DEFAULT_PAIR_NODE_NAME, JtacPairNode  # noqa: E402

pytestmark = pytest.mark.ros

JOINTS = list(robots.joint_names("fr3"))
ARMS = ("left", "right")
PAIR_JOINTS = [f"{arm}_{j}" for arm in ARMS for j in JOINTS]
DELTA_RAD = np.array([0.2, -0.15, 0.1, 0.2, -0.2, 0.15, 0.25])
# Liveness bounds [s], generous: a loaded 2-core machine runs two arms, the node and the client.
GOAL_TIMEOUT_S = 60.0
WAIT_S = 30.0
# How far a joint at rest may be from the goal's last point [rad] (the default goal tolerance is
# tighter; joint_states carries the measured position) and how still an arm left alone stays [rad].
AT_TARGET_RAD = 5e-3
STILL_RAD = 1e-4


def _duration(seconds: float) -> Duration:
    return Duration(sec=int(seconds), nanosec=round((seconds - int(seconds)) * 1e9))


def _goal(names, start_rad, goal_rad, duration_s, samples=20, hold_s=0.0):
    """A rest-to-rest quintic over `names` as control_msgs' goal (positions and velocities), after
    holding `start_rad` for hold_s [s] (a point at rest there)."""
    start, delta = np.asarray(start_rad, float), np.asarray(goal_rad, float) - np.asarray(start_rad, float)
    msg = FollowJointTrajectory.Goal()
    msg.trajectory.joint_names = list(names)
    if hold_s > 0.0:
        msg.trajectory.points.append(
            JointTrajectoryPoint(
                positions=list(start), velocities=[0.0] * len(start), time_from_start=_duration(hold_s)
            )
        )
    for k in range(1, samples + 1):
        s = k / samples
        p = 10 * s**3 - 15 * s**4 + 6 * s**5
        v = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration_s
        msg.trajectory.points.append(
            JointTrajectoryPoint(
                positions=list(start + p * delta),
                velocities=list(v * delta),
                time_from_start=_duration(hold_s + s * duration_s),
            )
        )
    return msg


class PairRig:
    """The pair node on its own context and executor, a client node on another, one domain."""

    def __init__(self, overrides=None):
        from rclpy.parameter import Parameter

        domain_id = random.SystemRandom().randint(1, 101)
        self.name = DEFAULT_PAIR_NODE_NAME
        self.node_context = rclpy.context.Context()
        rclpy.init(context=self.node_context, domain_id=domain_id)
        params = [Parameter(k, value=v) for k, v in (overrides or {}).items()]
        self.node = JtacPairNode(self.name, context=self.node_context, parameter_overrides=params)
        self.node_executor = MultiThreadedExecutor(num_threads=8, context=self.node_context)
        self.node_executor.add_node(self.node)
        self.node_spinner = Spinner(self.node_executor)
        self.client_context = rclpy.context.Context()
        rclpy.init(context=self.client_context, domain_id=domain_id)
        self.client = rclpy.create_node("jtac_pair_test_client", context=self.client_context)
        # One thread: the client's callbacks only append, and its entities share the default
        # mutually exclusive group, which a multi-threaded executor contends for (rclpy retries the
        # group busily): here a 100 Hz state topic then delayed the client's service and action
        # replies by 50-900 ms in about one process in five.
        self.client_executor = SingleThreadedExecutor(context=self.client_context)
        self.client_executor.add_node(self.client)
        self.client_spinner = Spinner(self.client_executor)
        ns = f"/{self.name}"
        self.pair = ActionClient(self.client, FollowJointTrajectory, f"{ns}/follow_joint_trajectory")
        self.arm = {
            arm: ActionClient(self.client, FollowJointTrajectory, f"{ns}/{arm}/follow_joint_trajectory")
            for arm in ARMS
        }
        self.joint_states: list[JointState] = []
        self.client.create_subscription(JointState, "/joint_states", self.joint_states.append, 100)

    def start(self):
        self.node.start()
        for client in (self.pair, *self.arm.values()):
            assert client.wait_for_server(timeout_sec=WAIT_S)
        self.wait_for(lambda: self.joint_states, what="joint_states")
        return self

    def wait(self, future, timeout=WAIT_S):
        deadline = time.monotonic() + timeout
        while not future.done():
            assert time.monotonic() < deadline, "timed out waiting for a ROS future"
            time.sleep(0.005)
        return future.result()

    def wait_for(self, condition, timeout=WAIT_S, what="a condition"):
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.01)

    def send(self, goal, client=None, feedback=None):
        handle = self.wait((client or self.pair).send_goal_async(goal, feedback_callback=feedback))
        assert handle.accepted
        return handle

    def finish(self, handle):
        """The action's (status, result) once it ended."""
        response = self.wait(handle.get_result_async(), GOAL_TIMEOUT_S)
        return response.status, response.result

    def q_rad(self):
        """The 14 measured positions of a joint_states message published after this call, by name."""
        n = len(self.joint_states)
        self.wait_for(lambda: len(self.joint_states) > n, what="a fresh joint_states")
        msg = self.joint_states[-1]
        return dict(zip(msg.name, msg.position, strict=True))

    def arm_q_rad(self, arm, q_by_name=None):
        q = q_by_name or self.q_rad()
        return np.array([q[f"{arm}_{j}"] for j in JOINTS])

    def settled(self):
        """joint_states once every velocity is 0 (every arm at rest), by name."""

        def still():
            msg = self.joint_states[-1]
            return np.abs(msg.velocity).max() < 1e-6

        self.wait_for(lambda: self.joint_states and still(), what="both arms at rest")
        return self.q_rad()

    def set_parameter(self, name, value):
        client = self.client.create_client(SetParameters, f"/{self.name}/set_parameters")
        assert client.wait_for_service(timeout_sec=WAIT_S)
        pv = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=float(value))
        request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=pv)])
        return self.wait(client.call_async(request)).results[0]

    def tare(self, arm):
        client = self.client.create_client(Trigger, f"/{self.name}/{arm}/zero_fts")
        assert client.wait_for_service(timeout_sec=WAIT_S)
        return self.wait(client.call_async(Trigger.Request()))

    def close(self):
        self.client_spinner.stop(60.0)
        for client in (self.pair, *self.arm.values()):
            client.destroy()
        self.client.destroy_node()
        rclpy.shutdown(context=self.client_context)
        self.node.stop()
        self.node_spinner.stop(60.0)
        self.node.destroy_node()
        gc.collect()
        rclpy.shutdown(context=self.node_context)


@pytest.fixture
def rig():
    r = PairRig()
    try:
        yield r.start()
    finally:
        r.close()


def _pair_q(rig, q_by_name):
    return np.concatenate([rig.arm_q_rad(arm, q_by_name) for arm in ARMS])


# ============================================================================ the 14-joint goal


def test_pair_goal_moves_both_arms_to_their_targets(rig):
    q0 = _pair_q(rig, rig.settled())
    target = q0 + np.concatenate([DELTA_RAD, -DELTA_RAD])
    feedback = []
    handle = rig.send(_goal(PAIR_JOINTS, q0, target, 1.0), feedback=lambda f: feedback.append(f.feedback))
    status, result = rig.finish(handle)
    assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert "left: SUCCESSFUL" in result.error_string and "right: SUCCESSFUL" in result.error_string
    q_end = _pair_q(rig, rig.settled())
    assert np.abs(q_end - target).max() < AT_TARGET_RAD, q_end - target
    assert feedback and list(feedback[-1].joint_names) == PAIR_JOINTS
    assert len(feedback[-1].actual.positions) == 14


def test_cancel_stops_both_arms(rig):
    q0 = _pair_q(rig, rig.settled())
    target = q0 + np.concatenate([DELTA_RAD, DELTA_RAD])
    handle = rig.send(_goal(PAIR_JOINTS, q0, target, 4.0))

    def both_under_way():
        q = _pair_q(rig, rig.q_rad())
        return all(np.abs(q[cut] - q0[cut]).max() > 0.02 for cut in (slice(0, 7), slice(7, 14)))

    rig.wait_for(both_under_way, what="both arms under way")
    rig.wait(handle.cancel_goal_async())
    status, _ = rig.finish(handle)
    assert status == GoalStatus.STATUS_CANCELED
    q_end = _pair_q(rig, rig.settled())
    for arm in range(2):
        cut = slice(7 * arm, 7 * arm + 7)
        moved = np.abs(q_end[cut] - q0[cut]).max()
        left_to_go = np.abs(q_end[cut] - target[cut]).max()
        assert moved > 0.02 and left_to_go > 0.02, (ARMS[arm], moved, left_to_go)


def test_one_arm_failing_aborts_the_pair_goal_and_stops_the_other(rig):
    q0 = _pair_q(rig, rig.settled())
    goal = _goal(PAIR_JOINTS, q0, q0 + np.concatenate([DELTA_RAD, DELTA_RAD]), 2.0)
    # The simulated arm lags its command by more than 1e-5 rad: the left arm's part aborts mid-path.
    goal.path_tolerance = [_tolerance(name, 1e-5) for name in PAIR_JOINTS[:7]]
    status, result = rig.finish(rig.send(goal))
    assert status == GoalStatus.STATUS_ABORTED
    assert result.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED, result.error_string
    assert "left: PATH_TOLERANCE_VIOLATED" in result.error_string
    assert "right: CANCELED" in result.error_string  # braked to rest with its partner
    rig.settled()


def test_a_newer_pair_goal_replaces_the_running_one_on_both_arms(rig):
    q0 = _pair_q(rig, rig.settled())
    # The first goal holds still for its first 5 s: the second stitches onto it at rest (a moving
    # first goal would ask the second to match its velocity at the stitch).
    feedback = []
    first_goal = _goal(PAIR_JOINTS, q0, q0 + np.concatenate([DELTA_RAD, DELTA_RAD]), 2.0, hold_s=5.0)
    first = rig.send(first_goal, feedback=feedback.append)
    # Feedback comes every 10 ms from the goal's acceptance on: 20 of them are past the arms' start.
    rig.wait_for(lambda: len(feedback) >= 20, what="the first goal executing")
    target = q0 - np.concatenate([DELTA_RAD, DELTA_RAD]) / 2
    second = rig.send(_goal(PAIR_JOINTS, q0, target, 2.0))
    status, result = rig.finish(first)
    assert status == GoalStatus.STATUS_ABORTED
    for arm in ARMS:  # replaced on both arms, neither canceled
        assert f"{arm}: GOAL_ABORTED_DUE_TO_STITCHING" in result.error_string, result.error_string
    status, result = rig.finish(second)
    assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
    assert np.abs(_pair_q(rig, rig.settled()) - target).max() < AT_TARGET_RAD


def test_header_stamp_ahead_starts_both_then_and_one_in_the_past_is_refused(rig):
    q0 = _pair_q(rig, rig.settled())
    target = q0 + np.concatenate([DELTA_RAD, DELTA_RAD]) / 4
    late = _goal(PAIR_JOINTS, q0, target, 0.5)
    late.trajectory.header.stamp = (
        rig.client.get_clock().now() - rclpy.duration.Duration(seconds=0.2)
    ).to_msg()
    status, result = rig.finish(rig.send(late))
    assert status == GoalStatus.STATUS_ABORTED and "past" in result.error_string
    ahead = _goal(PAIR_JOINTS, q0, target, 0.5)
    start = rig.client.get_clock().now() + RosDuration(seconds=1.0)
    ahead.trajectory.header.stamp = start.to_msg()
    n0 = len(rig.joint_states)
    status, result = rig.finish(rig.send(ahead))
    assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
    assert np.abs(_pair_q(rig, rig.settled()) - target).max() < AT_TARGET_RAD
    # Neither arm moved before the stamp: the first joint_states showing motion was published after it.
    moved = [m for m in rig.joint_states[n0:] if np.abs(np.array(m.position) - q0).max() > STILL_RAD]
    first_stamp_ns = moved[0].header.stamp.sec * 10**9 + moved[0].header.stamp.nanosec
    assert first_stamp_ns >= start.nanoseconds


def _tolerance(name, position_rad):
    from control_msgs.msg import JointTolerance

    return JointTolerance(name=name, position=position_rad)


# ============================================================================ goals for some arms


def test_arm_goal_moves_that_arm_and_leaves_the_other_still(rig):
    q0 = rig.settled()
    left0, right0 = rig.arm_q_rad("left", q0), rig.arm_q_rad("right", q0)
    names = [f"left_{j}" for j in JOINTS]
    handle = rig.send(_goal(names, left0, left0 + DELTA_RAD, 1.0), client=rig.arm["left"])
    right_during = []
    result_future = handle.get_result_async()
    while not result_future.done():
        right_during.append(rig.arm_q_rad("right"))
    status, result = rig.finish(handle)
    assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
    q_end = rig.settled()
    assert np.abs(rig.arm_q_rad("left", q_end) - (left0 + DELTA_RAD)).max() < AT_TARGET_RAD
    assert right_during and np.abs(np.array(right_during) - right0).max() < STILL_RAD


def test_arm_action_refuses_the_other_arms_joints(rig):
    q = rig.arm_q_rad("right", rig.settled())
    names = [f"right_{j}" for j in JOINTS]
    status, result = rig.finish(rig.send(_goal(names, q, q + 0.05, 0.5), client=rig.arm["left"]))
    assert status == GoalStatus.STATUS_ABORTED
    assert result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS
    assert "right_fr3_joint1" in result.error_string


def test_pair_goal_naming_one_arm_moves_that_arm_only(rig):
    q0 = rig.settled()
    right0, left0 = rig.arm_q_rad("right", q0), rig.arm_q_rad("left", q0)
    names = [f"right_{j}" for j in JOINTS]
    status, result = rig.finish(rig.send(_goal(names, right0, right0 - DELTA_RAD, 1.0)))
    assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
    assert "left" not in result.error_string
    q_end = rig.settled()
    assert np.abs(rig.arm_q_rad("right", q_end) - (right0 - DELTA_RAD)).max() < AT_TARGET_RAD
    assert np.abs(rig.arm_q_rad("left", q_end) - left0).max() < STILL_RAD


def test_pair_goal_naming_part_of_an_arm_or_an_unknown_joint_is_refused(rig):
    q0 = rig.settled()
    left0 = rig.arm_q_rad("left", q0)
    part = [f"left_{j}" for j in JOINTS[:3]]
    status, result = rig.finish(rig.send(_goal(part, left0[:3], left0[:3] + 0.1, 0.5)))
    assert status == GoalStatus.STATUS_ABORTED
    assert result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS
    assert "left_fr3_joint4" in result.error_string and "left_fr3_joint7" in result.error_string
    unknown = [*PAIR_JOINTS[:13], "middle_fr3_joint7"]
    q = _pair_q(rig, q0)
    status, result = rig.finish(rig.send(_goal(unknown, q[:14], q[:14], 0.5)))
    assert result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS
    assert "middle_fr3_joint7" in result.error_string
    assert np.abs(_pair_q(rig, rig.q_rad()) - q).max() < STILL_RAD  # nothing moved


# ============================================================================ state and description


def test_joint_states_and_robot_description_name_both_arms(rig):
    received = []
    latched = QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
    )
    rig.client.create_subscription(String, "/robot_description", received.append, latched)
    rig.wait_for(lambda: received, what="robot_description")
    assert list(rig.joint_states[-1].name) == PAIR_JOINTS
    assert len(rig.joint_states[-1].position) == len(rig.joint_states[-1].velocity) == 14
    robot = ET.fromstring(received[0].data)
    links = {link.get("name") for link in robot.iter("link")}
    joints = {j.get("name"): j for j in robot.iter("joint")}
    assert "world" in links
    assert {"left_fr3_link0", "right_fr3_link0"} <= links
    moving = sorted(name for name, j in joints.items() if j.get("type") != "fixed")
    assert moving == sorted(PAIR_JOINTS)
    for arm, y_m in (("left", 0.3), ("right", -0.3)):
        base = joints[f"{arm}_base_joint"]
        assert base.find("parent").get("link") == "world"
        assert base.find("child").get("link") == f"{arm}_fr3_link0"
        xyz = [float(v) for v in base.find("origin").get("xyz").split()]
        assert xyz == pytest.approx([0.0, y_m, 0.0])


# ============================================================================ per-arm settings


def test_time_scale_is_per_arm(rig):
    assert rig.set_parameter("left.time_scale_percentage", 50.0).successful
    refused = rig.set_parameter("right.time_scale_percentage", 150.0)
    assert not refused.successful and "time_scale_percentage" in refused.reason
    controllers = rig.node.group.controllers
    assert controllers["left"].time_scale == 50.0 and controllers["right"].time_scale == 100.0
    time.sleep(1.0)  # the scale's ramp (filter constant 0.1 s) is over
    q0 = _pair_q(rig, rig.settled())
    goal = _goal(PAIR_JOINTS, q0, q0 + np.concatenate([DELTA_RAD, DELTA_RAD]), 1.0)
    with rig.node.group.record(["time", "trajectory_time"]) as recording:
        status, result = rig.finish(rig.send(goal))
    assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
    for arm, speed in (("left", 0.5), ("right", 1.0)):
        rows = recording.data()[arm]
        inside = (rows["trajectory_time"] > 0.1) & (rows["trajectory_time"] < 0.9)
        assert inside.sum() > 100, (arm, inside.sum())
        slope = np.polyfit(rows["time"][inside], rows["trajectory_time"][inside], 1)[0]
        assert slope == pytest.approx(speed, abs=0.02), arm


def test_time_scale_given_at_start_reaches_that_arm_only():
    r = PairRig({"right.time_scale_percentage": 25.0})
    try:
        controllers = r.node.group.controllers
        assert controllers["right"].time_scale == 25.0 and controllers["left"].time_scale == 100.0
    finally:
        r.close()


def test_zero_fts_is_per_arm(rig):
    for arm in ARMS:
        response = rig.tare(arm)
        assert response.success, response.message
        assert "fr3_ft_sensor" in response.message
    # The left arm executing a goal: its tare is refused, the right arm's (at rest) still answers.
    left0 = rig.arm_q_rad("left", rig.settled())
    names = [f"left_{j}" for j in JOINTS]
    handle = rig.send(_goal(names, left0, left0 + DELTA_RAD, 3.0), client=rig.arm["left"])
    rig.wait_for(lambda: np.abs(rig.joint_states[-1].velocity[:7]).max() > 1e-3, what="the left arm moving")
    busy = rig.tare("left")
    assert not busy.success and busy.message
    assert rig.tare("right").success
    status, _ = rig.finish(handle)
    assert status == GoalStatus.STATUS_SUCCEEDED


# ============================================================================ the command line


def _run_main(*ros_args):
    """`python -m jtac_ros.pair_node` with ros_args: its output once it said it runs (SIGINT then)
    or exited, and its exit status."""
    command = [sys.executable, "-m", "jtac_ros.pair_node", "--ros-args", *ros_args]
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        for line in process.stdout:
            lines.append(line)
            if "running:" in line:
                process.send_signal(signal.SIGINT)
        status = process.wait(timeout=GOAL_TIMEOUT_S)
    return status, "".join(lines)


def test_main_runs_the_pair_until_sigint_and_refuses_a_bad_time_scale():
    status, output = _run_main("-p", "left.time_scale_percentage:=40.0")
    assert status == 0, output
    assert "arms ['left', 'right'], 14 joints" in output
    status, output = _run_main("-p", "right.time_scale_percentage:=150.0")
    assert status == 2, output
    assert "right.time_scale_percentage" in output
