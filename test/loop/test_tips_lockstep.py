"""Every tip through the Python API, and the trajectory time of the reference, in lockstep.

Layer: loop with simulated hardware (as test_controller_lockstep.py). Two tips: tip 0 reads the
simulated arm's flange sensor, tip 1 a second sensor at fr3_link7 that is not the arm's (its readings
are fed with Controller.feed_wrench) and controls fr3_tcp. Numbers: the fed reading arrives exactly,
the arm's sensor reads the push, tip 1's admittance deflects its control frame by F/K; the reference
is the planned quintic at exactly the trajectory time the state carries, while the scale ramps.
"""

import numpy as np
import pytest

from jtac_py import _native
from jtac_py.controller import RECORD_FIELDS, Controller, Trajectory
from jtac_py.hardware import SimulatedArm

EXECUTING = int(_native.ControllerMode.EXECUTING)
DELTA = np.array([0.3, -0.25, 0.2, 0.3, -0.3, 0.25, 0.4])  # [rad]
K_LINEAR = 400.0  # [N/m]
TWO_TIPS = {
    "sensor_frames": ["fr3_ft_sensor", "fr3_link7"],
    "ee_frames": ["fr3_ee", "fr3_tcp"],
    "ft_sensors.fr3_link7.name": "wrist_ati",  # not the arm's sensor: fed
    "default_path_tolerance": 0.3,
}
W1 = np.array([2.0, -3.0, 5.0, 0.1, 0.2, -0.3])  # tip 1's reading [N, N·m], fr3_link7 axes
# A two-tip goal on one chain: fr3_tcp (tip 1) is rigidly 0.1 m from fr3_ee (tip 0), so tip 0 is left
# free (compliant on every axis, no spring: its unselected axes would otherwise be held stiffly) and
# tip 1 yields along x y z by F/K and holds its orientation.
TIP0_FREE = {
    "end_effector_frame": "fr3_ee",
    "mass": [4.0, 4.0, 4.0, 1.0, 1.0, 1.0],
    "stiffness": [0.0] * 6,
    "damping": [40.0] * 3 + [10.0] * 3,
    "selected_axes": [True] * 6,
}
TIP1_COMPLIANT = {
    "end_effector_frame": "fr3_tcp",
    "mass": [4.0, 4.0, 4.0, 1.0, 1.0, 1.0],
    "stiffness": [K_LINEAR] * 3 + [50.0] * 3,
    "selected_axes": [True, True, True, False, False, False],
}


@pytest.fixture
def two_tips():
    arm = SimulatedArm("fr3", clock="lockstep")
    controller = Controller(arm, TWO_TIPS).start()
    controller.step(20)
    yield arm, controller
    controller.stop()


def _kinematics(arm, controller):
    kin = _native.Kinematics()
    kin.configure(arm.urdf_xml, "fr3_link0", controller.joint_names)
    return kin


