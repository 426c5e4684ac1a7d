"""The Python API over the native loop and the simulated FR3, in lockstep (deterministic).

Layer: loop with simulated hardware. Every test runs the real stack — MuJoCo physics with the
robot's joint impedance and an F/T sensor, the hardware thread's packet (rate matching + limiter),
the controller cycle and the Python API — stepped 1 ms at a time on a virtual clock. Numbers are
checked against physics and the controller's own predictions: ee deflection = F/K, minimum stop
time = max_j |v_j| / a_j, trajectory duration / time scale, the limiter's acceleration bound.
"""

import asyncio
import math

import numpy as np
import pytest

from jtac_py import _native, parameters, robots
from jtac_py.controller import LIMIT_MARGIN, RECORD_FIELDS, Controller, GoalError, Trajectory
from jtac_py.hardware import SimulatedArm

RC = _native.ResultCode
STOP_ACC = 5.0  # [rad/s²], the schema default
DELTA = np.array([0.3, -0.25, 0.2, 0.3, -0.3, 0.25, 0.4])  # [rad], a move that uses every joint
K_LINEAR = 400.0  # [N/m]
COMPLIANT = {
    "mass": [4.0, 4.0, 4.0, 1.0, 1.0, 1.0],
    "stiffness": [K_LINEAR] * 3 + [50.0] * 3,
    "selected_axes": [True, True, True, False, False, False],
}


def _controller(robot="fr3", **overrides):
    arm = SimulatedArm(robot, clock="lockstep")
    controller = Controller(arm, **overrides).start()
    controller.step(20)
    return arm, controller


@pytest.fixture
def rig():
    arm, controller = _controller(default_path_tolerance=0.3)
    yield arm, controller
    controller.stop()


def _kinematics(arm, controller):
    kin = _native.Kinematics()
    kin.configure(arm.urdf_xml, "fr3_link0", controller.joint_names)
    return kin


def _ee_offset(kin, q_a, q_b):
    """Position of the ee frame at q_a minus at q_b [m, base axes]."""
    return kin.forward(q_a, "fr3_ee")[:3, 3] - kin.forward(q_b, "fr3_ee")[:3, 3]


# ============================================================================ tracking


@pytest.mark.parametrize("rate", [1000, 125])
def test_seven_joint_quintic_tracks_within_bound(rate):
    _arm, c = _controller(update_rate=rate, default_goal_tolerance=0.01)
    q0 = c.state.q
    with c.record(["time", "q", "q_ref", "error"]) as rec:
        result = c.follow(Trajectory.quintic(q0, q0 + DELTA, 2.0), timeout=5.0)
    assert result.ok, result.message
    data = rec.data()
    # Peak |reference − measured| over the move (up to 2.6 rad/s² on joint 7): the robot's joint
    # impedance lags by a few mrad; at 125 Hz rate matching adds one controller interval of delay.
    bound = 0.005 if rate == 1000 else 0.012
    assert np.abs(data["error"]).max() < bound
    np.testing.assert_allclose(c.state.q, q0 + DELTA, atol=0.01)
    assert result.end_time_s - result.start_time_s == pytest.approx(2.0, abs=3.0 / rate + 1e-9)
    c.stop()


def test_a_slow_controller_drives_the_device_within_the_limiter():
    _arm, c = _controller(update_rate=125)
    spec = robots.robot_spec("fr3")
    acc_max = np.array(spec.ddq_max_rad_s2) * LIMIT_MARGIN
    q0 = c.state.q
    handle = c.follow(Trajectory.quintic(q0, q0 + DELTA, 1.5), wait=False)
    dq_prev = None
    steps = []
    while not handle.done():
        c.step(1)
        _, dq = c.device_command()
        if dq_prev is not None:
            steps.append(np.abs(dq - dq_prev))
        dq_prev = dq
    assert handle.result().ok
    steps = np.array(steps)
    # Every 1 ms packet changes the commanded velocity by at most a_max·T (the limiter's bound),
    # although the controller's own command changes only every 8 ms.
    assert np.all(steps <= acc_max * 0.001 + 1e-12)
    # … and between the 8 ms samples the reference follows the trajectory's own acceleration (the
    # quintic's peak, 10/√3·Δ/T²), not a velocity staircase closed at the limiter's bound: the
    # hardware thread continues a fixed-rate law's samples on a parabola through the last three.
    quintic_peak_rad_s2 = 10.0 / np.sqrt(3.0) * np.abs(DELTA) / 1.5**2
    np.testing.assert_allclose(steps.max(axis=0), quintic_peak_rad_s2 * 0.001, rtol=0.1)
    c.stop()


