"""Goal intake's admittance stability check, confirmed on the simulated FR3 in lockstep.

Layer: loop with simulated hardware (as test_controller_lockstep.py). At 1000 and 125 Hz a set 20 %
below the largest stable stiffness K_max = (4M − 2hD)/h² and one 20 % above it go to the arm: with the
check on, goal intake refuses the second naming the set, the rate and K_max; with it switched off (the
test-only JtacConfig.check_admittance_stability, set here through jtac_py.config.native_config), a
0.5 N push makes the first settle and the second diverge, growing by the spectral radius the check
predicts for every controller cycle.
"""

import numpy as np
import pytest

from jtac_py import _native, admittance
from jtac_py import config as jtac_config
from jtac_py.controller import Controller, Trajectory
from jtac_py.hardware import SimulatedArm

RC = _native.ResultCode
MASS = 0.1  # [kg] on x y z
# Damping per rate [N·s/m]: h·D/M = 0.32 at both, so K_max = 336000 N/m at 1 kHz and 5250 N/m at 125 Hz.
DAMPING = {1000: 32.0, 125: 4.0}
PUSH_N = 0.5  # [N], small enough that the diverging offset stays linear (< 0.1 rad) for 6 cycles


def _k_max(rate):
    return (4.0 * MASS - 2.0 * DAMPING[rate] / rate) * rate**2


def _tip(rate, stiffness):
    return {
        "mass": [MASS] * 3 + [1.0] * 3,
        "stiffness": [stiffness] * 3 + [0.0] * 3,
        "damping": [DAMPING[rate]] * 3 + [1.0] * 3,
        "selected_axes": [True] * 3 + [False] * 3,
    }


@pytest.fixture
def unchecked(monkeypatch):
    """Controllers built while this is active accept what the stability check would refuse."""
    native_config = jtac_config.native_config

    def without_check(values, urdf_xml=None):
        config = native_config(values, urdf_xml)
        config.check_admittance_stability = False
        return config

    monkeypatch.setattr(jtac_config, "native_config", without_check)


def _controller(rate):
    arm = SimulatedArm("fr3", clock="lockstep")
    controller = Controller(arm, update_rate=rate, default_path_tolerance=0.3).start()
    controller.step(20)
    return arm, controller


def _pushed(rate, stiffness):
    """Holds the start pose with the set, pushes 0.5 N down for 20 ms: the result, |offset| per cycle."""
    arm, c = _controller(rate)
    try:
        q0 = c.state.q_cmd
        handle = c.follow(Trajectory.quintic(q0, q0, 3.0), admittance=_tip(rate, stiffness), wait=False)
        c.step(100)
        with c.record(["joint_offset"]) as rec:
            arm.push([0.0, 0.0, -PUSH_N], 0.02)
            c.step(1000)  # 1 s of packets: 1000 controller cycles at 1 kHz, 125 at 125 Hz
        result = handle.result(timeout=10.0)
        return result, np.linalg.norm(rec.data()["joint_offset"], axis=1)
    finally:
        c.stop()


@pytest.mark.parametrize("rate", [1000, 125])
def test_intake_refuses_the_set_above_the_bound_and_warns_about_the_one_below(rate):
    k_max = _k_max(rate)
    _arm, c = _controller(rate)
    q0 = c.state.q_cmd
    refused = c.follow(Trajectory.quintic(q0, q0, 0.5), admittance=_tip(rate, 1.2 * k_max), timeout=5.0)
    assert refused.code == RC.INVALID_GOAL
    for part in (
        "admittance_parameters (tip 'fr3_ee') axis x",
        f"M = 0.1 kg, K = {1.2 * k_max:.6g} N/m, D = {DAMPING[rate]:g} N·s/m at {rate} Hz is unstable",
        f"the largest stable stiffness for this mass and damping at this rate is {k_max:.6g} N/m",
    ):
        assert part in refused.message
    # 0.8·K_max: inside the margin, damping ratio 0.098 (< 0.2): accepted, the warning in the result.
    accepted = c.follow(Trajectory.quintic(q0, q0, 0.5), admittance=_tip(rate, 0.8 * k_max), timeout=5.0)
    assert accepted.ok, accepted.message
    assert "warning: admittance_parameters (tip 'fr3_ee') axes x y z: " in accepted.message
    assert "damping ratio 0.09759 < 0.2" in accepted.message
    c.stop()


@pytest.mark.parametrize("rate", [1000, 125])
def test_with_the_check_off_the_set_below_settles_and_the_one_above_diverges_by_its_radius(rate, unchecked):
    k_max = _k_max(rate)
    below = admittance.check(MASS, 0.8 * k_max, DAMPING[rate], rate, selected_axes=[True] * 3 + [False] * 3)
    above = admittance.check(MASS, 1.2 * k_max, DAMPING[rate], rate, selected_axes=[True] * 3 + [False] * 3)
    assert below.accepted and below.verdict == "lightly_damped"
    assert not above.accepted and above.verdict == "unstable"
    rho = above.axes[0].spectral_radius  # 2.014: h·D/M and h²K/M, hence ρ, are the same at both rates
    assert rho == pytest.approx(2.0144, abs=1e-4)

    result, offset = _pushed(rate, 0.8 * k_max)
    assert result.ok, result.message
    peak = offset.max()
    assert 1e-6 < peak < 0.01  # [rad]: the push deflected the tool, by about F/K
    assert offset[-1] < 1e-6 * peak  # and within 1 s it is back on the path

    result, offset = _pushed(rate, 1.2 * k_max)
    assert not result.ok  # the offset carried the arm off the path: a stop
    assert offset.max() > 1e3  # [rad] of (wrapped) joint offset: it diverged
    # While the offset is small enough for the kinematics to be linear, it grows by ρ every cycle.
    linear = np.flatnonzero((offset > 1e-4) & (offset < 1e-1))
    first, last = linear[0], linear[-1]
    assert last - first >= 5
    measured = (offset[last] / offset[first]) ** (1.0 / (last - first))
    assert measured == pytest.approx(rho, rel=0.05)