def test_tip_1_reads_its_fed_sensor_and_tip_0_the_arm_in_the_state_and_the_recording(two_tips):
    arm, c = two_tips
    assert c.num_tips == 2
    assert c.wrench_sources == {"fr3_ft_sensor": "device", "fr3_link7": "external"}
    assert c.state.wrenches_raw.shape == (2, 6)
    np.testing.assert_array_equal(c.state.wrenches_raw[1], np.zeros(6))  # nothing fed yet
    fields = ["time", "wrench_raw", "wrenches_raw", "wrenches_filtered", "wrenches_control"]
    with c.record(fields) as rec:
        c.feed_wrench("fr3_link7", W1)
        c.step(1)  # the next controller cycle (1 kHz) takes it
        n_before_push = rec.rows
        arm.push([0.0, 15.0, 0.0], 0.3)  # world +y at the TCP: through the arm's sensor (tip 0)
        c.step(400)
    s = c.state
    np.testing.assert_array_equal(s.wrenches_raw[1], W1)
    np.testing.assert_allclose(s.wrenches_filtered[1], W1, atol=1e-12)  # no filter, deadband, tare
    # Tip 1's control wrench: the reading in fr3_tcp's axes about fr3_tcp (no payload).
    kin = _kinematics(arm, c)
    R_tcp_link7 = kin.forward(s.q, "fr3_tcp")[:3, :3].T @ kin.forward(s.q, "fr3_link7")[:3, :3]
    np.testing.assert_allclose(s.wrenches_control[1][:3], R_tcp_link7 @ W1[:3], atol=1e-9)
    # Tip 0's names are tip 0's rows.
    np.testing.assert_array_equal(s.wrench_raw, s.wrenches_raw[0])
    np.testing.assert_array_equal(s.wrench_filtered, s.wrenches_filtered[0])
    np.testing.assert_array_equal(s.wrench_control, s.wrenches_control[0])

    data = rec.data()
    n = rec.rows
    assert n == n_before_push + 400
    assert data["wrenches_raw"].shape == (n, 2, 6) and data["wrenches_control"].shape == (n, 2, 6)
    np.testing.assert_array_equal(data["wrench_raw"], data["wrenches_raw"][:, 0])
    np.testing.assert_array_equal(data["wrenches_raw"][:, 1], np.tile(W1, (n, 1)))  # every row
    # Tip 0 read the arm's sensor: the push passed through it; tip 1 never saw it.
    tip0_n = np.linalg.norm(data["wrenches_raw"][:, 0, :3], axis=1)
    assert tip0_n[:n_before_push].max() < 0.5
    assert tip0_n.max() == pytest.approx(15.0, rel=0.2)


def test_a_fed_reading_drives_tip_1s_admittance_by_f_over_k(two_tips):
    arm, c = two_tips
    kin = _kinematics(arm, c)
    q0 = c.state.q_cmd
    handle = c.follow(Trajectory.quintic(q0, q0, 6.0), admittance=[TIP0_FREE, TIP1_COMPLIANT], wait=False)
    c.step(200)
    force = np.array([0.0, 0.0, 8.0, 0.0, 0.0, 0.0])  # [N] along fr3_link7's z
    c.feed_wrench("fr3_link7", force)
    c.step(1800)  # critically damped, ω = 10 rad/s: settled
    s = c.state
    f_control = s.wrenches_control[1][:3]
    assert np.linalg.norm(f_control) == pytest.approx(8.0, abs=1e-9)
    T_cmd, T_ref = kin.forward(s.q_cmd, "fr3_tcp"), kin.forward(s.q_ref, "fr3_tcp")
    deflection = T_cmd[:3, :3].T @ (T_cmd[:3, 3] - T_ref[:3, 3])  # [m], control (fr3_tcp) axes
    np.testing.assert_allclose(deflection, f_control / K_LINEAR, atol=0.1 * 8.0 / K_LINEAR)
    # Tip 0 saw nothing: its ee frame moved only with the arm, its wrench stayed at zero.
    assert np.linalg.norm(s.wrenches_raw[0][:3]) < 0.5
    c.feed_wrench("fr3_link7", np.zeros(6))  # released: back to the reference
    c.step(2500)
    assert np.linalg.norm(kin.forward(c.state.q_cmd, "fr3_tcp")[:3, 3] - T_ref[:3, 3]) < 1e-4
    assert handle.result(timeout=10.0).ok


def test_feed_wrench_refuses_what_is_no_external_sensor(two_tips):
    _, c = two_tips
    with pytest.raises(ValueError, match=r"tip 0 reads the arm's own sensor"):
        c.feed_wrench("fr3_ft_sensor", W1)
    with pytest.raises(ValueError, match=r"'fr3_hand' is not a sensor frame"):
        c.feed_wrench("fr3_hand", W1)
    with pytest.raises(ValueError, match=r"wrench has 3 values, expected 6"):
        c.feed_wrench("fr3_link7", W1[:3])
    # A tip without a sensor name has no sensor: it takes no readings.
    arm = SimulatedArm("fr3", clock="lockstep")
    config = {
        **TWO_TIPS,
        "ft_sensor_name": "",
        "ft_sensors.fr3_ft_sensor.name": "fr3_ft",
        "ft_sensors.fr3_link7.name": "",
        "record_buffer_cycles": 100,
    }
    partial = Controller(arm, config)
    assert partial.wrench_sources == {"fr3_ft_sensor": "device", "fr3_link7": "none"}
    with pytest.raises(ValueError, match=r"tip 1 has no force/torque sensor"):
        partial.feed_wrench("fr3_link7", W1)