def test_the_packet_trace_holds_the_last_256_packets_the_robot_got():
    _arm, c = _controller(update_rate=125)
    q0 = c.state.q
    assert c.follow(Trajectory.quintic(q0, q0 + DELTA, 0.5), timeout=5.0).ok
    trace = c.packet_trace()
    assert len(trace["packet"]) == 256
    assert trace["q_cmd"].shape == trace["q_d_echo"].shape == (256, 7)
    np.testing.assert_array_equal(np.diff(trace["packet"]), 1)
    np.testing.assert_array_equal(np.diff(trace["tick"]), 1)
    q_cmd, dq_cmd = c.device_command()
    np.testing.assert_array_equal(trace["q_cmd"][-1], q_cmd)
    np.testing.assert_array_equal(trace["dq_cmd"][-1], dq_cmd)
    # The simulated arm echoes the command in force, one packet later.
    np.testing.assert_array_equal(trace["q_d_echo"][1:], trace["q_cmd"][:-1])
    # 125 Hz: a controller sample every 8 packets; lockstep never judges a command late.
    assert np.count_nonzero(trace["flags"] & 4) == pytest.approx(256 / 8, abs=2)
    assert not np.any(trace["flags"] & (2 | 32))
    c.stop()


def test_a_new_controller_holds_what_the_arm_is_commanded_not_where_a_push_holds_it():
    arm, first = _controller()
    arm.push([0.0, 30.0, 0.0], 5.0)  # [N] at the TCP: the arm's joint impedance gives way
    first.step(1000)
    q_d, _ = first.device_command()
    first.stop()
    deflection = np.abs(first.state.q - q_d).max()
    assert deflection > 2e-4  # [rad] the measured position is well off the command
    # ros2_controllers' JTC starts from its command interface: no pull toward the pushed position.
    second = Controller(arm).start()
    second.step(200)
    assert arm.pushes_active == 1
    np.testing.assert_array_equal(second.state.q_cmd, q_d)
    trace = second.packet_trace()
    np.testing.assert_array_equal(trace["q_cmd"], np.tile(q_d, (len(trace["q_cmd"]), 1)))
    assert np.abs(second.state.q - q_d).max() > 0.5 * deflection
    second.stop()


def test_time_scale_50_percent_doubles_the_duration(rig):
    _, c = rig
    q0 = c.state.q
    full = c.follow(Trajectory.quintic(q0, q0 + 0.5 * DELTA, 1.0), timeout=5.0)
    c.time_scale = 50.0
    assert c.time_scale == 50.0
    c.step(1000)  # the scale ramps at most 180 %/s through a 0.1 s lag: settled after 1 s
    half = c.follow(Trajectory.quintic(c.state.q, q0, 1.0), timeout=5.0)
    assert full.ok and half.ok
    d_full = full.end_time_s - full.start_time_s
    d_half = half.end_time_s - half.start_time_s
    assert d_full == pytest.approx(1.0, abs=0.002)
    assert d_half / d_full == pytest.approx(2.0, rel=0.01)
    assert c.state.time_scale == pytest.approx(0.5, abs=1e-6)


# ============================================================================ admittance


def test_a_push_on_a_compliant_axis_deflects_by_f_over_k_and_the_arm_returns(rig):
    arm, c = rig
    kin = _kinematics(arm, c)
    q0 = c.state.q
    handle = c.follow(Trajectory.quintic(q0, q0, 8.0), admittance=COMPLIANT, wait=False)
    c.step(500)
    force = np.array([0.0, 15.0, 0.0])  # [N], world y, at the TCP
    arm.push(force, 2.0)
    c.step(1800)  # critically damped, ω = 10 rad/s: settled well within 1.8 s
    s = c.state
    deflection = _ee_offset(kin, s.q_cmd, s.q_ref)
    np.testing.assert_allclose(deflection, force / K_LINEAR, atol=0.1 * np.linalg.norm(force) / K_LINEAR)
    # The arm follows the command (its own joint compliance adds a little under the load).
    assert np.dot(_ee_offset(kin, s.q, s.q_ref), force) > 0.9 * np.dot(force / K_LINEAR, force)
    c.step(2500)  # released at 2.5 s; 2.5 s later the spring has brought it back
    s = c.state
    assert np.linalg.norm(_ee_offset(kin, s.q_cmd, s.q_ref)) < 1e-4
    assert np.linalg.norm(_ee_offset(kin, s.q, s.q_ref)) < 2e-3
    assert handle.result(timeout=10.0).ok


