"""Timed streams on the simulated FR3 in lockstep: action chunks of a policy and stamped single targets.

Layer: loop with simulated hardware (MuJoCo arm, hardware thread with rate matching and limiter, the
controller's StreamLaw, the Python API), 1 ms at a time on a virtual clock. The 1 kHz command the robot
receives is checked with numbers: tracking error against the known target, velocity steps per packet
against the limiter's a_max·T, jerk against the robot's 5000 rad/s³, the limiter's activations.
"""

import math

import numpy as np
import pytest

from jtac_py import robots
from jtac_py.controller import LIMIT_MARGIN, Controller, StreamState, Trajectory
from jtac_py.hardware import SimulatedArm

SPEC = robots.robot_spec("fr3")
ACC_MAX = np.array(SPEC.ddq_max_rad_s2) * LIMIT_MARGIN  # [rad/s²], the limiter's bound
AMPLITUDE = np.array([0.15, -0.10, 0.10, 0.20, -0.15, 0.10, 0.25])  # [rad]
OMEGA = np.array([1.5, 2.0, 2.5, 1.2, 3.0, 1.8, 2.2])  # [rad/s]


def _controller(**overrides):
    arm = SimulatedArm("fr3", clock="lockstep")
    controller = Controller(arm, **overrides).start()
    controller.step(20)
    return controller


@pytest.fixture
def c():
    controller = _controller()
    yield controller
    controller.stop()


def _target(q0, t):
    """A smooth 7-joint motion from rest at t = 0: q0 + A(1 − cos ωt) [rad]."""
    return q0 + AMPLITUDE * (1.0 - np.cos(OMEGA * max(t, 0.0)))


class _Device:
    """Collects the robot's 1 kHz command packet by packet."""

    def __init__(self, controller):
        self.c = controller
        self.q, self.dq = [], []

    def step(self):
        assert self.c.step(1).name == "OK"
        q, dq = self.c.device_command()
        self.q.append(q.copy())
        self.dq.append(dq.copy())

    def velocity_steps(self, start=0):
        """Per-packet change of the commanded velocity, per joint (n − 1, 7) [rad/s]."""
        return np.abs(np.diff(np.array(self.dq[start:]), axis=0))

    def jerk(self, start=0):
        """Third difference of the commanded position over 1 ms [rad/s³]."""
        return np.abs(np.diff(np.array(self.q[start:]), n=3, axis=0)) / 0.001**3


def _limiter_activations(c):
    return c.timing()["hardware"]["limiter_activations"]


def _policy_chunk(q0, observed_s, start_s, points=16, spacing_s=0.02, offset_rad=0.0):
    """A chunk computed from the observation at `observed_s`: the target at observed + k·spacing
    (times relative to the observation), offset by `offset_rad` (a policy's disagreement)."""
    times = spacing_s * np.arange(points)
    q = np.array([_target(q0, observed_s - start_s + t) for t in times]) + offset_rad
    return times, q


def test_10_hz_chunks_with_100_ms_latency_track_the_target_smoothly(c):
    """A policy at 10 Hz: each chunk (16 points, 20 ms apart) computed from an observation 100 ms old,
    disagreeing with the last by ±2 mrad. The arm tracks the target within the disagreement plus its
    own lag; no packet changes the velocity by more than the limiter's a_max·T, and the limiter never
    has to act (the command arrives smooth)."""
    dev = _Device(c)
    rng = np.random.default_rng(5)
    with c.stream() as stream:
        q0 = c.state.q_cmd
        start = stream.now()
        observations = {}  # send time [ms] → observation time [s]
        errors = []
        for k in range(3000):
            if k == 300:
                activations_before = _limiter_activations(c)
            if k % 100 == 0:
                observations[k + 100] = stream.now()  # the policy reads the state now …
            if k in observations:  # … and its chunk arrives 100 ms later
                times, q = _policy_chunk(q0, observations[k], start, offset_rad=rng.choice([-0.002, 0.002]))
                stream.send_chunk(times, q, observed_at_s=observations.pop(k))
            dev.step()
            if k > 500:
                errors.append(np.abs(c.state.q - _target(q0, stream.now() - start)).max())
        assert stream.chunks_taken == 29
        assert stream.stale_chunks == 0 and stream.brakes == 0
        assert stream.state == StreamState.FOLLOWING
        # From the second chunk on (the first joins a motion already under way from rest).
        steps = dev.velocity_steps(start=300)
        assert np.all(steps <= ACC_MAX * 0.001), steps.max(axis=0) / 0.001
        # Measured: ≈ 3.5 mrad (2 mrad disagreement + the arm's lag at up to 0.75 rad/s).
        assert max(errors) < 0.006, max(errors)
        assert _limiter_activations(c) == activations_before
        jerk = dev.jerk(start=300).max()
        print(
            f"10 Hz chunks: peak velocity step {steps.max() / 0.001:.2f} rad/s² per packet, "
            f"peak jerk {jerk:.0f} rad/s³, error {max(errors) * 1e3:.2f} mrad"
        )
        assert jerk < 1000.0, jerk  # the robot's limit is 5000 rad/s³


