"""Every tip's wrench over real DDS, and time_from_start under a speed change (test/ros/node_rig.py:
the node on its own context, the client on another, localhost, the session's ROS_DOMAIN_ID).

Two tips: tip 0 reads the simulated arm's flange sensor (fr3_ft_sensor), tip 1 a second sensor at
fr3_link7 that is not the arm's (``ft_sensors.fr3_link7.name: wrist_ati``), whose readings a client
publishes on ``~/wrench/fr3_link7/input``; tip 1 controls fr3_tcp.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from control_msgs.action import FollowJointTrajectory  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from jtac.action import FollowJointTrajectoryWithAdmittance as Fjta  # noqa: E402
from jtac.msg import AdmittanceParameters  # noqa: E402
from node_rig import DELTA, JOINTS, Rig, _duration, _goal  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from jtac_py import _native  # noqa: E402

pytestmark = pytest.mark.ros

FRAMES = ["fr3_ft_sensor", "fr3_link7"]
TWO_TIPS = {
    "sensor_frames": FRAMES,
    "ee_frames": ["fr3_ee", "fr3_tcp"],
    "ft_sensors.fr3_link7.name": "wrist_ati",
    "default_path_tolerance": 0.3,
    "default_goal_time_tolerance": 0.5,
}
W1 = [2.0, -3.0, 5.0, 0.1, 0.2, -0.3]  # tip 1's reading [N, N·m] in fr3_link7 axes
K_LINEAR = 400.0  # [N/m]


def _wrench(msg):
    f, t = msg.wrench.force, msg.wrench.torque
    return [f.x, f.y, f.z, t.x, t.y, t.z]


def _reading(values, frame="fr3_link7"):
    msg = WrenchStamped()
    msg.header.frame_id = frame
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in values)
    return msg


def _tip(frame, stiffness, damping, axes):
    a = AdmittanceParameters()
    a.end_effector_frame = frame
    a.mass = [4.0, 4.0, 4.0, 1.0, 1.0, 1.0]
    a.stiffness = list(stiffness)
    a.damping = list(damping)
    a.selected_axes = list(axes)
    return a


@pytest.fixture
def tips_rig():
    r = Rig(TWO_TIPS).activate()
    r.wrenches = {(frame, kind): [] for frame in FRAMES for kind in ("raw", "filtered")}
    for (frame, kind), received in r.wrenches.items():
        r.client.create_subscription(WrenchStamped, f"{r.ns}/wrench/{frame}/{kind}", received.append, 100)
    topic = f"{r.ns}/wrench/fr3_link7/input"
    r.feed = r.client.create_publisher(WrenchStamped, topic, qos_profile_sensor_data)
    r.wait_for(lambda: r.feed.get_subscription_count() > 0, what="the node's ~/wrench/fr3_link7/input")
    r.wait_for(lambda: all(r.wrenches.values()), what="every tip's wrench topics")
    yield r
    r.close()


def _feed_until_published(rig, values, timeout=5.0):
    """Publishes a reading of tip 1's sensor until the node's tip-1 raw topic shows it."""
    deadline = time.monotonic() + timeout
    raw = rig.wrenches[("fr3_link7", "raw")]
    while not raw or _wrench(raw[-1]) != list(values):
        assert time.monotonic() < deadline, f"tip 1's raw topic never showed {values}"
        rig.feed.publish(_reading(values))
        time.sleep(0.02)


def test_both_tips_wrenches_are_published_and_a_two_tip_goal_uses_the_fed_one(tips_rig):
    rig = tips_rig
    node_controller = rig.node._controller
    assert node_controller.wrench_sources == {"fr3_ft_sensor": "device", "fr3_link7": "external"}
    # Tip 1: what its sensor's driver publishes, exactly, in its own frame; tip 0: the arm's sensor,
    # pushed with 15 N at the TCP.
    _feed_until_published(rig, W1)
    time.sleep(0.1)  # the other topics' messages of earlier states have arrived
    n0 = {key: len(msgs) for key, msgs in rig.wrenches.items()}
    with node_controller.record(["wrenches_raw", "wrench_raw"]) as rec:
        node_controller.hardware.push([0.0, 15.0, 0.0], 0.5)
        time.sleep(0.8)
    since = {key: msgs[n0[key] :] for key, msgs in rig.wrenches.items()}
    assert len(since[("fr3_link7", "raw")]) > 5 and len(since[("fr3_ft_sensor", "raw")]) > 5
    for kind in ("raw", "filtered"):
        for msg in since[("fr3_link7", kind)]:
            assert msg.header.frame_id == "fr3_link7"
            np.testing.assert_allclose(_wrench(msg), W1, rtol=0, atol=1e-12)  # no filter, deadband, tare
        for msg in since[("fr3_ft_sensor", kind)]:
            assert msg.header.frame_id == "fr3_ft_sensor"
    tip0_n = [np.linalg.norm(_wrench(m)[:3]) for m in since[("fr3_ft_sensor", "raw")]]
    assert max(tip0_n) == pytest.approx(15.0, rel=0.25)
    # record(): both tips' columns, tip 1 fed in every row, tip 0 the push.
    data = rec.data()
    assert data["wrenches_raw"].shape[1:] == (2, 6) and rec.rows > 100
    np.testing.assert_array_equal(data["wrenches_raw"][:, 1], np.tile(W1, (rec.rows, 1)))
    np.testing.assert_array_equal(data["wrench_raw"], data["wrenches_raw"][:, 0])
    assert np.linalg.norm(data["wrenches_raw"][:, 0, :3], axis=1).max() == pytest.approx(15.0, rel=0.25)

    # A reading stamped in another frame is dropped (and said so in the log).
    n_log = len(rig.logs)
    for _ in range(5):
        rig.feed.publish(_reading([9.0] * 6, frame="fr3_link8"))
        time.sleep(0.02)
    rig.wait_for(
        lambda: any("fr3_link8" in m.msg for m in rig.log_lines(n_log)), what="the dropped-frame note"
    )
    assert _wrench(rig.wrenches[("fr3_link7", "raw")][-1]) == W1

    # A two-tip goal: tip 0 free (no spring), tip 1 compliant in x y z; the fed 8 N deflects tip 1's
    # control frame by F/K while both tips' topics keep publishing.
    time.sleep(1.0)  # the push has decayed
    q0 = rig.q_cmd()
    goal = _goal(q0, q0, 4.0)
    goal.admittance_parameters = _tip("fr3_ee", [0.0] * 6, [40.0] * 3 + [10.0] * 3, [True] * 6)
    goal.additional_tips = [
        _tip("fr3_tcp", [K_LINEAR] * 3 + [50.0] * 3, [80.0] * 3 + [14.0] * 3, [True] * 3 + [False] * 3)
    ]
    force = [0.0, 0.0, 8.0, 0.0, 0.0, 0.0]
    handle = rig.send(goal)
    _feed_until_published(rig, force)
    time.sleep(2.0)  # critically damped at ω = 10 rad/s: settled
    state = node_controller.state
    assert np.linalg.norm(state.wrenches_control[1][:3]) == pytest.approx(8.0, abs=1e-9)
    kin = _native.Kinematics()
    kin.configure(node_controller.hardware.urdf_xml, "fr3_link0", JOINTS)
    last = rig.states[-1]
    tcp_command = kin.forward(np.array(last.output.positions), "fr3_tcp")[:3, 3]
    tcp_reference = kin.forward(np.array(last.reference.positions), "fr3_tcp")[:3, 3]
    deflection = tcp_command - tcp_reference
    assert np.linalg.norm(deflection) == pytest.approx(8.0 / K_LINEAR, rel=0.1)
    _feed_until_published(rig, [0.0] * 6)
    assert rig.wait(handle.get_result_async()).result.error_code == Fjta.Result.SUCCESSFUL


def _quintic(s):
    """Position, velocity and acceleration fractions of a rest-to-rest quintic at s ∈ [0, 1]."""
    p = 10 * s**3 - 15 * s**4 + 6 * s**5
    return p, 30 * s**2 - 60 * s**3 + 30 * s**4, 60 * s - 180 * s**2 + 120 * s**3


def _tau_of_reference(positions, q0, delta, duration_s):
    """The trajectory time at which the quintic from q0 by delta reaches `positions` (bisection)."""
    j = int(np.argmax(np.abs(delta)))
    target = (positions[j] - q0[j]) / delta[j]
    lo, hi = 0.0, 1.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _quintic(mid)[0] < target else (lo, mid)
    return 0.5 * (lo + hi) * duration_s


def test_time_from_start_is_exact_while_the_speed_scale_changes_mid_goal(rig):
    # Positions, velocities and accelerations of one quintic (as MoveIt sends them): the reference is
    # that quintic exactly, so where it lies says which trajectory time was sampled.
    q0, duration_s = rig.q_cmd(), 3.0
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = JOINTS
    for k in range(31):
        s = k / 30
        p, v, a = _quintic(s)
        goal.trajectory.points.append(
            JointTrajectoryPoint(
                positions=list(q0 + p * DELTA),
                velocities=list(v / duration_s * DELTA),
                accelerations=list(a / duration_s**2 * DELTA),
                time_from_start=_duration(s * duration_s),
            )
        )
    n0 = len(rig.states)
    handle = rig.send(goal, client=rig.moveit)
    time.sleep(0.8)
    assert rig.set_parameter("time_scale_percentage", 30.0).successful  # ramps down mid-goal ...
    time.sleep(1.5)
    assert rig.set_parameter("time_scale_percentage", 100.0).successful  # ... and back up
    result = rig.wait(handle.get_result_async(), timeout=30.0).result
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.error_string
    states = list(rig.states[n0:])

    def seconds(d):
        return d.sec + d.nanosec * 1e-9

    mid = [m for m in states if 0.3 < seconds(m.reference.time_from_start) < duration_s - 0.3]
    ramping = [m for m in mid if 0.35 < m.speed_scaling_factor < 0.95]
    assert len(mid) > 20 and len(ramping) >= 3, f"{len(mid)} mid-path states, {len(ramping)} while ramping"
    errors = [
        seconds(m.reference.time_from_start) - _tau_of_reference(m.reference.positions, q0, DELTA, duration_s)
        for m in mid
    ]
    # Exact but for the message's nanosecond resolution (the reconstruction from the published scale
    # this replaced was off by up to a millisecond while the scale ramped).
    assert np.max(np.abs(errors)) < 2e-9, f"max |time_from_start - τ(reference)| = {np.max(np.abs(errors))}"
    assert max(seconds(m.reference.time_from_start) for m in states) <= duration_s + 1e-9