def test_single_numbers_stand_for_all_six_axes_damping_included(rig):
    # mass 4 kg, K 400 N/m, D 80 N·s/m on x/y/z (ζ = 1): the same deflection as the per-axis form.
    arm, c = rig
    kin = _kinematics(arm, c)
    q0 = c.state.q
    scalar = {"mass": 4.0, "stiffness": K_LINEAR, "damping": 80.0, "selected_axes": [True] * 3 + [False] * 3}
    handle = c.follow(Trajectory.quintic(q0, q0, 4.0), admittance=scalar, wait=False)
    c.step(200)
    force = np.array([0.0, 12.0, 0.0])  # [N], world y, at the TCP
    arm.push(force, 1.5)
    c.step(1200)
    s = c.state
    deflection = _ee_offset(kin, s.q_cmd, s.q_ref)
    np.testing.assert_allclose(deflection, force / K_LINEAR, atol=0.1 * np.linalg.norm(force) / K_LINEAR)
    assert handle.warning == ""
    assert handle.result(timeout=10.0).ok


def test_a_push_above_threshold_stops_within_stop_accelerations_and_reports_after_standstill(rig):
    arm, c = rig
    q0 = c.state.q
    with c.record(["time", "dq_cmd", "mode"]) as rec:
        handle = c.follow(
            Trajectory.quintic(q0, q0 + np.array([0.4, 0, 0, 0, 0, 0, 0]), 3.0),
            admittance=COMPLIANT,
            thresholds=[8.0, 8.0, 8.0, 5.0, 5.0, 5.0],
            wait=False,
        )
        c.step(1000)
        arm.push([0.0, 0.0, -25.0], 0.5)
        result = handle.result(timeout=10.0)
    assert result.code == RC.FORCE_TORQUE_THRESHOLD_EXCEEDED
    assert "threshold" in result.message and "Fz" in result.message
    data = rec.data()
    i_stop = int(np.searchsorted(data["time"], result.stop_time_s))
    i_end = int(np.searchsorted(data["time"], result.end_time_s))
    v_at_stop = np.abs(data["dq_cmd"][i_stop])
    predicted = float(np.max(v_at_stop / STOP_ACC))
    assert predicted > 0.02  # the arm was moving
    # Braked with at most stop_accelerations, in the predicted minimum time.
    decel = np.abs(np.diff(data["dq_cmd"][i_stop : i_end + 1], axis=0)) / 0.001
    assert decel.max() <= STOP_ACC * (1 + 1e-9)
    assert result.end_time_s - result.stop_time_s == pytest.approx(predicted, abs=0.002)
    assert result.predicted_stop_duration_s == pytest.approx(predicted, abs=0.002)
    # The result came only when the command was at rest, not before.
    assert np.all(data["dq_cmd"][i_end] == 0.0)
    assert np.all(np.abs(data["dq_cmd"][i_stop : i_end - 1]).max(axis=1) > 0.0)


def test_non_finite_sensor_data_mid_motion_ends_in_a_stop_and_no_command_is_non_finite(rig):
    arm, c = rig
    q0 = c.state.q
    handle = c.follow(Trajectory.quintic(q0, q0 + 0.5 * DELTA, 2.0), admittance=COMPLIANT, wait=False)
    c.step(800)
    arm.inject_sensor_fault(math.nan, 0.05)
    commands = []
    while not handle.done():
        c.step(1)
        commands.append(np.concatenate(c.device_command()))
    result = handle.result()
    assert result.code == RC.ADMITTANCE_ERROR
    assert "finite" in result.message.lower() or "nan" in result.message.lower()
    assert result.stop_time_s is not None and result.end_time_s >= result.stop_time_s
    assert np.all(np.isfinite(commands))
    # The loop keeps running and the next goal works once the sensor is back.
    c.step(200)
    assert c.follow(Trajectory.quintic(c.state.q, q0, 1.0), timeout=5.0).ok


def test_tare_removes_the_tool_weight():
    arm = SimulatedArm("fr3", clock="lockstep", tool_mass_kg=1.0, tool_cog_m=(0, 0, 0.05))
    with Controller(arm) as c:
        c.step(300)
        assert np.linalg.norm(c.state.wrench_filtered[:3]) == pytest.approx(9.81, rel=0.02)
        tare = c.zero_fts("fr3_ft_sensor")
        assert tare.ok and tare.offset_force_n == pytest.approx(9.81, rel=0.02)
        c.step(100)
        assert np.linalg.norm(c.state.wrench_filtered[:3]) < 0.05


# ============================================================================ cancel, results, asyncio


