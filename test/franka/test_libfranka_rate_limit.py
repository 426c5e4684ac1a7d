"""bench/libfranka_rate_limit.py: libfranka's own lowpass filter and rate limiter, called in the
libfranka.so that pylibfranka ships, as Robot::control(..., limit_rate=true) applies them.

No robot here: the robot's echo of each command (q_d, and dq_d, ddq_d as backward differences, as
franka-sim publishes them) is modelled in double and in float32 (the wire's precision), so what the
bare pylibfranka row of bench/README.md shows can be read off exact numbers.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
pytest.importorskip("pylibfranka")
import libfranka_rate_limit as lrl  # noqa: E402

DT_S = lrl.DELTA_T_S
Q0_RAD = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])  # Franka's ready pose
JERK_RAD_S3 = lrl.MAX_JOINT_JERK_RAD_S3[0]
ACCELERATION_RAD_S2 = lrl.MAX_JOINT_ACCELERATION_RAD_S2[0]


@pytest.fixture(scope="module")
def lib() -> lrl.Libfranka:
    return lrl.Libfranka()


def run_limited(
    targets: np.ndarray, float32_echo: bool, cutoff_hz: float = lrl.DEFAULT_CUTOFF_HZ
) -> np.ndarray:
    """The commands a limited loop sends for `targets` (one row per cycle), each answering the robot's
    echo of the previous command: q_d = the command, dq_d and ddq_d its backward differences."""
    limit = lrl.JointPositionRateLimiter(lrl.fr3_velocity_bounds(), cutoff_hz=cutoff_hz)
    q_d, dq_d, ddq_d = targets[0].copy(), np.zeros(7), np.zeros(7)
    sent = []
    for target in targets:
        echo = [np.float32(x).astype(float) if float32_echo else x for x in (q_d, dq_d, ddq_d)]
        q_c = limit(target, *echo)
        dq_new = (q_c - q_d) / DT_S
        q_d, dq_d, ddq_d = q_c, dq_new, (dq_new - dq_d) / DT_S
        sent.append(q_c)
    return np.array(sent)


def third_difference(q: np.ndarray) -> np.ndarray:
    return np.abs(np.diff(q, 3, axis=0)) / DT_S**3


def stream_of_steps(rate_hz: float, seconds: float) -> np.ndarray:
    """A 0.3 rad ramp over `seconds` on every joint, held between samples at `rate_hz` (the bare loop's
    'latest target'), at 1 kHz."""
    t = np.arange(0.0, seconds, DT_S)
    held = np.floor(t * rate_hz) / rate_hz
    return Q0_RAD + np.outer(np.clip(held / seconds, 0.0, 1.0) * 0.3, np.ones(7))


def test_lowpass_is_libfrankas_first_order_filter(lib: lrl.Libfranka) -> None:
    gain = DT_S / (DT_S + 1.0 / (2.0 * math.pi * 100.0))
    assert lib.lowpass(DT_S, 1.0, 0.0, 100.0) == pytest.approx(gain, rel=1e-15)
    assert lib.lowpass(DT_S, 0.25, 0.25, 100.0) == 0.25
    with pytest.raises(ValueError, match="finite"):
        lib.lowpass(DT_S, math.nan, 0.0, 100.0)
    with pytest.raises(ValueError, match="cutoff_hz"):
        lib.lowpass(DT_S, 1.0, 0.0, 0.0)


def test_limit_rate_bounds_a_step_from_rest_by_the_jerk(lib: lrl.Libfranka) -> None:
    v = [2.62] * 7
    zeros = [0.0] * 7
    step = [0.1] * 7
    q = lib.limit_rate(
        v,
        [-x for x in v],
        lrl.MAX_JOINT_ACCELERATION_RAD_S2,
        lrl.MAX_JOINT_JERK_RAD_S3,
        step,
        zeros,
        zeros,
        zeros,
    )
    # From rest, one cycle of the largest jerk: Δq = jerk · dt³.
    np.testing.assert_allclose(q, JERK_RAD_S3 * DT_S**3, rtol=1e-12)
    # A command the limits allow passes unchanged: constant 0.1 rad/s.
    q = lib.limit_rate(
        v,
        [-x for x in v],
        lrl.MAX_JOINT_ACCELERATION_RAD_S2,
        lrl.MAX_JOINT_JERK_RAD_S3,
        [1e-4] * 7,
        zeros,
        [0.1] * 7,
        zeros,
    )
    np.testing.assert_allclose(q, 1e-4, rtol=1e-12)
    with pytest.raises(ValueError, match="finite"):
        lib.limit_rate(v, v, v, v, [math.inf] * 7, zeros, zeros, zeros)


def test_the_limiter_takes_the_first_command_as_its_reference() -> None:
    """libfranka's convertMotion filters and limits the first command against itself: it passes."""
    limit = lrl.JointPositionRateLimiter(lrl.fr3_velocity_bounds())
    first = Q0_RAD + 0.01
    np.testing.assert_allclose(limit(first, Q0_RAD, np.zeros(7), np.zeros(7)), first, rtol=0.0, atol=1e-15)
    # After it, the robot's q_d is the reference: the same command is now a step, filtered and limited.
    assert np.abs(limit(first + 0.05, first, np.zeros(7), np.zeros(7)) - first).max() < 1e-5


def test_the_velocity_envelope_narrows_at_the_joint_limit() -> None:
    bounds = lrl.fr3_velocity_bounds()
    lower, upper = bounds(Q0_RAD)
    assert upper == (2.62, 2.62, 2.62, 2.62, 5.26, 4.18, 5.26)
    near_upper = Q0_RAD.copy()
    near_upper[0] = 2.74  # 3.7 mrad inside joint 1's 2.7437 rad
    assert 0.0 <= bounds(near_upper)[1][0] < 0.1 and bounds(near_upper)[0][0] == lower[0]


def test_a_limited_stream_stays_within_the_limits_with_a_double_echo() -> None:
    """The bare loop's 125 Hz 'latest target' through libfranka's limiter, the robot echoing in double:
    jerk and acceleration within libfranka's bounds (5000 - 1e-3, 10 - 1e-3) on every cycle."""
    sent = run_limited(stream_of_steps(125.0, 3.0), float32_echo=False)
    assert third_difference(sent).max() <= JERK_RAD_S3 * (1 + 1e-9)
    assert (np.abs(np.diff(sent, 2, axis=0)) / DT_S**2).max() <= ACCELERATION_RAD_S2 * (1 + 1e-9)
    # It works at its bound: a held target is a step the limiter has to take at full jerk.
    assert third_difference(sent).max() > 0.99 * JERK_RAD_S3


def test_a_float32_echo_takes_a_saturated_limiter_past_the_robots_jerk_bound() -> None:
    """The robot's state carries q_d, dq_d, ddq_d in float32: the limiter steers to 5000 - 1e-3 rad/s³
    against the rounded echo, so the commands themselves differ by more: what franka-sim's FR3 check
    (5000 rad/s³, factor 1.0) trips on in the bare row's stream runs (5003-5060 rad/s³ robot-side)."""
    sent = run_limited(stream_of_steps(125.0, 3.0), float32_echo=True)
    peak = third_difference(sent).max()
    assert peak > 5000.0, peak
    assert peak < 1.1 * JERK_RAD_S3, peak  # limited still: the unlimited stream's steps are ~1e5
    unlimited = third_difference(stream_of_steps(125.0, 3.0)).max()
    assert unlimited > 20 * JERK_RAD_S3, unlimited
