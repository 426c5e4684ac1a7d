"""Switching between goals, streams and custom laws: the hand-over rule (docs/python_api.md).

Layer: loop with simulated hardware (MuJoCo FR3, the hardware thread's rate matcher and limiter, the
native loop's law slot, the Python API), in lockstep. Each test switches while the arm moves and checks
from the recording that the command never changes its velocity faster than the stop accelerations in
force, that the hardware limiter never had to act, and what the owner is told.
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from jtac_py import laws
from jtac_py.controller import Controller, ResultCode, Trajectory
from jtac_py.hardware import SimulatedArm
from jtac_py.parameters import ParameterError

sys.path.insert(0, str(Path(__file__).parent))
from test_python_law_lockstep import sine_law

STOP_ACC = 2.0  # [rad/s²] well below the limiter's bounds: any cut shows


@pytest.fixture
def c():
    controller = Controller(SimulatedArm("fr3", clock="lockstep"), stop_accelerations=[STOP_ACC] * 7).start()
    controller.step(20)
    yield controller
    controller.stop()


@pytest.fixture(scope="module")
def swing():
    # The sine law from rest: q0 + A·sin(ω t) starts at A·ω rad/s, so use a cosine swing instead.
    return laws.compile(sine_law, 5, 9, params=[0.1, 3.0, 3.0, 0.0, 0.0])


def _limited(c):
    return c.timing()["hardware"]["limiter_activations"]


def _peak_acceleration(data, start=0):
    dq, t = data["dq_cmd"][start:], data["time"][start:]
    return float(np.max(np.abs(np.diff(dq, axis=0)) / np.diff(t)[:, None]))


def _moving_goal(c, duration_s=2.0):
    q0 = np.array(c.state.q_cmd)
    q1 = q0 + np.array([0.4, 0.0, 0.0, 0.6, 0.0, 0.0, 0.0])
    return c.follow(Trajectory.quintic(q0, q1, duration_s, joint_names=c.joint_names), wait=False)


def _speed(c):
    return float(np.abs(c.state.dq_cmd).max())


def test_opening_a_stream_while_a_goal_moves_brakes_the_goal_to_rest_first(c):
    goal = _moving_goal(c)
    c.step(1000)
    assert _speed(c) > 0.3
    limited = _limited(c)
    with c.record(["time", "dq_cmd"]) as rec:
        stream = c.stream()
        c.step(600)
    result = goal.result(0.1)
    assert result.code == ResultCode.INVALID_STATE and not result.canceled
    assert "handed over" in result.message and "a stream was opened (Controller.stream())" in result.message
    assert "deactivated" not in result.message
    assert _peak_acceleration(rec.data()) <= STOP_ACC * 1.001
    assert _limited(c) == limited
    assert _speed(c) == 0.0 and stream.holding
    stream.close()


def test_opening_a_stream_while_a_cancel_brakes_keeps_the_brake_and_the_cancel(c):
    goal = _moving_goal(c)
    c.step(1000)
    goal.cancel()
    c.step(30)
    with c.record(["time", "dq_cmd"]) as rec:
        stream = c.stream()
        c.step(600)
    result = goal.result(0.1)
    assert result.canceled and result.code == ResultCode.SUCCESSFUL, result
    assert _peak_acceleration(rec.data()) <= STOP_ACC * 1.001
    stream.close()


def test_closing_a_moving_stream_brakes_to_rest_and_the_next_goal_and_tare_are_accepted(c):
    stream = c.stream()
    c.step(20)
    q0 = np.array(c.state.q_cmd)
    limited = _limited(c)
    with c.record(["time", "dq_cmd"]) as rec:
        for k in range(150):  # a target moving at up to 0.2 rad/s, from rest
            now = stream.now()
            q = q0.copy()
            q[3] += 0.1 * (1.0 - math.cos(2.0 * k * 0.008))
            stream.send(q, sampled_at_s=now)
            c.step(8)
        assert _speed(c) > 0.1
        n_moving = len(rec.data()["time"])
        stream.close()
        # close() returns once the JTAC runs again: at rest, having braked within the stop rate.
        assert _speed(c) == 0.0
    assert _peak_acceleration(rec.data(), n_moving - 2) <= STOP_ACC * 1.001
    assert _limited(c) == limited
    packets = c._loop.packets
    tare = c.zero_fts()
    assert tare.ok, tare.message
    q = np.array(c.state.q_cmd)
    result = c.follow(Trajectory.quintic(q, q + 0.05, 0.5, joint_names=c.joint_names))
    assert result.ok, result.message
    assert c._loop.packets > packets


@pytest.mark.parametrize("kind", ["targets", "chunks"])
def test_a_stream_opened_on_a_motion_under_way_catches_up_within_the_stop_accelerations(c, kind):
    # A policy whose motion is under way when the stream opens (0.3 rad/s on joint 4, 0.1 rad off the
    # held command): the command catches up within the stop acceleration, the limiter stays idle, and
    # the command is then on the policy's motion; closed while it catches up, it brakes within them too.
    stream = c.stream()
    c.step(20)
    q0 = np.array(c.state.q_cmd)
    t_open = stream.now()
    limited = _limited(c)

    def policy(t):
        q = q0.copy()
        q[3] += 0.1 + 0.3 * (t - t_open)  # already 0.1 rad on, at 0.3 rad/s
        return q

    with c.record(["time", "q_cmd", "dq_cmd"]) as rec:
        for k in range(250):  # 2 s
            now = stream.now()
            if kind == "targets":
                stream.send(policy(now), sampled_at_s=now)
            elif k % 12 == 0:  # 10 Hz chunks of 16 points 20 ms apart (about)
                times = 0.02 * np.arange(16)
                stream.send_chunk(times, np.array([policy(now + t) for t in times]), observed_at_s=now)
            c.step(8)
    data = rec.data()
    assert stream.catch_ups >= 1
    assert _peak_acceleration(data) <= STOP_ACC * (1 + 1e-6)
    assert _limited(c) == limited
    # On the motion: at its speed, and within a target's delay of it.
    assert data["dq_cmd"][-1][3] == pytest.approx(0.3, abs=1e-3)
    lag_s = stream.target_delay_s if kind == "targets" else 0.0
    assert data["q_cmd"][-1][3] == pytest.approx(policy(data["time"][-1] - lag_s)[3], abs=3e-3)
    stream.close()
    assert _speed(c) == 0.0 and _limited(c) == limited


def test_closing_a_stream_while_it_catches_up_brakes_within_the_stop_accelerations(c):
    stream = c.stream()
    c.step(20)
    q0 = np.array(c.state.q_cmd)
    t_open = stream.now()
    limited = _limited(c)
    with c.record(["time", "dq_cmd"]) as rec:
        for _ in range(10):  # 80 ms: still catching up with a 0.5 rad/s motion
            now = stream.now()
            q = q0.copy()
            q[0] += 0.5 * (now - t_open + 0.2)
            stream.send(q, sampled_at_s=now)
            c.step(8)
        assert stream.catch_ups == 1 and _speed(c) > 0.01
        stream.close()
        assert _speed(c) == 0.0
    assert _peak_acceleration(rec.data()) <= STOP_ACC * (1 + 1e-6)
    assert _limited(c) == limited


def test_use_law_none_while_the_law_moves_brakes_to_rest_and_goals_follow(c, swing):
    with c.record(["time", "dq_cmd"]) as rec:
        c.use_law(swing, [0.1, 3.0, 3.0, 0.0, 0.0])
        c.step(1000)
        assert _speed(c) > 0.2
        n_moving = len(rec.data()["time"])
        limited = _limited(c)
        c.use_law(None)
        assert _speed(c) == 0.0 and c.law is None
    assert _peak_acceleration(rec.data(), n_moving - 2) <= STOP_ACC * 1.001
    assert _limited(c) == limited
    q = np.array(c.state.q_cmd)
    assert c.follow(Trajectory.quintic(q, q - 0.05, 0.5, joint_names=c.joint_names)).ok
    assert c.zero_fts().ok


@pytest.mark.parametrize("holder", ["stream", "law"])
def test_stop_accelerations_changed_while_a_stream_or_law_runs_rule_its_brake(c, swing, holder):
    if holder == "stream":
        stream = c.stream()
        q0 = np.array(c.state.q_cmd)
        for k in range(150):
            q = q0.copy()
            q[3] += 0.3 * (1.0 - math.cos(2.0 * k * 0.008))
            stream.send(q, sampled_at_s=stream.now())
            c.step(8)
    else:
        c.use_law(swing, [0.15, 3.0, 3.0, 0.0, 0.0])
        c.step(300)
    assert _speed(c) > 0.2
    c.set_parameters(stop_accelerations=[1.0] * 7)
    with c.record(["time", "dq_cmd"]) as rec:
        if holder == "stream":
            stream.close()
        else:
            c.use_law(None)
    peak = _peak_acceleration(rec.data())
    assert 0.9 <= peak <= 1.001, peak  # the new rate, not the 2.0 in force when it opened


@pytest.mark.parametrize("holder", ["stream", "law"])
def test_tare_and_time_scale_are_refused_at_once_naming_the_stream_or_law(c, swing, holder):
    if holder == "stream":
        opened = c.stream()
        name = "a stream is open (Controller.stream())"
    else:
        c.use_law(swing)
        name = "the custom law 'sine_law' is in use"
    c.step(50)
    packets = c._loop.packets
    with pytest.raises(RuntimeError, match="tare refused") as refused:
        c.zero_fts()
    assert name in str(refused.value)
    with pytest.raises(ParameterError, match="time_scale_percentage") as refused:
        c.set_parameters(time_scale_percentage=0)
    assert name in str(refused.value)
    assert c._loop.packets == packets  # nothing waited on the simulation
    assert c.time_scale == 100.0 and c.state.time_scale == 1.0
    if holder == "stream":
        opened.close()
    else:
        c.use_law(None)
    c.set_parameters(time_scale_percentage=50)
    c.step(1500)
    assert c.state.time_scale == pytest.approx(0.5, abs=1e-3)


def test_a_tare_right_after_closing_a_compliant_stream_is_accepted(c):
    stream = c.stream(admittance={"mass": 2.0, "stiffness": 400.0})
    c.step(100)
    with pytest.raises(RuntimeError, match="stream with admittance"):
        c.zero_fts()
    stream.close()
    tare = c.zero_fts()
    assert tare.ok, tare.message


def test_stream_brake_stops_now_and_the_next_input_resumes(c):
    stream = c.stream()
    q0 = np.array(c.state.q_cmd)

    def send_for(steps, phase0):
        for k in range(steps):
            q = q0.copy()
            q[3] += 0.2 * (1.0 - math.cos(2.0 * (phase0 + k) * 0.008))
            stream.send(q, sampled_at_s=stream.now())
            c.step(8)

    send_for(100, 0)
    assert _speed(c) > 0.1
    limited = _limited(c)
    with c.record(["time", "dq_cmd"]) as rec:
        stream.brake()
        c.step(400)
    assert _speed(c) == 0.0 and stream.holding and stream.active
    assert _peak_acceleration(rec.data()) <= STOP_ACC * 1.001
    assert _limited(c) == limited
    send_for(60, 100)
    assert stream.state.name == "FOLLOWING"
    stream.close()