def test_wrench_sources_follow_the_sensor_names():
    from jtac_py.config import wrench_sources

    frames = {"sensor_frames": ["a", "b", "c"], "ee_frames": ["x", "y", "z"]}
    # The arm's sensor named: its tip reads it, wherever it is; the others are external.
    values = {**frames, "ft_sensor_name": "ati", "ft_sensors.b.name": "fr3_ft"}
    assert wrench_sources(values, "fr3_ft") == ["external", "device", "external"]
    # Named its own way (a configuration for another driver): tip 0 reads the arm, as before.
    assert wrench_sources({**frames, "ft_sensor_name": "ati"}, "fr3_ft") == ["device", "external", "external"]
    # No sensor name: zero; an arm without a sensor feeds no tip.
    assert wrench_sources({**frames, "ft_sensor_name": ""}, "fr3_ft") == ["none"] * 3
    assert wrench_sources({**frames, "ft_sensor_name": "ati"}, "") == ["external"] * 3


def test_the_trajectory_time_is_that_of_the_sampled_reference_while_the_scale_changes_mid_goal():
    arm = SimulatedArm("fr3", clock="lockstep")
    with Controller(arm, default_path_tolerance=0.3) as c:
        c.step(20)
        q0 = c.state.q_cmd  # the engine starts from the command: the quintic is then exact
        duration = 2.0
        with c.record(["time", "q_ref", "trajectory_time", "time_scale", "mode"]) as rec:
            handle = c.follow(Trajectory.quintic(q0, q0 + DELTA, duration), wait=False)
            c.step(600)
            c.time_scale = 40.0  # ramps down (0.1 s lag, rate-limited) mid-goal ...
            c.step(1200)
            c.time_scale = 100.0  # ... and back up
            result = handle.result(timeout=10.0)
        assert result.ok
        d = rec.data()
    run = (d["mode"][1:] == EXECUTING) & (d["mode"][:-1] == EXECUTING)
    tau = d["trajectory_time"][1:][run]
    scale = d["time_scale"][1:][run]
    assert scale.min() == pytest.approx(0.4, abs=1e-3)
    assert np.sum((scale > 0.45) & (scale < 0.95)) > 50  # the ramps were sampled
    # The reference is the planned quintic at exactly the carried τ ...
    u = np.clip(tau / duration, 0.0, 1.0)
    p = 10 * u**3 - 15 * u**4 + 6 * u**5
    np.testing.assert_allclose(d["q_ref"][1:][run], q0 + np.outer(p, DELTA), rtol=0, atol=1e-9)
    # ... and τ advances by dt·(s_prev + s)/2 each cycle (the engine's midpoint rule), ramps included.
    dt = np.diff(d["time"])[run]
    s_mid = 0.5 * (d["time_scale"][:-1][run] + scale)
    np.testing.assert_allclose(np.diff(d["trajectory_time"])[run], dt * s_mid, rtol=0, atol=1e-12)
    assert tau.max() == pytest.approx(duration, abs=0.002)


def test_the_record_fields_include_every_tip_and_the_trajectory_time():
    assert {"wrenches_raw", "wrenches_filtered", "wrenches_control", "trajectory_time"} <= set(RECORD_FIELDS)
    assert {"wrench_raw", "wrench_filtered", "wrench_control"} <= set(RECORD_FIELDS)  # tip 0's kept