def test_a_stale_chunk_brakes_the_arm_to_rest_and_a_fresh_one_resumes(c):
    dev = _Device(c)
    with c.stream() as stream:
        q0 = c.state.q_cmd
        start = stream.now()
        for k in range(800):
            if k % 100 == 0:
                observed = stream.now() - 0.05
                stream.send_chunk(*_policy_chunk(q0, observed, start), observed_at_s=observed)
            dev.step()
        assert stream.state == StreamState.FOLLOWING
        moving = np.abs(c.state.dq_cmd).max()
        assert moving > 0.2  # [rad/s]
        # A chunk whose 300 ms lie wholly before now: refused to move, the arm brakes.
        observed = stream.now() - 0.5
        stream.send_chunk(*_policy_chunk(q0, observed, start), observed_at_s=observed)
        dev.step()
        assert stream.stale_chunks == 1 and stream.brakes == 1
        assert stream.state == StreamState.BRAKING
        # Synchronised stop within stop_accelerations (5 rad/s²): moving / 5 s, then at rest.
        stop_s = moving / 5.0
        for _ in range(int(stop_s * 1000) + 20):
            dev.step()
        assert stream.state == StreamState.HOLDING
        np.testing.assert_allclose(c.state.dq_cmd, 0.0, atol=1e-12)
        decel = np.abs(np.diff(np.array(dev.dq[-int(stop_s * 1000) - 20 :]), axis=0)).max(axis=0) / 0.001
        assert np.all(decel <= 5.0 + 1e-6), decel
        held = c.state.q_cmd
        # A fresh chunk resumes from where the arm rests, without a velocity step.
        observed = stream.now()
        times = 0.02 * np.arange(16)
        stream.send_chunk(times, [held + 0.001 * t for t in times], observed_at_s=observed)
        for _ in range(300):
            dev.step()
        assert stream.state == StreamState.FOLLOWING
        assert np.all(dev.velocity_steps(start=len(dev.dq) - 300) <= ACC_MAX * 0.001)


def test_no_chunk_for_the_timeout_brakes_and_is_reported():
    c = _controller()
    try:
        dev = _Device(c)
        # A long chunk (2 s of future) but a timeout of 0.3 s: braking starts 0.3 s after it came.
        with c.stream(timeout_s=0.3) as stream:
            q0 = c.state.q_cmd
            start = stream.now()
            times = 0.05 * np.arange(41)
            stream.send_chunk(times, [_target(q0, t) for t in times])
            for _ in range(295):
                dev.step()
            assert stream.state == StreamState.FOLLOWING
            for _ in range(10):
                dev.step()
            assert stream.state == StreamState.BRAKING and stream.brakes == 1
            for _ in range(500):
                dev.step()
            assert stream.state == StreamState.HOLDING
            assert stream.now() - start > 0.8
    finally:
        c.stop()


def test_non_finite_or_malformed_chunks_are_refused_naming_field_joint_and_value(c):
    with c.stream() as stream:
        q = np.tile(c.state.q_cmd, (4, 1))
        times = [0.0, 0.1, 0.2, 0.3]
        bad = q.copy()
        bad[2, 5] = math.nan
        with pytest.raises(ValueError, match=r"positions_rad\[2\]: joint 'fr3_joint6' is nan"):
            stream.send_chunk(times, bad)
        with pytest.raises(ValueError, match=r"velocities_rad_s\[0\]: joint 'fr3_joint1' is inf"):
            stream.send_chunk(times, q, np.where(np.arange(7) == 0, math.inf, 0.0) * np.ones((4, 1)))
        with pytest.raises(ValueError, match="increase strictly"):
            stream.send_chunk([0.0, 0.1, 0.1, 0.3], q)
        with pytest.raises(ValueError, match=r"times_s\[0\] must be finite and >= 0"):
            stream.send_chunk([-0.1, 0.1, 0.2, 0.3], q)
        with pytest.raises(ValueError, match=r"shape \(4, 7\)"):
            stream.send_chunk(times, q[:, :6])
        with pytest.raises(ValueError, match="observed_at_s"):
            stream.send_chunk(times, q, observed_at_s=math.nan)
        with pytest.raises(ValueError, match="chunk has 1 to 64 points"):
            stream.send_chunk(0.01 * np.arange(65), np.tile(c.state.q_cmd, (65, 1)))
        c.step(5)
        assert stream.chunks_taken == 0 and stream.state == StreamState.HOLDING


