"""jtac_py.admittance: the core's stability check through the bindings, and goal intake using it.

Layer: the bound core. Numbers are checked against the closed form of the integrator's bound,
K_max = (4M − 2hD)/h², against the transition matrix built here by stepping semi-implicit Euler and
solved by numpy, and against the continuous mass-spring-damper (overshoot, final value).
"""

import math

import numpy as np
import pytest

from jtac_py import _native, admittance, robots

LINEAR = [True, True, True, False, False, False]


def _transition(m, k, d, h):
    """Semi-implicit Euler's matrix for one axis, column by column from the unit states."""
    columns = []
    for x, v in ((1.0, 0.0), (0.0, 1.0)):
        v += h * (-d * v - k * x) / m
        x += h * v
        columns.append((x, v))
    return np.array(columns).T


@pytest.mark.parametrize("rate", [1000.0, 125.0])
@pytest.mark.parametrize(("m", "d"), [(1.0, 20.0), (0.1, 4.0), (4.0, 80.0)])
def test_the_boundary_is_the_analytic_bound_on_both_sides(rate, m, d):
    h = 1.0 / rate
    k_max = (4.0 * m - 2.0 * h * d) / h**2
    below = admittance.check(m, k_max * (1 - 1e-9), d, rate).axes[0]
    above = admittance.check(m, k_max * (1 + 1e-9), d, rate).axes[0]
    assert below.max_stiffness == pytest.approx(k_max, rel=1e-12)
    assert below.verdict == "near_bound" and not below.accepted  # stable, inside the 10 % margin
    assert above.verdict == "unstable" and not above.accepted
    for stability, k in ((below, k_max * (1 - 1e-9)), (above, k_max * (1 + 1e-9))):
        numeric = np.abs(np.linalg.eigvals(_transition(m, k, d, h))).max()
        assert stability.spectral_radius == pytest.approx(numeric, rel=1e-9)
    assert below.spectral_radius < 1.0 < above.spectral_radius
    keep = 1.0 - admittance.STABILITY_MARGIN
    assert admittance.check(m, keep * k_max * (1 - 1e-9), d, rate).accepted
    assert not admittance.check(m, keep * k_max * (1 + 1e-9), d, rate).accepted


def test_per_axis_figures_and_the_critical_default():
    # M = 4 kg, K = 400 N/m: ωn = 10 rad/s; damping None = critical, 2·√(MK) = 80 N·s/m.
    result = admittance.check([4, 4, 4, 1, 1, 1], [400, 400, 400, 50, 50, 50], None, 1000)
    assert result.accepted and result.verdict == "stable" and result.message == ""
    x, rx = result.axes[0], result.axes[3]
    assert (x.name, x.damping, x.natural_frequency_rad_s, x.damping_ratio) == ("x", 80.0, 10.0, 1.0)
    assert x.settling_time_s == pytest.approx(math.log(50.0) / 10.0)
    assert rx.natural_frequency_rad_s == pytest.approx(math.sqrt(50.0))
    assert rx.damping_ratio == pytest.approx(1.0)
    # selected_axes: only those are checked, as at goal intake.
    only_z = admittance.check(0.1, 6000, 4, 125, selected_axes=[False, False, True, False, False, False])
    assert [a.name for a in only_z.axes] == ["z"]


def test_the_same_gains_are_stable_at_1000_hz_and_not_at_125_hz():
    # M = 0.1 kg, K = 5000 N/m, critically damped: h·D/M = 0.45 at 1 kHz, 3.6 at 125 Hz (bound: 2).
    fast = admittance.check(0.1, 5000.0, None, 1000)
    slow = admittance.check(0.1, 5000.0, None, 125)
    assert fast.accepted and fast.verdict == "stable"
    assert slow.verdict == "unstable"
    z = slow.axes[2]
    assert z.max_stiffness < 0.0 and z.max_damping == pytest.approx(25.0)
    assert (
        "no stiffness is stable with this mass and damping at this rate: D must stay below 25 N·s/m"
        in z.message
    )
    assert slow.message.startswith(
        "axis x: M = 0.1 kg, K = 5000 N/m, D = 44.7214 N·s/m at 125 Hz is unstable"
    )


def test_low_damping_warns_and_joint_damping_counts_as_damping():
    light = admittance.check(4.0, 400.0, 0.1 * 80.0, 1000, selected_axes=LINEAR)
    assert light.accepted and light.verdict == "lightly_damped"
    assert "damping ratio 0.1 < 0.2, a step overshoots by 72.9248 %" in light.axes[0].message
    # joint_damping 0.2/s · 4 kg = 0.8 N·s/m more: the same figures as D + 0.8.
    with_joint = admittance.check(4.0, 400.0, 8.0, 1000, joint_damping_per_s=0.2).axes[0]
    same = admittance.check(4.0, 400.0, 8.8, 1000).axes[0]
    assert with_joint.damping_ratio == pytest.approx(same.damping_ratio, rel=1e-15)
    assert with_joint.spectral_radius == pytest.approx(same.spectral_radius, rel=1e-15)
    # Free (K = 0, damped) is accepted; undamped or neither is not.
    assert admittance.check(4.0, 0.0, 40.0, 1000).verdict == "stable"
    assert admittance.check(4.0, 0.0, 40.0, 1000).axes[0].free_axis
    undamped = admittance.check(4.0, 400.0, 0.0, 1000)
    assert undamped.verdict == "unstable" and "undamped" in undamped.message


