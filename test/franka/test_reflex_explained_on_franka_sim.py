"""Every reflex explained: provoked on purpose on franka-sim (limits enforced), explained from the
hardware thread's flight recorder (``jtac_py.reflexes``).

Each case adds a test disturbance to the command after the limiter (``AsyncInterface.inject_disturbance``:
the only way jtac's own command steps) or cuts the link (franka-sim's fault injector), and checks that
the fault's message names the reflex, the joint, the quantity against its limit and the cause, that
the trace was saved, and that ``jtac why`` explains the saved trace the same way.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pylibfranka = pytest.importorskip("pylibfranka")

from jtac_py import _native, reflexes  # noqa: E402
from jtac_py.controller import Controller, Trajectory  # noqa: E402

pytestmark = [
    pytest.mark.franka_sim,
    pytest.mark.skipif(not _native.HAVE_LIBFRANKA, reason="built without libfranka (see the CMake message)"),
]

JOINT = 3  # fr3_joint4: the disturbed joint
FR3_Q4_UPPER_REF_RAD = -0.1458  # where its position-based velocity bound is referenced (jtac_py.robots)


@pytest.fixture(autouse=True)
def fault_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(reflexes.FAULT_DIR_ENV, str(tmp_path / "faults"))
    return tmp_path / "faults"


def _start(sim):
    from jtac_py.hardware import FrankaArm

    arm = FrankaArm(sim.ip, use_estimated_wrench=False, late_commands="applied")
    params = {"default_path_tolerance": 0.3, "default_goal_time_tolerance": 1.0}
    return arm, Controller(arm, **params).start()


def _wait_for_fault(c, timeout_s=8.0):
    deadline = time.monotonic() + timeout_s
    while c.hardware_error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert c.hardware_error is not None, "no reflex within the timeout"
    return c.fault_explanation


def _provoke(sim, disturbance, before=None):
    """A controller holding the arm (after `before(c)`), the disturbance injected: the explanation."""
    arm, c = _start(sim)
    try:
        if before is not None:
            before(c)
        time.sleep(0.1)
        assert c._interface.inject_disturbance(JOINT, **disturbance)
        explanation = _wait_for_fault(c)
        error = c.hardware_error
        c.stop()
        arm.automatic_error_recovery()
        # A FrankaArm serves one motion per device: this Controller's is over, and it says so.
        with pytest.raises(RuntimeError, match="build a new Controller on the arm"):
            c.start()
    finally:
        c.stop()
        arm.close()
    print(error)  # the statement, as docs/doctor.md quotes it
    return explanation, error


def _why(path):
    run = subprocess.run(
        [sys.executable, "-m", "jtac_py.cli", "why", str(path)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def _check(explanation, error, reflex, quantity, fault_dir):
    assert reflex in explanation.reflexes, error
    assert explanation.quantity == quantity and explanation.joint_name == "fr3_joint4", error
    if quantity != "position":
        # The robot judges its bounds on its measured state, which trails and overshoots the command:
        # a command within a few percent of a bound can trip it, and the statement says so.
        assert abs(explanation.value) > 0.97 * explanation.limit, error
        assert (abs(explanation.value) > explanation.limit) != ("short of it" in error), error
    assert any("test disturbance" in p for p in explanation.preceded_by), error
    assert explanation.text() in error  # the hardware error carries the statement
    path = Path(explanation.trace_path)
    assert path.parent == fault_dir and path.is_file()
    offline = _why(path)
    assert f"the command's {quantity} on fr3_joint4" in offline and reflex in offline


def test_a_velocity_step_is_explained_as_the_commanded_acceleration(franka_sim, fault_dir):
    explanation, error = _provoke(franka_sim, {"v_rad_s": 0.05})  # 50 rad/s² in one cycle
    _check(explanation, error, "joint_motion_generator_velocity_discontinuity", "acceleration", fault_dir)
    assert explanation.value == pytest.approx(50.0, rel=0.05) and explanation.limit == 10.0


def test_an_acceleration_step_is_explained_as_the_commanded_jerk(franka_sim, fault_dir):
    explanation, error = _provoke(franka_sim, {"a_rad_s2": 8.0})  # 8000 rad/s³ in one cycle
    _check(explanation, error, "joint_motion_generator_acceleration_discontinuity", "jerk", fault_dir)
    assert explanation.value == pytest.approx(8000.0, rel=0.05) and explanation.limit == 5000.0


def test_a_jerk_above_the_limit_is_explained_as_the_commanded_jerk(franka_sim, fault_dir):
    explanation, error = _provoke(franka_sim, {"j_rad_s3": 6000.0})  # the acceleration ramps too fast
    _check(explanation, error, "joint_motion_generator_acceleration_discontinuity", "jerk", fault_dir)
    assert explanation.value == pytest.approx(6000.0, rel=0.05)


def test_a_drift_into_the_end_of_the_range_is_explained_against_the_position_based_bound(
    franka_sim, fault_dir
):
    """An FR3 joint never reaches its range limit under a command: the velocity allowed toward it
    shrinks to 0 some 11 mrad before (the position-based bound), so a command that keeps drifting
    there ends in a velocity reflex, as on the real robot; the explanation names that bound."""

    def near_the_limit(c):
        q0 = np.array(c.state.q_cmd)
        q1 = q0.copy()
        q1[JOINT] = FR3_Q4_UPPER_REF_RAD - 0.03  # 30 mrad inside, slowly (test_joint_velocity_envelope.py)
        assert c.follow(Trajectory.quintic(q0, q1, 3.0), timeout=10.0).ok

    # From rest 4 mrad/s and 0.5 rad/s²: 4 rad/s² and 4500 rad/s³ once, under the discontinuity limits.
    explanation, error = _provoke(franka_sim, {"v_rad_s": 0.004, "a_rad_s2": 0.5}, before=near_the_limit)
    _check(explanation, error, "joint_motion_generator_velocity_limits_violation", "velocity", fault_dir)
    assert explanation.limit < 0.3  # the bound near the end of the range, not dq_max (2.62 rad/s)


def test_a_step_right_after_a_stream_took_over_names_the_switch_and_the_streams_input(franka_sim, fault_dir):
    def stream_holding(c):
        q = np.array(c.state.q_cmd)
        stream = c.stream()
        stream.send_chunk(np.arange(1, 17) * 0.05, np.tile(q, (16, 1)))

    explanation, error = _provoke(franka_sim, {"v_rad_s": 0.05}, before=stream_holding)
    assert explanation.quantity == "acceleration" and explanation.joint_name == "fr3_joint4", error
    assert any("a stream was opened" in p for p in explanation.preceded_by), error
    assert any(p.startswith("the stream's last input") for p in explanation.preceded_by), error


@pytest.mark.franka_sim(probe=True, faults="outage=30ms@0.7s")
def test_a_link_outage_is_explained_by_the_lost_packets(franka_sim, fault_dir):
    arm, c = _start(franka_sim)
    try:
        q0 = np.array(c.state.q_cmd)
        handle = c.follow(Trajectory.quintic(q0, q0 + 0.2, 3.0), wait=False)
        explanation = _wait_for_fault(c)
        error = c.hardware_error
        result = handle.result(timeout=5.0)
        print(error)
    finally:
        c.stop()
        arm.automatic_error_recovery()
        arm.close()
    assert "communication_constraints_violation" in explanation.reflexes, error
    assert explanation.quantity == "link"
    assert explanation.text() in result.message  # the goal's result carries the statement too
    (silence,) = [p for p in explanation.preceded_by if p.startswith("no state from the robot")]
    assert int(silence.split(" for ")[1].split(" ms")[0]) >= 20, silence  # the robot's 20 lost cycles
    assert "jtac doctor" in explanation.advice
    assert Path(explanation.trace_path).is_file()
    assert "no state from the robot" in _why(explanation.trace_path)
