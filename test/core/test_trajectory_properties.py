"""Seeded property tests of jtac_core's trajectory engine through the bindings.

Interpolation, minimum-time stops, time scaling and stitching, each checked against the property
it promises rather than against numbers of its own making. `make test` runs a small, derandomised
number of examples; raise it from the command line for a long search:

    JTAC_HYPOTHESIS_EXAMPLES=20000 python -m pytest test/core/test_trajectory_properties.py
"""

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jtac_py import _native as jtac

_EXAMPLES_FROM_ENV = int(os.environ.get("JTAC_HYPOTHESIS_EXAMPLES", "0"))


def examples(default):
    """Hypothesis settings: `default` examples in `make test`, more when the environment asks."""
    return settings(
        max_examples=max(default, _EXAMPLES_FROM_ENV),
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def floats(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


KINDS = [jtac.SegmentKind.LINEAR, jtac.SegmentKind.CUBIC, jtac.SegmentKind.QUINTIC]
ORDER = {jtac.SegmentKind.LINEAR: 0, jtac.SegmentKind.CUBIC: 1, jtac.SegmentKind.QUINTIC: 2}


def left_limit(f, t, eps):
    """lim_{s→t⁻} f(s) by quadratic extrapolation from f(t−ε), f(t−2ε), f(t−3ε) (error O(f'''·ε³))."""
    return 3.0 * f(t - eps) - 3.0 * f(t - 2.0 * eps) + f(t - 3.0 * eps)


# ============================================================================ interpolation

pva = st.tuples(floats(-10, 10), floats(-10, 10), floats(-10, 10))


@examples(200)
@given(kind=st.sampled_from(KINDS), start=pva, end=pva, duration_s=floats(0.1, 10.0))
def test_segment_hits_both_end_points(kind, start, end, duration_s):
    p0, v0, a0 = jtac.sample_segment(kind, start, end, duration_s, 0.0)
    p1, v1, a1 = jtac.sample_segment(kind, start, end, duration_s, duration_s)
    assert p0 == pytest.approx(start[0], abs=1e-9)
    assert p1 == pytest.approx(end[0], abs=1e-9)
    if kind == jtac.SegmentKind.LINEAR:
        slope = (end[0] - start[0]) / duration_s
        assert (v0, v1, a0, a1) == pytest.approx((slope, slope, 0.0, 0.0), abs=1e-9)
    else:
        assert (v0, v1) == pytest.approx((start[1], end[1]), abs=1e-9)
    if kind == jtac.SegmentKind.QUINTIC:
        assert (a0, a1) == pytest.approx((start[2], end[2]), abs=1e-9)
    # Outside [0, T] the time is clamped.
    assert jtac.sample_segment(kind, start, end, duration_s, -1.0) == (p0, v0, a0)
    assert jtac.sample_segment(kind, start, end, duration_s, duration_s + 1.0) == (p1, v1, a1)


@examples(100)
@given(kind=st.sampled_from(KINDS), start=pva, end=pva, duration_s=floats(0.1, 10.0), u=floats(0.05, 0.95))
def test_segment_velocity_and_acceleration_are_derivatives(kind, start, end, duration_s, u):
    t = u * duration_s
    h = 1e-4 * duration_s
    pm, vm, _ = jtac.sample_segment(kind, start, end, duration_s, t - h)
    _, v, a = jtac.sample_segment(kind, start, end, duration_s, t)
    pp, vp, _ = jtac.sample_segment(kind, start, end, duration_s, t + h)
    scale = 1.0 + max(abs(x) for x in (*start, *end)) / min(duration_s, 1.0) ** 3
    assert (pp - pm) / (2 * h) == pytest.approx(v, abs=1e-5 * scale)
    assert (vp - vm) / (2 * h) == pytest.approx(a, abs=1e-5 * scale)


def test_vectorised_segment_sampling_matches_scalar_calls():
    t = np.linspace(-0.5, 2.5, 31)
    for kind in KINDS:
        p, v, a = jtac.sample_segment_many(kind, (0.1, 0.5, -1.0), (1.0, -0.2, 0.3), 2.0, t)
        for i, ti in enumerate(t):
            assert (p[i], v[i], a[i]) == jtac.sample_segment(
                kind, (0.1, 0.5, -1.0), (1.0, -0.2, 0.3), 2.0, ti
            )


def test_segment_of_zero_duration_returns_its_end():
    for kind in KINDS:
        assert jtac.sample_segment(kind, (0.0, 1.0, 2.0), (3.0, 4.0, 5.0), 0.0, 0.0) == (3.0, 4.0, 5.0)


@st.composite
def trajectories(draw):
    """(start state, points): each point carries positions, + velocities, or + accelerations."""
    n = draw(st.integers(1, 5))
    vec = lambda lo, hi: np.array(draw(st.lists(floats(lo, hi), min_size=n, max_size=n)))  # noqa: E731
    start = (vec(-3, 3), vec(-2, 2), vec(-5, 5))
    count = draw(st.integers(1, 7))
    t = 0.0
    points = []
    for _ in range(count):
        t += draw(floats(0.2, 2.0))
        level = draw(st.integers(0, 2))  # 0: positions, 1: + velocities, 2: + accelerations
        points.append((t, vec(-3, 3), vec(-2, 2) if level >= 1 else None, vec(-5, 5) if level == 2 else None))
    return start, points


def _kind(a, b):
    """The kind of the segment between points a and b, each (t, q, v or None, a or None)."""
    return jtac.segment_kind(a[2] is not None and b[2] is not None, a[3] is not None and b[3] is not None)


@examples(100)
@given(trajectories())
def test_trajectory_passes_through_waypoints_continuously(case):
    (q0, v0, a0), points = case
    n = len(q0)
    traj = jtac.Trajectory()
    traj.reserve(n, len(points))
    for t, q, v, a in points:
        assert traj.append(t, q, v, a)
    traj.set_start_state(q0, v0, a0)
    eps = 1e-5

    def q_at(t):
        return traj.sample(t)[0]

    def v_at(t):
        return traj.sample(t)[1]

    def a_at(t):
        return traj.sample(t)[2]

    # The segment before the first point starts at the start state, to the order the first point allows.
    first_kind = jtac.segment_kind(points[0][2] is not None, points[0][3] is not None)
    q, v, a = traj.sample(0.0)
    np.testing.assert_allclose(q, q0, rtol=0, atol=1e-9)
    if ORDER[first_kind] >= 1:
        np.testing.assert_allclose(v, v0, rtol=0, atol=1e-9)
    if ORDER[first_kind] == 2:
        np.testing.assert_allclose(a, a0, rtol=0, atol=1e-9)

    start_point = (0.0, q0, v0, a0)
    for i, (t, p, pv, pa) in enumerate(points):
        previous = points[i - 1] if i > 0 else start_point
        left = first_kind if i == 0 else _kind(previous, points[i])
        last = i == len(points) - 1
        right = None if last else _kind(points[i], points[i + 1])
        q, v, a = traj.sample(t)
        where = f"waypoint {i} at t = {t}"
        # Through the waypoint, and continuous in position from the left.
        np.testing.assert_allclose(q, p, rtol=0, atol=1e-9, err_msg=where)
        np.testing.assert_allclose(left_limit(q_at, t, eps), p, rtol=0, atol=1e-8, err_msg=where)
        # C1 / C2 wherever the segments on either side use the point's velocity / acceleration.
        if pv is not None and (last or ORDER[right] >= 1):
            np.testing.assert_allclose(v, pv, rtol=0, atol=1e-9, err_msg=where)
        if pv is not None and ORDER[left] >= 1:
            np.testing.assert_allclose(left_limit(v_at, t, eps), pv, rtol=0, atol=1e-6, err_msg=where)
        if pa is not None and (last or ORDER[right] == 2):
            np.testing.assert_allclose(a, pa, rtol=0, atol=1e-9, err_msg=where)
        if pa is not None and ORDER[left] == 2:
            np.testing.assert_allclose(left_limit(a_at, t, eps), pa, rtol=0, atol=1e-5, err_msg=where)
    # After the last point: its position, at rest.
    q, v, a = traj.sample(points[-1][0] + 0.5)
    np.testing.assert_array_equal(q, points[-1][1])
    np.testing.assert_array_equal(v, np.zeros(n))
    np.testing.assert_array_equal(a, np.zeros(n))
    # Continuous everywhere: on a dense grid no step exceeds what the sampled velocity allows.
    taus = np.linspace(0.0, points[-1][0] + 0.1, 4001)
    qs, vs, acc = traj.sample_many(taus)
    dt = taus[1] - taus[0]
    speed = np.maximum(np.abs(vs[1:]), np.abs(vs[:-1])) + np.abs(acc).max(axis=0) * dt
    assert np.all(np.abs(np.diff(qs, axis=0)) <= speed * dt + 1e-9)


# ============================================================================ stop trajectories


@st.composite
def stops(draw):
    n = draw(st.integers(1, 7))
    q0 = np.array(draw(st.lists(floats(-3, 3), min_size=n, max_size=n)))
    # |v| ≥ 1e-12: below ~1e-300 rad/s the stop's duration |v|/a underflows into subnormals and the
    # deceleration |v|/T can exceed its limit by tens of percent (for a motion of 1e-323 rad).
    speed = st.one_of(st.just(0.0), floats(1e-12, 5.0), floats(-5.0, -1e-12))
    v0 = np.array(draw(st.lists(speed, min_size=n, max_size=n)))
    a_max = np.array(draw(st.lists(floats(0.1, 50.0), min_size=n, max_size=n)))
    return q0, v0, a_max


@examples(200)
@given(stops())
def test_stop_is_minimum_time_within_limits_and_keeps_direction(case):
    q0, v0, a_max = case
    stop = jtac.StopTrajectory()
    stop.start(q0, v0, a_max)
    T = stop.duration()
    assert abs(T - np.max(np.abs(v0) / a_max)) <= 1e-12 * T
    times = np.unique(np.concatenate([np.linspace(0.0, T, 401), [T * 0.999999, T, T + 1e-9, T + 1.0]]))
    samples = [stop.sample(t) for t in times]
    qs = np.array([s[0] for s in samples])
    vs = np.array([s[1] for s in samples])
    accs = np.array([s[2] for s in samples])
    # Within every joint's limit at all times.
    assert np.all(np.abs(accs) <= a_max * (1.0 + 1e-12))
    # At rest exactly at duration() and after.
    for t in (T, T + 1e-9, T + 1.0):
        _, v, a = stop.sample(t)
        np.testing.assert_array_equal(v, np.zeros_like(v0))
        np.testing.assert_array_equal(a, np.zeros_like(v0))
    # The velocity only shrinks along v0: v(t) = λ(t)·v0 with λ falling from 1 to 0.
    if T > 0:
        fastest = int(np.argmax(np.abs(v0)))
        lam = vs[:, fastest] / v0[fastest]
        np.testing.assert_allclose(vs, np.outer(lam, v0), rtol=0, atol=1e-12 * (1 + np.abs(v0).max()))
        assert np.all(np.diff(lam) <= 1e-15)
        assert lam[0] == pytest.approx(1.0) and lam[-1] == 0.0
    np.testing.assert_array_equal(vs[0], v0 if T > 0 else np.zeros_like(v0))
    np.testing.assert_array_equal(qs[0], q0)
    # Positions continuous (each step within what the velocity allows) and consistent with v.
    dt = np.diff(times)[:, None]
    dq = np.diff(qs, axis=0)
    assert np.all(np.abs(dq) <= np.maximum(np.abs(vs[1:]), np.abs(vs[:-1])) * dt + 1e-12)
    np.testing.assert_allclose(dq, 0.5 * (vs[1:] + vs[:-1]) * dt, rtol=0, atol=1e-12)
    # Comes to rest where final_position() says.
    np.testing.assert_allclose(stop.final_position(), stop.sample(T)[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(stop.final_position(), stop.sample(T + 1.0)[0], rtol=0, atol=1e-12)


# ============================================================================ time scaling

DT_S = 0.001


@examples(100)
@given(
    initial=floats(0.0, 100.0),
    segments=st.lists(
        st.tuples(floats(-20.0, 120.0), floats(0.001, 2.0), st.integers(1, 400)), min_size=1, max_size=6
    ),
)
def test_time_scale_is_rate_limited_never_overshoots_and_converges(initial, segments):
    scaler = jtac.TimeScaler()
    scaler.reset(initial)
    assert scaler.current() == (pytest.approx(initial / 100.0), 0.0)
    previous = initial
    for k, (target, tau_s, steps) in enumerate(segments):
        scaler.set_target_percent(target)
        scaler.set_filter_constant(tau_s)
        goal = min(max(target, 0.0), 100.0)
        if k == len(segments) - 1:
            # The last request is held long enough to converge: rate-limited ramp plus 30 time constants.
            steps = math.ceil((100.0 / jtac.TimeScaler.MAX_RATE_PERCENT_PER_S + 30.0 * tau_s) / DT_S)
        scales, rates = scaler.update_many(DT_S, steps)
        percent = np.concatenate([[previous], 100.0 * scales])
        step = np.diff(percent)
        assert np.all(np.abs(step) <= jtac.TimeScaler.MAX_RATE_PERCENT_PER_S * DT_S + 1e-9)
        lo = np.minimum(percent[:-1], goal) - 1e-9
        hi = np.maximum(percent[:-1], goal) + 1e-9
        assert np.all((percent[1:] >= lo) & (percent[1:] <= hi)), "overshoot"
        np.testing.assert_allclose(rates * DT_S * 100.0, step, rtol=0, atol=1e-9)
        previous = percent[-1]
    assert previous == pytest.approx(goal, abs=1e-6)
    assert scales[-1] == goal / 100.0  # lands exactly (the last 1e-6 points are snapped)


def test_snapping_onto_the_target_respects_the_rate_limit():
    scaler = jtac.TimeScaler()
    scaler.reset(0.0)
    scaler.set_filter_constant(1e-5)  # valid (> 0): the lag alone would reach the target in one step
    scaler.set_target_percent(0.1800005)
    scale, _ = scaler.update(DT_S)
    assert 100.0 * scale <= jtac.TimeScaler.MAX_RATE_PERCENT_PER_S * DT_S + 1e-9


def test_time_scaler_ignores_invalid_inputs():
    scaler = jtac.TimeScaler()
    scaler.reset(50.0)
    scaler.set_target_percent(math.nan)
    scaler.set_filter_constant(-1.0)
    assert scaler.target_percent == 50.0
    assert scaler.update(0.0) == (0.5, 0.0)
    assert scaler.update(math.nan) == (0.5, 0.0)
    scaler.set_target_percent(250.0)
    assert scaler.target_percent == 100.0
    scale, rate = scaler.update(DT_S)
    assert 0.5 < scale <= 0.5 + 0.0018 + 1e-12
    assert rate == pytest.approx((scale - 0.5) / DT_S)


# ============================================================================ stitching


def _vectors(draw, n, lo, hi):
    return np.array(draw(st.lists(floats(lo, hi), min_size=n, max_size=n)))


def _random_points(draw, n, q_start, t_start, count, quintic):
    """count points after t_start, positions drifting from q_start, the last at rest."""
    points = []
    t = t_start
    q = q_start
    for i in range(count):
        t += draw(floats(0.3, 0.8))
        q = q + _vectors(draw, n, -0.3, 0.3)
        last = i == count - 1
        v = np.zeros(n) if last else _vectors(draw, n, -0.5, 0.5)
        point = {"time_from_start_s": t, "positions_rad": q.tolist(), "velocities_rad_s": v.tolist()}
        if quintic:
            a = np.zeros(n) if last else _vectors(draw, n, -2.0, 2.0)
            point["accelerations_rad_s2"] = a.tolist()
        points.append(point)
    return points


@st.composite
def stitches(draw):
    n = draw(st.integers(1, 4))
    q0 = _vectors(draw, n, -2.0, 2.0)
    first = _random_points(draw, n, q0, 0.0, draw(st.integers(1, 3)), draw(st.booleans()))
    duration_s = first[-1]["time_from_start_s"]
    stitch_cycle = draw(st.integers(1, int(duration_s / DT_S) - 2))
    # The second goal starts at the current reference (a point at τ = 0, stamped with the reference's
    # time) or from the active path at the time it is taken (no point at 0, stamped or not).
    from_reference_point = draw(st.booleans())
    stamped = True if from_reference_point else draw(st.booleans())
    # Relative to where the arm is headed at the stitch (added in the test, which knows the reference).
    second = _random_points(draw, n, np.zeros(n), 0.0, draw(st.integers(1, 3)), draw(st.booleans()))
    return n, q0, first, stitch_cycle, from_reference_point, stamped, second


def _as_trajectory(points, q0):
    """The goal's points (controller joint order) as a Trajectory starting at rest at q0."""
    traj = jtac.Trajectory()
    traj.reserve(len(q0), len(points))
    for p in points:
        traj.append(
            p["time_from_start_s"],
            p["positions_rad"],
            p.get("velocities_rad_s"),
            p.get("accelerations_rad_s2"),
        )
    traj.set_start_state(q0, np.zeros(len(q0)), np.zeros(len(q0)))
    return traj


def _perfect_robot(ctrl, t, out, count, log):
    """count cycles feeding the command back as the measurement; appends every output to log."""
    for _ in range(count):
        t += DT_S
        out = ctrl.update(t, DT_S, out.command_position_rad, out.command_velocity_rad_s)
        log.append(out)
    return t, out


@examples(25)
@given(stitches())
def test_stitching_keeps_the_command_continuous(case):
    n, q0, first, stitch_cycle, from_reference_point, stamped, later = case
    names = [f"j{i}" for i in range(n)]
    ctrl = jtac.TrajectoryController()
    params = jtac.ControllerParameters(
        stop_accelerations_rad_s2=[20.0] * n,
        default_path_tolerance_rad=[0.05] * n,
        default_goal_tolerance_rad=[1e-3] * n,
        default_goal_time_tolerance_s=0.5,
    )
    ctrl.configure(names, [], 16, params)
    ctrl.activate()
    t = 1.0
    out = ctrl.update(t, DT_S, q0, np.zeros(n))
    log = [out]
    first_id = ctrl.submit_goal(jtac.TrajectoryGoal(names, [jtac.GoalPoint(**p) for p in first]), t).goal_id
    assert first_id == 1
    t, out = _perfect_robot(ctrl, t, out, stitch_cycle, log)
    assert out.mode == jtac.ControllerMode.EXECUTING and out.goal_id == first_id

    # The first goal's acceleration at the stitch instant: the command never shows it (the second
    # goal takes over), but the velocity may change by that much during the stitch cycle.
    _, _, a_old_at_stitch = _as_trajectory(first, q0).sample(out.trajectory_time_s + DT_S)

    # Plan the second goal from the reference of the last cycle (time t), as a client would.
    q_ref = out.reference_position_rad
    v_ref = out.reference_velocity_rad_s
    a_ref = out.reference_acceleration_rad_s2
    quintic = "accelerations_rad_s2" in later[0]
    points = []
    if from_reference_point:
        point = {
            "time_from_start_s": 0.0,
            "positions_rad": q_ref.tolist(),
            "velocities_rad_s": v_ref.tolist(),
        }
        if quintic:
            point["accelerations_rad_s2"] = a_ref.tolist()
        points.append(point)
    # Later points drift from where the arm is headed, so that their first segment stays gentle.
    for point in later:
        points.append({**point, "positions_rad": (q_ref + 0.3 * v_ref + point["positions_rad"]).tolist()})
    duration_s = later[-1]["time_from_start_s"]
    second = ctrl.submit_goal(
        jtac.TrajectoryGoal(names, [jtac.GoalPoint(**p) for p in points], t if stamped else 0.0), t
    )
    assert second.code == jtac.ResultCode.SUCCESSFUL and second.goal_id == 2, second
    stitch_index = len(log)
    t, out = _perfect_robot(ctrl, t, out, 1, log)
    events = ctrl.poll_events()
    assert out.goal_id == 2, [e.message for e in events]
    t, out = _perfect_robot(ctrl, t, out, int(duration_s / DT_S) + 50, log)
    for _ in range(20):
        if out.mode == jtac.ControllerMode.IDLE:
            break
        t, out = _perfect_robot(ctrl, t, out, 50, log)
    events += ctrl.poll_events()

    # Events: the first goal was replaced by the second, which then succeeded; nothing braked.
    summary = [(e.type, e.goal_id, e.code) for e in events]
    assert summary == [
        (jtac.EventType.GOAL_STARTED, 1, jtac.ResultCode.SUCCESSFUL),
        (jtac.EventType.GOAL_ABORTED, 1, jtac.ResultCode.GOAL_ABORTED_DUE_TO_STITCHING),
        (jtac.EventType.GOAL_STARTED, 2, jtac.ResultCode.SUCCESSFUL),
        (jtac.EventType.GOAL_SUCCEEDED, 2, jtac.ResultCode.SUCCESSFUL),
    ], [e.message for e in events]
    assert events[1].detail == jtac.EventDetail.REPLACED_BY_STITCHING and events[1].value == 2.0

    # The command: continuous in position and velocity over every cycle, the stitch included, and
    # its position moves as its velocity says (a skipped or repeated cycle would show here).
    q = np.array([o.command_position_rad for o in log])
    v = np.array([o.command_velocity_rad_s for o in log])
    a = np.array([o.command_acceleration_rad_s2 for o in log])
    # Bounds from the sampled command and the old path at the stitch instant, with 5 % for what
    # happens between samples (the acceleration may step at the stitch).
    a_max = 1.05 * np.maximum(np.abs(a).max(axis=0), np.abs(a_old_at_stitch))
    v_max = np.abs(v).max(axis=0) + a_max * DT_S
    dq = np.diff(q, axis=0)
    dv = np.diff(v, axis=0)
    k = stitch_index  # log[k] is the first command of the second goal
    assert np.all(np.abs(dq) <= v_max * DT_S + 1e-9), f"position jump at the stitch: {dq[k - 1]}"
    assert np.all(np.abs(dv) <= a_max * DT_S + 1e-9), f"velocity jump at the stitch: {dv[k - 1]}"
    trapezoid = 0.5 * (v[1:] + v[:-1]) * DT_S
    err = np.abs(dq - trapezoid)
    assert np.all(err <= 0.5 * a_max * DT_S**2 + 1e-9), (
        f"command position and velocity disagree at cycle {int(np.argmax(err.max(axis=1)))} "
        f"(stitch at {k}): {err.max():.3g} rad"
    )