def test_cancel_stops_within_the_predicted_minimum_time(rig):
    _, c = rig
    q0 = c.state.q
    with c.record(["time", "dq_cmd"]) as rec:
        handle = c.follow(Trajectory.quintic(q0, q0 + DELTA, 2.0), wait=False)
        c.step(900)
        v_at_cancel = np.abs(c.state.dq_cmd)
        handle.cancel()
        result = handle.result(timeout=5.0)
    assert result.canceled and not result.ok
    predicted = float(np.max(v_at_cancel / STOP_ACC))
    assert predicted > 0.05
    # Minimum time: the slowest joint brakes at exactly stop_accelerations (one cycle of slack).
    assert result.end_time_s - result.stop_time_s == pytest.approx(predicted, abs=0.002)
    assert result.predicted_stop_duration_s == pytest.approx(predicted, abs=0.002)
    data = rec.data()
    i_end = int(np.searchsorted(data["time"], result.end_time_s))
    assert np.all(data["dq_cmd"][i_end] == 0.0)
    with pytest.raises(GoalError, match="goal"):
        result.raise_for_code()


def test_follow_async_in_lockstep_and_task_cancel_cancels_the_goal(rig):
    _, c = rig
    q0 = c.state.q

    async def main():
        ok = await c.follow_async(Trajectory.quintic(q0, q0 + 0.3 * DELTA, 1.0))
        task = asyncio.ensure_future(c.follow_async(Trajectory.quintic(c.state.q, q0, 3.0)))
        for _ in range(50):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return ok

    result = asyncio.run(main())
    assert result.ok
    # The canceled task's goal stops: the arm comes to rest and a new goal is accepted at once.
    c.step(500)
    assert np.abs(c.state.dq_cmd).max() == 0.0
    assert c.follow(Trajectory.quintic(c.state.q, q0, 1.0), timeout=5.0).ok


def test_timeout_leaves_the_goal_running(rig):
    _, c = rig
    q0 = c.state.q
    handle = c.follow(Trajectory.quintic(q0, q0 + 0.3 * DELTA, 2.0), wait=False)
    with pytest.raises(TimeoutError):
        handle.result(timeout=0.5)
    assert not handle.done()
    assert handle.result(timeout=5.0).ok


# ============================================================================ recording


def test_a_recording_of_n_cycles_has_n_rows_and_no_drops(tmp_path):
    _, c = _controller(update_rate=250)
    path = tmp_path / "rec.npz"
    with c.record(path=path) as rec:
        c.step(4 * 1234)
    assert rec.rows == 1234 and rec.dropped == 0
    data = np.load(path)
    assert sorted(data.files) == sorted(RECORD_FIELDS)
    assert data["q"].shape == (1234, 7) and data["wrench_raw"].shape == (1234, 6)
    np.testing.assert_allclose(np.diff(data["time"]), 0.004, atol=1e-9)
    assert np.all(np.diff(data["tick"]) == 4)
    c.stop()


@pytest.mark.parametrize("capacity", [1000, 20000])
def test_rows_the_ring_cannot_hold_are_dropped_and_counted(capacity):
    # record_buffer_cycles sizes the native ring.
    _, c = _controller(record_buffer_cycles=capacity)
    try:
        assert c._loop.record_capacity == capacity
        with c.record(["time"]) as rec:
            c.step(capacity + 500)  # one step() call: nothing drains meanwhile
        assert rec.rows + rec.dropped == capacity + 500
        assert rec.dropped >= 500 - 1 and rec.rows >= capacity - 1
    finally:
        c.stop()


# ============================================================================ bad input


def test_a_goal_with_a_non_finite_position_is_rejected_naming_field_joint_and_value(rig):
    _, c = rig
    q0 = c.state.q
    traj = Trajectory.quintic(q0, q0 + 0.1, 1.0)
    traj.positions_rad = np.array(traj.positions_rad)
    traj.positions_rad[3, 4] = math.nan
    result = c.follow(traj)
    assert result.code == RC.INVALID_GOAL
    assert "fr3_joint5" in result.message and "nan" in result.message.lower()
    assert "position" in result.message
    # Nothing was lost: the controller still holds and takes the next goal.
    assert c.follow(Trajectory.quintic(q0, q0 + 0.1, 1.0), timeout=5.0).ok