def test_bad_arguments_raise_naming_them():
    with pytest.raises(ValueError, match=r"mass must be a number or 6 values"):
        admittance.check([1, 2], 400, 40, 1000)
    with pytest.raises(ValueError, match=r"rate_hz = 0: must be finite and > 0"):
        admittance.check(1, 400, 40, 0)
    assert admittance.check(0.0, 400, 40, 1000).verdict == "invalid_input"


def test_the_step_responses_agree_when_stable_and_part_when_not():
    stable = admittance.check(4.0, 400.0, 0.3 * 80.0, 1000, selected_axes=LINEAR)  # ζ = 0.3
    r = admittance.step_response(stable, "x", force=8.0, duration_s=6.0)
    # The continuous response: final value F/K, overshoot exp(−ζπ/√(1−ζ²)) = 37.2 %.
    assert r["continuous"][-1] == pytest.approx(8.0 / 400.0, rel=1e-4)
    assert r["continuous"].max() / (8.0 / 400.0) - 1.0 == pytest.approx(
        math.exp(-0.3 * math.pi / math.sqrt(0.91)), abs=1e-3
    )
    # The discrete one at 1 kHz is within 1 % of the peak of it at every cycle.
    continuous_at_cycles = np.interp(r["t_discrete"], r["t"], r["continuous"])
    assert np.abs(r["discrete"] - continuous_at_cycles).max() < 0.01 * r["continuous"].max()
    unstable = admittance.check(0.1, 6000.0, 4.0, 125, selected_axes=LINEAR)
    r = admittance.step_response(unstable, "z", force=1.0, duration_s=1.0)
    assert np.isnan(r["discrete"][-1])  # left 1e6·F/K: stopped
    assert np.isfinite(r["continuous"]).all()


def test_plot_step_response_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    result = admittance.check([4, 4, 4, 1, 1, 1], [400, 400, 400, 50, 50, 50], None, 125)
    path = admittance.plot_step_response(result, tmp_path / "step.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ============================================================================ goal intake
ROBOT = "fr3"
JOINTS = list(robots.joint_names(ROBOT))


def _controller(rate_hz, check=True):
    config = _native.JtacConfig(
        joint_names=JOINTS,
        max_trajectory_points=16,
        urdf_xml=robots.urdf_xml(ROBOT),
        base_frame="fr3_link0",
        tips=[("fr3_ft_sensor", "fr3_ee")],
        has_force_torque_sensor=True,
        update_rate_hz=rate_hz,
        check_admittance_stability=check,
    )
    trajectory = _native.ControllerParameters(
        stop_accelerations_rad_s2=[5.0] * 7,
        default_path_tolerance_rad=[0.2] * 7,
        default_goal_tolerance_rad=[0.2] * 7,
    )
    ctrl = _native.JointTrajectoryAdmittanceController()
    ctrl.configure(config, _native.JtacParameters(trajectory=trajectory))
    ctrl.activate()
    return ctrl


def _goal(mass, stiffness, damping):
    q = list(robots.robot_spec(ROBOT).q_home_rad)
    tip = _native.TipGoal(
        mass=[mass] * 6, stiffness=[stiffness] * 6, damping=[damping] * 6, selected_axes=LINEAR
    )
    trajectory = _native.TrajectoryGoal(JOINTS, [_native.GoalPoint(1.0, q)])
    return _native.JtacGoal(trajectory, tips=[tip])


def test_intake_rejects_and_warns_exactly_as_check_says():
    ctrl = _controller(125.0)
    r = ctrl.submit_goal(_goal(0.1, 6000.0, 4.0), 0.0)
    assert r.code == _native.ResultCode.INVALID_GOAL
    expected = admittance.check(0.1, 6000.0, 4.0, 125, selected_axes=LINEAR).axes[0].message
    assert r.message == f"admittance_parameters (tip 'fr3_ee') axis x: {expected}"
    r = ctrl.submit_goal(_goal(0.1, 4000.0, 4.0), 0.0)
    assert r.code == _native.ResultCode.SUCCESSFUL and r.goal_id != 0
    expected = admittance.check(0.1, 4000.0, 4.0, 125, selected_axes=LINEAR).axes[0].message
    assert r.warning == f"admittance_parameters (tip 'fr3_ee') axes x y z: {expected}"
    # The test-only switch lets the unstable set through.
    assert (
        _controller(125.0, check=False).submit_goal(_goal(0.1, 6000.0, 4.0), 0.0).code
        == _native.ResultCode.SUCCESSFUL
    )
    # At 1 kHz the same set is accepted (still lightly damped, ζ = 0.08), and a damped one quietly.
    assert _controller(1000.0).submit_goal(_goal(0.1, 6000.0, 4.0), 0.0).code == _native.ResultCode.SUCCESSFUL
    quiet = _controller(1000.0).submit_goal(_goal(0.1, 6000.0, 2.0 * math.sqrt(600.0)), 0.0)
    assert quiet.code == _native.ResultCode.SUCCESSFUL and not quiet.busy and quiet.warning == ""


def test_configure_refuses_a_rate_that_is_not_positive():
    with pytest.raises(ValueError, match=r"update_rate = 0 Hz: must be finite and > 0"):
        _controller(0.0)
