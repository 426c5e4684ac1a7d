"""The Python API with the native threads running (the simulated FR3 on its own 1 kHz clock).

Real time on a shared 2-core machine: these tests check behaviour (results, events, recordings,
asyncio), never timing figures; those are benchmarks (bench/bench_python_stall.py).
"""

import asyncio
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from jtac_py.controller import Controller, Trajectory
from jtac_py.hardware import SimulatedArm

sys.path.insert(0, str(Path(__file__).parent))

DELTA = np.array([0.2, -0.15, 0.1, 0.2, -0.2, 0.15, 0.25])  # [rad]


@pytest.fixture
def controller():
    # Generous tolerances: a preempted VM may delay the controller thread by milliseconds.
    # The robot's joint impedance lags a fast move by a few 10 mrad: allow it to settle (0.5 s).
    c = Controller(
        SimulatedArm("fr3", clock="realtime"),
        default_path_tolerance=0.2,
        default_goal_tolerance=0.02,
        default_goal_time_tolerance=0.5,
    )
    c.start()
    yield c
    c.stop()


def test_a_goal_succeeds_and_its_cycles_are_recorded(controller):
    c = controller
    q0 = c.state.q
    with c.record(["time", "q", "error"]) as rec:
        result = c.follow(Trajectory.quintic(q0, q0 + DELTA, 1.0), timeout=10.0)
    assert result.ok, result.message
    np.testing.assert_allclose(c.state.q, q0 + DELTA, atol=0.02)
    data = rec.data()
    assert rec.dropped == 0
    assert len(data["time"]) > 0 and np.all(np.diff(data["time"]) > 0)  # one row per cycle, in order
    timing = c.timing()
    assert timing["hardware"]["packets"] > 0 and timing["hardware"]["device_errors"] == 0
    assert timing["dext"]["samples"] > 0


def test_follow_async_while_the_event_loop_has_other_work(controller):
    c = controller
    q0 = c.state.q
    ticks = []

    async def other_work():
        while True:
            ticks.append(1)
            await asyncio.sleep(0.01)

    async def main():
        side = asyncio.ensure_future(other_work())
        result = await c.follow_async(Trajectory.quintic(q0, q0 + DELTA, 1.0), timeout=10.0)
        # From the command in force (the measured position lags it a little).
        back = await c.follow_async(Trajectory.quintic(c.state.q_cmd, q0, 1.0), timeout=10.0)
        side.cancel()
        return result, back

    result, back = asyncio.run(main())
    assert result.ok and back.ok
    assert len(ticks) > 5  # the event loop kept running while the goals executed


def test_stop_aborts_a_running_goal_with_invalid_state():
    c = Controller(SimulatedArm("fr3", clock="realtime"), default_path_tolerance=0.2).start()
    q0 = c.state.q
    handle = c.follow(Trajectory.quintic(q0, q0 + DELTA, 5.0), wait=False)
    c.stop()
    result = handle.result(timeout=2.0)
    assert result.code.name == "INVALID_STATE"


def test_a_goal_and_a_tare_right_after_close_and_use_law_none_are_accepted(controller):
    """When close() or use_law(None) returns, trajectory execution runs again: the next goal and tare
    are accepted every time, however the threads were scheduled (no timing is asserted)."""
    from test_python_law_lockstep import sine_law

    from jtac_py import laws

    c = controller
    law = laws.compile(sine_law, 5, 9, params=[0.05, 3.0, 3.0, 0.0, 0.0])
    for attempt in range(6):
        if attempt % 2 == 0:
            stream = c.stream()
            q0 = np.asarray(c.state.q_cmd)
            for k in range(25):
                q = q0.copy()
                q[3] += 0.05 * (1.0 - np.cos(0.2 * k))
                stream.send(q)
                time.sleep(0.008)
            stream.close()
            what = "close()"
        else:
            c.use_law(law)
            time.sleep(0.2)
            c.use_law(None)
            what = "use_law(None)"
        tare = c.zero_fts()
        assert tare.ok, f"attempt {attempt}, after {what}: {tare.message}"
        q = np.asarray(c.state.q_cmd)
        result = c.follow(Trajectory.quintic(q, q + 0.02, 0.3), timeout=10.0)
        assert result.ok, f"attempt {attempt}, after {what}: {result.message}"


def test_a_restart_after_a_stop_mid_motion_holds_the_robots_command_and_leaves_the_limiter_idle():
    # Stopped while moving at up to 0.5 rad/s and started again, the controller holds the command the
    # robot holds (the last one it was sent, which it echoes as q_d): the hardware limiter has nothing
    # to shape. Before, the restarted controller took a state from before the stop and held a
    # command up to a period of motion off the robot's: 52-378 limited packets in the next 0.5 s.
    c = Controller(SimulatedArm("fr3", clock="realtime"), default_path_tolerance=0.3).start()
    try:
        for run in range(3):
            q0 = c.state.q_cmd
            sign = 1.0 if run % 2 == 0 else -1.0
            handle = c.follow(Trajectory.quintic(q0, q0 + sign * 0.5, 1.9), wait=False)
            deadline = time.monotonic() + 5.0
            while np.abs(c.state.dq_cmd).max() < 0.4 and time.monotonic() < deadline:
                time.sleep(0.005)
            c.stop()
            handle.result(timeout=2.0)
            held = c.packet_trace()["q_cmd"][-1]  # the robot holds (and echoes) the last command
            counters = c.timing()["hardware"]
            c.start()
            # The cycle start() waited for is one of the new run: already holding the robot's command.
            np.testing.assert_array_equal(c.state.q_cmd, held)
            time.sleep(0.5)
            state = c.state
            np.testing.assert_array_equal(state.q_cmd, held)
            np.testing.assert_array_equal(state.dq_cmd, np.zeros(7))
            after = c.timing()["hardware"]
            assert after["packets"] > counters["packets"]
            assert after["limiter_activations"] == counters["limiter_activations"], f"run {run}"
    finally:
        c.stop()
    # Every packet after the last restart was the held command, at rest (no limit cycle).
    trace = c.packet_trace()
    new = trace["packet"] >= counters["packets"]
    assert new.any()
    np.testing.assert_array_equal(trace["q_cmd"][new], np.tile(held, (int(new.sum()), 1)))
    np.testing.assert_array_equal(trace["dq_cmd"][new], np.zeros((int(new.sum()), 7)))


def test_controller_time_at_maps_the_host_clock_onto_the_robots():
    c = Controller(SimulatedArm("fr3", clock="realtime"))
    with pytest.raises(RuntimeError, match="no controller cycle yet"):
        c.controller_time_at()
    with c:
        time.sleep(0.2)  # the clock map is fitted to the states' arrival
        host_s = time.monotonic()
        now_s = c.controller_time_at(host_s)
        assert c.state.time <= now_s + 0.05  # the last state arrived before now (50 ms: a loaded fit)
        # The simulated arm's clock is the host's: one second is one second (a loaded host delays
        # state arrivals, not the clock's rate, by a few ms).
        assert c.controller_time_at(host_s + 1.0) - now_s == pytest.approx(1.0, abs=0.02)
        with c.stream() as stream:
            assert abs(c.controller_time_at() - stream.now()) < 0.05
