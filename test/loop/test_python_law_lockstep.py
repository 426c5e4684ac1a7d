"""Custom control laws written in Python (jtac_py.laws), compiled by Numba into the native loop.

Layer: loop with simulated hardware (MuJoCo FR3, hardware thread with rate matching and limiter, the
controller's CallbackLaw calling the compiled law, the Python API), in lockstep on a virtual clock,
plus one real-time test: a Python thread that holds the GIL does not delay the law's cycles.
"""

import json
import logging
import math
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from jtac_py import laws
from jtac_py.controller import Controller, ControllerMode, ResultCode, Trajectory
from jtac_py.hardware import SimulatedArm

STOP_ACC = 5.0  # [rad/s²] the controller's stop_accelerations in these tests


def sine_law(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
    """q0 + A·sin(ω(t − t0)) on joint params[2]; params [A rad, ω rad/s, joint, fail_at s (0: never),
    fail_mode (1: NaN on joint 2, 2: return 5)]; memory [started, t0, q0 (7)]."""
    if memory[0] == 0.0:
        memory[0] = 1.0
        memory[1] = t
        for j in range(7):
            memory[2 + j] = q_d[j]
    tau = t - memory[1]
    joint = int(params[2])
    for j in range(7):
        q_cmd[j] = memory[2 + j]
        dq_cmd[j] = 0.0
    q_cmd[joint] += params[0] * math.sin(params[1] * tau)
    dq_cmd[joint] = params[0] * params[1] * math.cos(params[1] * tau)
    if params[3] > 0.0 and tau >= params[3] - 1e-9:
        if params[4] == 1.0:
            q_cmd[2] = math.nan
        elif params[4] == 2.0:
            return 5
    return 0


SINE_PARAMS = [0.1, 3.0, 3.0, 0.0, 0.0]


@pytest.fixture(scope="module")
def compiled_sine():
    return laws.compile(sine_law, 5, 9, params=SINE_PARAMS)


@pytest.fixture
def c():
    controller = Controller(SimulatedArm("fr3", clock="lockstep"), stop_accelerations=[STOP_ACC] * 7).start()
    controller.step(20)
    yield controller
    controller.stop()


def test_a_sine_law_is_recorded_exactly_in_q_cmd(c, compiled_sine):
    with c.record(["time", "q_cmd", "dq_cmd", "mode"]) as rec:
        c.use_law(compiled_sine, [0.1, 3.0, 3.0, 0.0, 0.0])
        c.step(1500)
    data = rec.data()
    law_rows = np.flatnonzero(data["mode"] == int(ControllerMode.EXECUTING))
    first = law_rows[0]
    t = data["time"][first:] - data["time"][first]
    q0 = data["q_cmd"][first]
    expected = q0[3] + 0.1 * np.sin(3.0 * t)
    assert len(t) > 1400
    assert np.max(np.abs(data["q_cmd"][first:, 3] - expected)) < 1e-9
    assert np.max(np.abs(data["dq_cmd"][first:, 3] - 0.3 * np.cos(3.0 * t))) < 1e-9
    np.testing.assert_array_equal(data["q_cmd"][first:, 0], q0[0])
    # The arm follows (the robot's own impedance lags by a few mrad).
    assert abs(c.state.q[3] - c.state.q_cmd[3]) < 0.02
    assert c.law_error is None
    assert c.law_calls["calls"] > 1400


def test_set_params_takes_effect_at_a_cycle_boundary(c, compiled_sine):
    c.use_law(compiled_sine, [0.1, 3.0, 3.0, 0.0, 0.0])
    with c.record(["time", "q_cmd"]) as rec:
        c.step(500)
        compiled_sine.set_params([0.05, 3.0, 3.0, 0.0, 0.0])
        c.step(500)
    data = rec.data()
    assert len(data["time"]) == 1000
    # The first row is the law's first cycle (sin 0 = 0: q_cmd = q0). Cycles up to the call ran the
    # old set, the next cycle runs the new one, never a mix.
    tau = data["time"] - data["time"][0]
    q0 = data["q_cmd"][0, 3]
    np.testing.assert_allclose(data["q_cmd"][:500, 3], q0 + 0.1 * np.sin(3.0 * tau[:500]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(data["q_cmd"][500:, 3], q0 + 0.05 * np.sin(3.0 * tau[500:]), rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match=r"params\[1\] is nan"):
        compiled_sine.set_params([0.05, math.nan, 3.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="params has 2 values, n_params is 5"):
        compiled_sine.set_params([0.05, 3.0])


@pytest.mark.parametrize("mode", [1, 2], ids=["nan", "code"])
def test_a_failing_law_stops_the_arm_in_minimum_time_and_says_why(c, compiled_sine, mode, caplog):
    with c.record(["time", "q_cmd", "dq_cmd", "mode"]) as rec, caplog.at_level(logging.ERROR):
        c.use_law(compiled_sine, [0.2, 4.0, 2.0, 1.0, float(mode)])  # bad at t = 1 s
        c.step(2500)
    data = rec.data()
    error = c.law_error
    assert error is not None
    if mode == 1:
        assert "law 'sine_law' commanded a non-finite value" in error
        assert "joint 2 (fr3_joint3) = nan" in error
    else:
        assert "law 'sine_law' returned error code 5" in error
    assert any("sine_law" in r.getMessage() for r in caplog.records), "the failure is logged"
    # Finite commands throughout; after the failure joint 3's velocity shrinks at <= 5 rad/s² to rest.
    assert np.all(np.isfinite(data["q_cmd"])) and np.all(np.isfinite(data["dq_cmd"]))
    executing = int(ControllerMode.EXECUTING)
    first = np.flatnonzero(data["mode"] == executing)[0]
    failed = np.flatnonzero((np.arange(len(data["mode"])) > first) & (data["mode"] != executing))[0]
    assert data["time"][failed] - data["time"][first] == pytest.approx(1.0, abs=1.5e-3)
    dv = np.abs(np.diff(data["dq_cmd"][failed:, 2]))
    assert np.max(dv) <= STOP_ACC * 0.001 + 1e-9
    speed = abs(data["dq_cmd"][failed - 1, 2])
    rest = np.flatnonzero(data["dq_cmd"][failed:, 2] == 0.0)[0] * 0.001
    assert rest == pytest.approx(speed / STOP_ACC, abs=2e-3)
    assert data["mode"][-1] == int(ControllerMode.IDLE)
    # The arm comes to rest where the stop ends.
    assert np.max(np.abs(c.state.dq)) < 0.05
    # A goal meanwhile is refused, with the law's error in its result.
    q = c.state.q
    result = c.follow(Trajectory.quintic(q, q, 0.5), timeout=1.0)
    assert result.code == ResultCode.INVALID_STATE
    assert "custom law is in use (sine_law)" in result.message and error in result.message
    # Back to the JTAC: goals run again; the error stays readable until the next use_law.
    c.use_law(None)
    assert c.law_error == error
    c.step(10)
    q = c.state.q_cmd
    result = c.follow(Trajectory.quintic(q, q + 0.02, 0.5), timeout=5.0)
    assert result.ok, result.message


def test_use_law_refuses_while_a_stream_is_open_and_goals_while_it_runs(c, compiled_sine):
    with c.stream(), pytest.raises(RuntimeError, match="a stream is open"):
        c.use_law(compiled_sine, SINE_PARAMS)
    c.use_law(compiled_sine, SINE_PARAMS)
    with pytest.raises(RuntimeError, match="a custom law is in use"):
        c.stream()
    c.step(10)
    result = c.follow(Trajectory.quintic(c.state.q, c.state.q, 0.3), timeout=1.0)
    assert result.code == ResultCode.INVALID_STATE
    with pytest.raises(ValueError, match="params has 3 values, n_params is 5"):
        c.use_law(compiled_sine, [1.0, 2.0, 3.0])
    c.use_law(None)
    assert c.law is None


def test_compile_refuses_what_cannot_run_in_the_loop_naming_the_function():
    def allocating(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
        q_cmd[:] = q_d + 0.0 * dq  # an array expression: a new array every cycle
        return 0

    with pytest.raises(laws.LawCompileError, match="law 'allocating' allocates memory"):
        laws.compile(allocating, 0, 0)

    def untyped(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
        return {"a": object()}

    with pytest.raises(laws.LawCompileError, match="law 'untyped' does not compile in nopython mode"):
        laws.compile(untyped, 0, 0)

    def divides(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
        for j in range(7):
            q_cmd[j] = q_d[j] + tau_ext[j] / params[0]  # 0 / 0 on the probe with params 0
        return 0

    with pytest.raises(laws.LawCompileError, match=r"law 'divides' commanded q_cmd\[0\] = nan on the probe"):
        laws.compile(divides, 1, 0)
    assert laws.compile(divides, 1, 0, params=[100.0]).n_params == 1

    def raises(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
        if t >= 0.0:
            raise ValueError("bad")
        return 0

    with pytest.raises(laws.LawCompileError, match="law 'raises' raised an exception on the probe"):
        laws.compile(raises, 0, 0)
    assert laws.compile(raises, 0, 0, probe=False).call(laws.probe_state())[0] == laws.RAISED_CODE

    with pytest.raises(ValueError, match="n_params must be an integer >= 0"):
        laws.compile(sine_law, -1, 0)


def test_the_law_sees_the_tcp_pose_and_jacobian_of_the_core(c):
    def copy_kinematics(
        t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd
    ):
        for j in range(7):
            memory[j] = q[j]
            q_cmd[j] = q_d[j]
        for r in range(4):
            for k in range(4):
                memory[7 + 4 * r + k] = tcp_pose[r, k]
        for r in range(6):
            for k in range(7):
                memory[23 + 7 * r + k] = jacobian[r, k]
        # Return the z of the TCP as a code when it is where the core says it is: checked below.
        return 0

    law = laws.compile(copy_kinematics, 0, 65)
    state = laws.probe_state()
    code, _, _, memory = law.call(state)
    assert code == 0
    np.testing.assert_array_equal(memory[7:23].reshape(4, 4), state["tcp_pose"])
    np.testing.assert_array_equal(memory[23:65].reshape(6, 7), state["jacobian"])
    assert state["tcp_pose"][2, 3] > 0.3  # the TCP above the base at home [m]
    # In the loop: runs without error on the simulated arm.
    c.use_law(law)
    c.step(100)
    assert c.law_error is None


_NRT_COUNT_SCRIPT = r"""
import json
import numpy as np
from numba import njit
from numba.core.runtime import rtsys
from jtac_py import laws
from jtac_py.controller import Controller
from jtac_py.hardware import SimulatedArm

def joint_impedance(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
    if memory[0] == 0.0:
        memory[0] = 1.0
        for j in range(7):
            memory[1 + j] = q_d[j]
    for j in range(7):
        force = tau_ext[j] - params[7 + j] * memory[15 + j] - params[j] * memory[8 + j]
        v = memory[15 + j] + dt * force / params[14 + j]
        memory[8 + j] += dt * v
        memory[15 + j] = v
        q_cmd[j] = memory[1 + j] + memory[8 + j]
        dq_cmd[j] = v
    return 0

def total():
    s = rtsys.get_allocation_stats()
    return s.alloc + s.mi_alloc

law = laws.compile(joint_impedance, 21, 22, params=[40.0] * 7 + [9.0] * 7 + [0.5] * 7)
arm = SimulatedArm("fr3", clock="lockstep")
c = Controller(arm).start()
c.step(20)
c.use_law(law)
c.step(20)
before = total()
arm.push([0.0, 10.0, 0.0], 1.0)
c.step(2000)
during = total() - before
calls = c.law_calls["calls"]
c.stop()
control = njit(lambda: np.zeros(7).sum())
before = total()
control()
print(json.dumps({"during": during, "calls": calls, "control": total() - before}))
"""


def test_the_compiled_law_allocates_nothing_while_it_runs():
    """Numba's own allocation counters (NUMBA_NRT_STATS) across 2000 cycles of a law on the arm, with a
    positive control (np.zeros in a jitted function counts). The loop around the law: the C++
    allocation test ControlLoopNoAlloc.LockstepStepAllocatesNothingThroughACallbackLaw."""
    env = {**os.environ, "NUMBA_NRT_STATS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _NRT_COUNT_SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert counts["calls"] >= 2000
    assert counts["control"] >= 1, "the counter does not count"
    assert counts["during"] == 0


def _spin_holding_the_gil(stop: threading.Event, holds_s: list[float]) -> None:
    data = np.random.default_rng(3).integers(0, 2**30, 600_000).tolist()
    while not stop.is_set():
        t0 = time.perf_counter()
        sorted(data)  # one C call: holds the GIL for its whole duration (~0.2 s here)
        holds_s.append(time.perf_counter() - t0)


def test_a_thread_holding_the_gil_does_not_delay_the_law_realtime(compiled_sine):
    """Real time, shared machine: loose bounds. Without the native loop a Python law would stall for
    every sorted() call (hundreds of ms); here the law keeps its 1 kHz cycles."""
    c = Controller(SimulatedArm("fr3", clock="realtime"), stop_accelerations=[STOP_ACC] * 7).start()
    try:
        c.use_law(compiled_sine, [0.05, 2.0, 3.0, 0.0, 0.0])
        time.sleep(0.3)

        def window(seconds: float) -> tuple[float, float, float]:
            calls0 = c.law_calls["calls"]
            with c.record(["interval_us"]) as rec:
                t0 = time.monotonic()
                time.sleep(seconds)
                elapsed = time.monotonic() - t0
            calls = c.law_calls["calls"] - calls0
            return calls / elapsed, float(np.max(rec.data()["interval_us"][1:])), elapsed

        idle_rate, idle_max_us, _ = window(1.0)
        stop = threading.Event()
        holds_s: list[float] = []
        spinner = threading.Thread(target=_spin_holding_the_gil, args=(stop, holds_s), daemon=True)
        spinner.start()
        try:
            gil_rate, gil_max_us, gil_elapsed = window(1.0)
        finally:
            stop.set()
            spinner.join()
        print(
            f"law cycles: idle {idle_rate:.0f}/s (max interval {idle_max_us:.0f} µs), GIL held "
            f"{gil_rate:.0f}/s (max interval {gil_max_us:.0f} µs) over {gil_elapsed:.2f} s; GIL held "
            f"{len(holds_s)} times, up to {max(holds_s) * 1e3:.0f} ms"
        )
        assert max(holds_s) > 0.05, "the spinner did not hold the GIL for long"
        assert idle_rate > 800.0
        assert gil_rate > 0.9 * idle_rate
        assert gil_max_us < 20_000.0  # a stall from the GIL would be ~300 ms
        assert c.law_error is None
    finally:
        c.stop()