def test_input_errors_name_what_is_wrong(rig):
    _, c = rig
    with pytest.raises(ValueError, match=r"positions_rad must have shape \(3, 7\)"):
        c.follow(Trajectory([0.5, 1.0, 1.5], np.zeros((3, 6))))
    with pytest.raises(ValueError, match="unknown field"):
        c.record(["q", "torque"])
    with pytest.raises(parameters.ParameterError, match="time_scale_percentage"):
        c.time_scale = -5.0
    with pytest.raises(parameters.ParameterError, match="update_rate"):
        c.set_parameters(update_rate=500)  # read-only at run time
    with pytest.raises(ValueError, match="sensor frame"):
        c.zero_fts("nowhere")
    with pytest.raises(parameters.ParameterError, match="update_rate"):
        Controller(SimulatedArm("fr3", clock="lockstep"), update_rate=333)
    with pytest.raises(ValueError, match="tolerances"):
        c.follow(Trajectory.quintic(c.state.q, c.state.q, 1.0), tolerances={"path": [0.1, 0.2]})
    assert c.time_scale == 100.0


def test_zero_fts_is_refused_while_a_goal_executes(rig):
    _, c = rig
    q0 = c.state.q
    handle = c.follow(Trajectory.quintic(q0, q0 + 0.2 * DELTA, 1.0), wait=False)
    c.step(100)
    with pytest.raises(RuntimeError, match="zero_fts"):
        c.zero_fts()
    assert handle.result(timeout=5.0).ok


def test_per_goal_tolerances_abort_a_goal_the_arm_cannot_follow(rig):
    _, c = rig
    q0 = c.state.q
    # 0.5 mrad path tolerance: the arm's lag on this fast move exceeds it.
    result = c.follow(Trajectory.quintic(q0, q0 + DELTA, 1.0), tolerances={"path": 0.0005})
    assert result.code == RC.PATH_TOLERANCE_VIOLATED
    assert "path tolerance" in result.message and "0.0005" in result.message


def test_the_panda_runs_with_its_own_names_and_limits():
    _arm, c = _controller("panda")
    assert c.joint_names[0] == "panda_joint1"
    q0 = c.state.q
    assert c.follow(Trajectory.quintic(q0, q0 + 0.3 * DELTA, 1.5), timeout=5.0).ok
    c.stop()


# ============================================================================ streaming


def test_a_125_hz_stream_is_followed_smoothly_and_goals_resume_after_it(rig):
    _, c = rig
    q0 = c.state.q_cmd
    running = c.follow(Trajectory.quintic(q0, q0 + 0.3 * DELTA, 2.0), wait=False)
    c.step(300)
    spec = robots.robot_spec("fr3")
    acc_max = np.array(spec.ddq_max_rad_s2) * LIMIT_MARGIN
    w = 2.0  # [rad/s]
    with c.stream() as stream:
        c.step(2)
        # Switching ends the goal that was running at once, as a deactivation does (INVALID_STATE).
        assert running.result(timeout=0.1).code == RC.INVALID_STATE
        assert c.follow(Trajectory.quintic(q0, q0, 1.0)).code == RC.INVALID_STATE  # refused meanwhile
        start = c.state.q_cmd
        lag, steps, dq_prev = [], [], None
        for k in range(3000):
            t = k * 0.001
            if k % 8 == 0:  # 125 Hz, a joint-4 swing of 0.2 rad peak
                target = start.copy()
                target[3] += 0.1 * (1 - math.cos(w * t))
                stream.send(target)
            c.step(1)
            _, dq = c.device_command()
            if dq_prev is not None:
                steps.append(np.abs(dq - dq_prev))
            dq_prev = dq
            if k > 300:
                lag.append(abs(c.state.q[3] - (start[3] + 0.1 * (1 - math.cos(w * t)))))
        assert stream.targets_taken >= 370
        # One 8 ms interval of delay at ≤ 0.2 rad/s plus the robot's own lag.
        assert max(lag) < 0.006
        assert np.all(np.array(steps) <= acc_max * 0.001 + 1e-12)
        with pytest.raises(ValueError, match="fr3_joint2"):
            stream.send(np.where(np.arange(7) == 1, math.nan, start))
    c.step(100)
    # Stopped targets: the arm holds; then trajectory execution is back.
    q = c.state.q_cmd
    assert c.follow(Trajectory.quintic(q, q0, 1.0), timeout=5.0).ok


def test_controller_time_at_in_lockstep_is_the_simulated_time_on_both_clocks(rig):
    _arm, c = rig
    c.step(35)
    assert c.controller_time_at() == pytest.approx(0.055, abs=1e-12)  # 55 packets of 1 ms
    with c.stream() as stream:
        assert c.controller_time_at() == stream.now()
    assert c.controller_time_at(12.25) == 12.25
    with pytest.raises(ValueError, match="host_s must be finite, got nan"):
        c.controller_time_at(float("nan"))
