"""The FR3's position-based joint velocity limits, end to end on franka-sim.

Near the end of its range an FR3 joint may move toward it only as fast as it can still stop there:
libfranka >= 0.15 and the robot bound the velocity by min(dq_max, max(0, √(2·d·(q_max − q)) − c)) − 1 mrad/s
(the URDF's ``<position_based_velocity_limits>``), and franka-sim 1.1.7 enforces the same envelope on the
commanded velocity (and, +0.1 rad/s, on the measured one). Joint 4's upper end is −0.1458 rad, d = 4 rad/s²,
c = 0.3 rad/s: 30 mrad below it 0.19 rad/s are allowed, 15 mrad below it 0.05 rad/s. A goal that covers
those 15 mrad in 0.11 s asks for up to 0.14 rad/s more than that: a limiter with constant velocity limits
passes it on and franka-sim aborts with ``joint_motion_generator_velocity_limits_violation`` (seen:
``q_c joint 4 = 0.177256 rad/s, limit 0.173 rad/s``, every run); jtac's MotionLimiter brakes on the
envelope × its margin instead, and the goal ends where it was sent.

Why the last 30 mrad and not a fast goal from afar: franka-sim's measured velocity jumps to up to about
twice itself for single samples (two commands landing in one physics step give its position servo one
step of double feed-forward velocity), and its measured check allows only 0.1 rad/s above the envelope.
A reference riding 0.8 × the envelope at 0.3–1.5 rad/s tripped that check in about half the runs here;
at the ≤ 0.15 rad/s of this goal the 0.1 rad/s cover the jumps.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

pylibfranka = pytest.importorskip("pylibfranka")

from test_jtac_on_franka_sim import _no_reflex, _running  # noqa: E402

from jtac_py import _native  # noqa: E402
from jtac_py.controller import Trajectory  # noqa: E402

pytestmark = [
    pytest.mark.franka_sim,
    pytest.mark.skipif(not _native.HAVE_LIBFRANKA, reason="built without libfranka (see the CMake message)"),
]

JOINT = 3  # FR3 joint 4 (franka-sim's "joint 4")
Q_MAX_RAD = -0.1458  # its upper end (FR3 URDF <limit upper=>)
VELOCITY_OFFSET_RAD_S = 0.30  # <position_based_velocity_limits velocity_offset=>
DECELERATION_RAD_S2 = 4.0  # <position_based_velocity_limits deceleration_limit=>
DQ_MAX_RAD_S = 2.62
APPROACH_RAD = Q_MAX_RAD - 0.03  # reached slowly first (at most 0.56 × the envelope on the way)
GOAL_RAD = Q_MAX_RAD - 0.015  # then this, fast
FAST_S = 0.11  # quintic: peak 0.26 rad/s, 7.2 rad/s², up to 0.14 rad/s over the envelope
SLOW_S = 3.0


def _envelope_upper_rad_s(q_rad: float) -> float:
    ramp = math.sqrt(max(0.0, 2.0 * DECELERATION_RAD_S2 * (Q_MAX_RAD - q_rad)))
    return min(DQ_MAX_RAD_S, max(0.0, ramp - VELOCITY_OFFSET_RAD_S)) - 1e-3


def test_the_fast_goal_asks_for_more_than_the_envelope():
    # The premise, without the robot: the goal's own velocity breaks the envelope on the way in.
    t = np.linspace(0.0, 1.0, 2001)
    q = APPROACH_RAD + (GOAL_RAD - APPROACH_RAD) * (10 * t**3 - 15 * t**4 + 6 * t**5)
    dq = (GOAL_RAD - APPROACH_RAD) / FAST_S * (30 * t**2 - 60 * t**3 + 30 * t**4)
    excess = max(v - _envelope_upper_rad_s(p) for p, v in zip(q, dq, strict=True))
    assert excess > 0.1


def test_a_fast_goal_to_a_joint_limit_and_back_stays_inside_the_envelope(franka_sim):
    with _running(franka_sim) as (arm, c):
        q0 = c.state.q_cmd
        approach = q0.copy()
        approach[JOINT] = APPROACH_RAD
        result = c.follow(Trajectory.quintic(q0, approach, SLOW_S), timeout=10.0)
        assert result.ok, result.message
        time.sleep(0.3)
        goal = approach.copy()
        goal[JOINT] = GOAL_RAD
        with c.record(["time", "q", "dq"]) as rec:
            result = c.follow(Trajectory.quintic(c.state.q_cmd, goal, FAST_S), timeout=10.0)
            assert result.ok, result.message
            # The hardware thread's reference closes the last mrad after the controller's own reference
            # arrived (it braked on the envelope); franka-sim's joint impedance lags it.
            time.sleep(0.5)
        _no_reflex(arm, c)
        np.testing.assert_allclose(c.state.q, goal, atol=0.01)
        data = rec.data()
        q = data["q"][:, JOINT]
        dq = data["dq"][:, JOINT]
        assert q.max() < Q_MAX_RAD - 0.01  # never within 10 mrad of the end
        assert dq.max() > 0.08  # it went in at speed
        # What franka-sim checks on the measured state: the velocity within the envelope + 0.1 rad/s.
        excess = max(v - _envelope_upper_rad_s(p) for p, v in zip(q, dq, strict=True))
        assert excess < 0.1, excess

        back = c.follow(Trajectory.quintic(c.state.q_cmd, q0, SLOW_S), timeout=10.0)
        assert back.ok, back.message
        time.sleep(0.5)
        np.testing.assert_allclose(c.state.q, q0, atol=0.02)
        assert c.timing()["hardware"]["device_errors"] == 0
        _no_reflex(arm, c)