def test_125_hz_targets_with_1_ms_send_jitter_give_a_smooth_command(c):
    """A 125 Hz sender whose sends fall 1 ms early or late at random (each target the motion at its
    send time): the targets are placed at their send stamps, so the 1 kHz command's jerk stays near the
    motion's own (≤ 3.6 rad/s³), far below the robot's 5000 rad/s³, and the limiter never acts."""
    dev = _Device(c)
    rng = np.random.default_rng(11)
    with c.stream() as stream:
        q0 = c.state.q_cmd
        start = stream.now()
        activations_before = _limiter_activations(c)
        slot, next_send = 0, 0
        for k in range(3000):
            if k == next_send:
                stream.send(_target(q0, stream.now() - start))
                slot += 1
                next_send = 8 * slot + int(rng.integers(-1, 2))
            dev.step()
        assert stream.targets_taken >= 370
        assert stream.brakes == 0
        jerk = dev.jerk(start=100).max()
        # Measured ≈ 4 rad/s³ (the motion's own up to 3.6 rad/s³).
        print(
            f"125 Hz targets ±1 ms: peak jerk {jerk:.1f} rad/s³, delay {stream.target_delay_s * 1e3:.2f} ms"
        )
        assert jerk < 50.0, jerk
        assert np.all(dev.velocity_steps(start=100) <= ACC_MAX * 0.001)
        assert _limiter_activations(c) == activations_before
        # The command runs one sender interval plus its jitter behind the motion (≈ 11 ms).
        assert 0.009 <= stream.target_delay_s <= 0.014


def test_a_target_sent_late_is_placed_at_the_time_it_was_sampled_for(c):
    """A 125 Hz sender that computes each target for an instant and sends it 0–4 ms later (a slow
    computation, the GIL): stamped with sampled_at_s the command is the motion delayed by exactly
    target_delay_s and the device's fixed lag (to 50 µrad); stamped at the call it is off by up to
    speed × 4 ms and rough."""
    rng = np.random.default_rng(5)
    errors, jerks = {}, {}
    for stamped in (True, False):
        controller = _controller()
        dev = _Device(controller)
        with controller.stream() as stream:
            q0 = controller.state.q_cmd
            start = stream.now()
            pending = []  # (send at packet, sampled at [s], target)
            for k in range(2500):
                if k % 8 == 0:
                    tc = stream.now()
                    pending.append((k + int(rng.integers(0, 5)), tc, _target(q0, tc - start)))
                while pending and pending[0][0] <= k:
                    _, tc, q = pending.pop(0)
                    stream.send(q, sampled_at_s=tc if stamped else None)
                dev.step()
            # The device's packets run a constant few ms behind the controller (the hardware thread's
            # sample placement): the best constant delay, within 3 ms of target_delay_s.
            t = np.arange(len(dev.q)) * 0.001
            best = min(
                (np.abs(np.array(dev.q) - [_target(q0, ti - d) for ti in t])[1000:].max(), d)
                for d in stream.target_delay_s + np.arange(-3, 3.25, 0.25) * 1e-3
            )
            errors[stamped] = best[0]
            jerks[stamped] = dev.jerk(start=1000).max()
        controller.stop()
    print(
        f"sampled_at_s: error {errors[True] * 1e6:.1f} µrad, jerk {jerks[True]:.0f} rad/s³; "
        f"at the call: {errors[False] * 1e6:.1f} µrad, {jerks[False]:.0f} rad/s³"
    )
    assert errors[True] < 50e-6, errors[True]
    assert errors[False] > 10 * errors[True]
    assert jerks[True] < 50.0 < jerks[False]
    with pytest.raises(ValueError, match="sampled_at_s"):
        c.stream().send(c.state.q_cmd, sampled_at_s=float("nan"))


def test_switching_between_chunks_single_targets_and_goals(c):
    dev = _Device(c)
    q_start = c.state.q_cmd
    with c.stream() as stream:
        q0 = c.state.q_cmd
        start = stream.now()
        for k in range(1000):
            if k % 100 == 0:
                observed = stream.now()
                stream.send_chunk(*_policy_chunk(q0, observed, start), observed_at_s=observed)
            dev.step()
        for k in range(1000):  # single targets continue the same motion
            if k % 8 == 0:
                stream.send(_target(q0, stream.now() - start))
            dev.step()
        for k in range(1000):  # chunks again
            if k % 100 == 0:
                observed = stream.now()
                stream.send_chunk(*_policy_chunk(q0, observed, start), observed_at_s=observed)
            dev.step()
        assert stream.chunks_taken == 20 and stream.targets_taken == 125 and stream.brakes == 0
        # Every mode keeps the robot's command within the limiter's acceleration bound.
        assert np.all(dev.velocity_steps() <= ACC_MAX * 0.001 + 1e-12)
        # The chunks' motion at its own time, 20 ms of lag at most from the single targets.
        assert np.abs(c.state.q_cmd - _target(q0, stream.now() - start)).max() < 0.003
    # The stream ends (close): the arm brakes to rest, and trajectory execution is back.
    c.step(500)
    q = c.state.q_cmd
    assert c.follow(Trajectory.quintic(q, q_start, 2.0), timeout=5.0).ok
