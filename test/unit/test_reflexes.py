"""The reflex explainer (``jtac_py.reflexes``) on flight-recorder traces built by hand: each cause
named with its joint, quantity, limit and packet, what preceded it, the advice that fits, the trace
saved and explained again offline by ``jtac why``. franka-sim provokes the real ones
(test/franka/test_reflex_explained_on_franka_sim.py)."""

import subprocess
import sys

import numpy as np
import pytest

from jtac_py import reflexes, robots

HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])  # [rad]
N = 256
SAMPLE, HELD, LIMITED, DISTURBED = 4, 8, 16, 128
VELOCITY_STEP = (
    "libfranka: Move command aborted: motion aborted by reflex! "
    '["joint_motion_generator_velocity_discontinuity"]'
)


def _trace(q=None, flags=None, ticks=None):
    q = np.tile(HOME, (N, 1)) if q is None else q
    return {
        "tick": np.arange(N, dtype=np.uint64) if ticks is None else ticks,
        "flags": np.full(N, SAMPLE, dtype=np.uint8) if flags is None else flags,
        "q_cmd": q,
        "read_ns": np.arange(N, dtype=np.int64) * 1_000_000,
    }


def _step(joint, at, per_packet_rad):
    q = np.tile(HOME, (N, 1))
    q[at:, joint] += per_packet_rad * np.arange(N - at)
    return q


def test_a_velocity_step_names_the_joint_the_commanded_acceleration_its_limit_and_the_packet():
    e = reflexes.explain(VELOCITY_STEP, _trace(_step(5, 250, 0.0002)))  # 0.2 rad/s from one packet on
    assert e.reflexes == ("joint_motion_generator_velocity_discontinuity",)
    assert (e.quantity, e.joint, e.joint_name) == ("acceleration", 5, "fr3_joint6")
    assert e.value == pytest.approx(200.0) and e.limit == 10.0
    assert e.packet_offset == 251 - (N - 1)  # the packet whose difference steps
    assert e.preceded_by == () and "report it" in e.advice  # nothing explains it: jtac's own step
    text = e.text()
    assert "fr3_joint6 reached 200 rad/s² against its limit 10 rad/s², 4 packet(s) before" in text


def test_an_acceleration_step_is_named_as_the_commanded_jerk():
    q = np.tile(HOME, (N, 1))
    k = np.arange(N - 240)
    q[240:, 2] += 8.0 * 1e-6 * k * (k + 1) / 2  # 8 rad/s² from one packet on
    e = reflexes.explain('["joint_motion_generator_acceleration_discontinuity"]', _trace(q))
    assert (e.quantity, e.joint_name, e.limit) == ("jerk", "fr3_joint3", 5000.0)
    assert e.value == pytest.approx(8000.0)


def test_velocity_is_judged_against_the_fr3_position_based_bound_near_the_end_of_the_range():
    q = np.tile(HOME, (N, 1))
    q[:, 3] = -0.1458 - 0.012 + 0.0001 * np.arange(N)  # joint 4 creeping at 0.1 rad/s into its end
    e = reflexes.explain('["joint_motion_generator_velocity_limits_violation"]', _trace(q))
    assert (e.quantity, e.joint_name) == ("velocity", "fr3_joint4")
    assert e.value == pytest.approx(0.1) and e.limit < 0.1  # dq_max is 2.62 rad/s; the bound is ~0 here
    # A Panda has no position-based bound: its dq_max.
    panda = reflexes.explain('["joint_motion_generator_velocity_limits_violation"]', _trace(q), robot="panda")
    assert panda.limit == robots.robot_spec("panda").dq_max_rad_s[panda.joint]


def test_a_command_just_short_of_the_bound_is_stated_as_short_of_it():
    """The robot judges the bound on its measured state: a command 1 % under it can trip the reflex,
    and the statement says how far short it stayed instead of claiming it went past."""
    q = np.tile(HOME, (N, 1))
    q[:, 3] = -0.1458 - 0.05 + 0.00005 * np.arange(N)  # 0.05 rad/s, the bound here ~0.33 rad/s
    names = '["joint_velocity_violation", "joint_motion_generator_velocity_limits_violation"]'
    e = reflexes.explain(names, _trace(q))
    assert e.quantity == "velocity" and e.value == pytest.approx(0.05) and e.limit > e.value
    short_pct = 100.0 * (1.0 - e.value / e.limit)
    assert f"({short_pct:.1f}% short of it: the robot judges the bound on its measured state" in e.text()
    past = reflexes.explain(names, _trace(np.where(np.arange(N)[:, None] == N - 1, q + 0.01, q)))
    assert abs(past.value) > past.limit and "short of it" not in past.text()


def test_a_command_outside_the_range_is_named_with_the_range_end():
    q = np.tile(HOME, (N, 1))
    q[200:, 0] = 2.7437 + 0.01  # joint 1 beyond its upper end
    e = reflexes.explain('["joint_motion_generator_position_limits_violation"]', _trace(q))
    assert (e.quantity, e.joint_name, e.limit) == ("position", "fr3_joint1", 2.7437)
    assert e.value == pytest.approx(2.7537) and "range" in e.advice
    assert "outside its range 2.744 rad" in e.text()


def test_lost_packets_late_samples_and_the_limiter_are_named_and_the_advice_follows_the_cause():
    ticks = np.arange(N, dtype=np.uint64)
    ticks[230:] += 6  # 6 robot cycles without a packet of ours
    lost = reflexes.explain(VELOCITY_STEP, _trace(_step(1, 240, 0.0002), ticks=ticks))
    assert lost.preceded_by[0].startswith("6 robot cycle(s) without a state or command")
    assert "jtac doctor" in lost.advice
    flags = np.full(N, SAMPLE, dtype=np.uint8)
    flags[200:240] = HELD
    held = reflexes.explain(VELOCITY_STEP, _trace(_step(1, 240, 0.0002), flags=flags))
    assert held.preceded_by == (
        "40 packet(s) without a controller sample (the hardware thread extrapolated, then braked)",
    )
    assert "controller thread fell behind" in held.advice
    flags = np.full(N, SAMPLE | LIMITED, dtype=np.uint8)
    limited = reflexes.explain(VELOCITY_STEP, _trace(_step(1, 240, 0.0002), flags=flags))
    assert "limiter activation" in limited.preceded_by[0] and "slow the trajectory" in limited.advice


def test_a_silent_link_is_named_with_how_long_it_was_silent():
    trace = _trace()
    detected_ns = int(trace["read_ns"][-1]) + 35_000_000
    e = reflexes.explain('["communication_constraints_violation"]', trace, detected_ns=detected_ns)
    assert e.quantity == "link" and e.joint is None
    assert e.preceded_by == (
        "no state from the robot for 35 ms after the last packet (until the fault was seen)",
    )
    assert "jtac doctor --robot-ip" in e.advice and "missed too many commands" in e.text()


def test_a_measured_reflex_beside_a_command_reflex_is_explained_by_the_command():
    q = np.tile(HOME, (N, 1))
    q[:, 3] = -0.1458 - 0.012 + 0.0001 * np.arange(N)
    message = '["joint_velocity_violation", "joint_motion_generator_velocity_limits_violation"]'
    assert reflexes.explain(message, _trace(q)).quantity == "velocity"
    alone = reflexes.explain('["cartesian_reflex"]', _trace(q))
    assert alone.quantity == "measured" and "collision_behavior" in alone.advice


def test_a_controller_recording_is_explained_from_its_times_and_commands():
    q = _step(3, 250, 0.0002)
    recording = {"time": np.arange(N) * 0.001, "q_cmd": q, "dq_cmd": np.zeros_like(q)}
    e = reflexes.explain(VELOCITY_STEP, recording)
    assert (e.quantity, e.joint_name) == ("acceleration", "fr3_joint4") and e.value == pytest.approx(200.0)


def test_a_saved_trace_round_trips_and_jtac_why_explains_it(tmp_path):
    trace = _trace(_step(5, 250, 0.0002), flags=np.where(np.arange(N) >= 250, SAMPLE | DISTURBED, SAMPLE))
    path = reflexes.save_trace(trace, VELOCITY_STEP, "fr3", directory=tmp_path, detected_ns=123)
    columns, meta = reflexes.load_trace(path)
    assert meta["message"] == VELOCITY_STEP and meta["robot"] == "fr3" and meta["detected_ns"] == 123
    for name, values in trace.items():
        np.testing.assert_array_equal(columns[name], values)
    run = subprocess.run(
        [sys.executable, "-m", "jtac_py.cli", "why", str(path)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert "the command's acceleration on fr3_joint6 reached 200 rad/s²" in run.stdout
    assert (
        "2 packet(s) carrying a test disturbance" in run.stdout
    )  # up to the step's packet and VELOCITY_STEP in run.stdout


def test_jtac_why_refuses_a_file_that_is_neither_a_trace_nor_a_recording(tmp_path):
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    for path in (tmp_path / "other.npz", tmp_path / "missing.npz"):
        run = subprocess.run(
            [sys.executable, "-m", "jtac_py.cli", "why", str(path)], capture_output=True, text=True
        )
        assert run.returncode == 2 and str(path) in run.stderr


def test_the_fault_directory_is_the_environments_or_the_xdg_state_directory(tmp_path, monkeypatch):
    monkeypatch.setenv(reflexes.FAULT_DIR_ENV, str(tmp_path / "here"))
    assert reflexes.fault_dir() == tmp_path / "here"
    monkeypatch.delenv(reflexes.FAULT_DIR_ENV)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert reflexes.fault_dir() == tmp_path / "state" / "jtac" / "faults"


def test_what_the_controller_did_within_the_trace_is_named_with_how_long_before():
    trace = _trace(_step(1, 240, 0.0002))
    last_ns = int(trace["read_ns"][-1])
    context = [
        (last_ns - 400_000_000, "a switch long before the trace"),
        (last_ns - 120_000_000, "a switch asked for: a stream was opened (Controller.stream())"),
        (last_ns - 30_000_000, "the stream's last input"),
    ]
    e = reflexes.explain(VELOCITY_STEP, trace, context=context)
    assert e.preceded_by == (
        "a switch asked for: a stream was opened (Controller.stream()) 120 ms before the last packet",
        "the stream's last input 30 ms before the last packet",
    )


def test_a_dead_link_without_a_reflex_is_a_link_fault_and_blames_no_joint():
    message = "readOnce: libfranka: UDP receive: Timeout"
    e = reflexes.explain(message, _trace(), detected_ns=int(_trace()["read_ns"][-1]) + 1_000_000_000)
    assert (e.reflexes, e.quantity, e.joint_name) == ((), "link", None)
    assert "no state from the robot for 1000 ms" in e.preceded_by[0]
    # No reflex named and nothing past a limit: no joint is blamed.
    quiet = reflexes.explain("libfranka: some other error", _trace())
    assert quiet.joint_name is None and "report it" in quiet.advice
