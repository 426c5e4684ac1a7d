"""jtac_core's TrajectoryController through the bindings: goal intake and the bindings' conversions.

Every rejection path of submit_goal() is checked for its exact result code and for a message that
names the field, the joint, the index and the value, so that a MoveIt user reading the action
result can fix the goal without reading our source. The controller runs without a thread here:
update() is called by hand, with the command fed back as the measurement.
"""

import math
import re

import numpy as np
import pytest

from jtac_py import _native as jtac

JOINTS = ["shoulder", "elbow", "wrist"]
DT = 0.001


def _parameters(n=3, **overrides):
    values = dict(
        stop_accelerations_rad_s2=[10.0] * n,
        default_path_tolerance_rad=[0.1] * n,
        default_goal_tolerance_rad=[0.01] * n,
        default_goal_time_tolerance_s=0.2,
    )
    values.update(overrides)
    return jtac.ControllerParameters(**values)


def _controller(max_points=8, continuous=(), q0=(0.0, 0.0, 0.0)):
    """An active controller that has run one cycle at rest at q0 (time 1.0 s)."""
    ctrl = jtac.TrajectoryController()
    ctrl.configure(JOINTS, list(continuous), max_points, _parameters())
    ctrl.activate()
    out = ctrl.update(1.0, DT, np.array(q0), np.zeros(3))
    assert out.status == jtac.UpdateStatus.OK
    return ctrl


def _goal(points=None, joint_names=JOINTS, **fields):
    if points is None:
        points = [jtac.GoalPoint(0.5, [0.0, 0.0, 0.0]), jtac.GoalPoint(1.0, [0.0, 0.0, 0.0])]
    return jtac.TrajectoryGoal(list(joint_names), points, **fields)


def _point(t, q=(0.0, 0.0, 0.0), v=None, a=None):
    return jtac.GoalPoint(t, list(q), None if v is None else list(v), None if a is None else list(a))


def _assert_rejected(result, code, *fragments):
    assert result.code == code, result
    assert result.goal_id == 0
    assert not result.busy
    for fragment in fragments:
        assert fragment in result.message, f"{fragment!r} not in {result.message!r}"


def _run(ctrl, t, q, count):
    """count perfect-robot cycles from time t at command q; returns (t, q, last output)."""
    out = None
    for _ in range(count):
        t += DT
        v = out.command_velocity_rad_s if out is not None else np.zeros(len(q))
        out = ctrl.update(t, DT, q, v)
        q = out.command_position_rad
    return t, q, out


# ------------------------------------------------------------------------------- accepted goals


def test_valid_goal_is_accepted_and_succeeds():
    ctrl = _controller()
    result = ctrl.submit_goal(_goal([_point(0.5, (0.1, -0.2, 0.3), v=(0, 0, 0))]), 1.0)
    assert result.code == jtac.ResultCode.SUCCESSFUL
    assert result.goal_id == 1
    assert result.message == ""
    _, q, out = _run(ctrl, 1.0, np.zeros(3), 700)
    np.testing.assert_allclose(q, [0.1, -0.2, 0.3], atol=1e-12)
    assert out.mode == jtac.ControllerMode.IDLE
    events = ctrl.poll_events()
    assert [e.type for e in events] == [jtac.EventType.GOAL_STARTED, jtac.EventType.GOAL_SUCCEEDED]
    assert all(e.goal_id == 1 for e in events)
    assert events[-1].code == jtac.ResultCode.SUCCESSFUL
    assert events[-1].message == "goal reached"


def test_bound_goal_types_are_accepted_like_dicts():
    ctrl = _controller()
    goal = jtac.TrajectoryGoal(
        joint_names=JOINTS,
        points=[jtac.GoalPoint(0.5, [0.0, 0.1, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])],
        path_tolerance_rad=[0.1, 0.1, math.inf],
    )
    assert ctrl.submit_goal(goal, 1.0).code == jtac.ResultCode.SUCCESSFUL


def test_goal_in_another_joint_order_is_reordered():
    ctrl = _controller()
    goal = _goal([_point(0.5, (0.3, 0.1, 0.2), v=(0, 0, 0))], joint_names=["wrist", "shoulder", "elbow"])
    assert ctrl.submit_goal(goal, 1.0).code == jtac.ResultCode.SUCCESSFUL
    _, q, _ = _run(ctrl, 1.0, np.zeros(3), 600)
    np.testing.assert_allclose(q, [0.1, 0.2, 0.3], atol=1e-12)


def test_continuous_joint_goal_is_aligned_by_whole_turns():
    ctrl = _controller(continuous=["wrist"], q0=(0.0, 0.0, 0.1))
    target = 0.2 + 2.0 * math.tau  # two turns away: the same angle
    goal = _goal([_point(0.5, (0.0, 0.0, target), v=(0, 0, 0))])
    assert ctrl.submit_goal(goal, 1.0).code == jtac.ResultCode.SUCCESSFUL
    _, q, _ = _run(ctrl, 1.0, np.array([0.0, 0.0, 0.1]), 600)
    assert q[2] == pytest.approx(0.2, abs=1e-12)
    assert [e.type for e in ctrl.poll_events()][-1] == jtac.EventType.GOAL_SUCCEEDED


def test_infinite_tolerance_means_no_limit():
    ctrl = _controller()
    goal = _goal(path_tolerance_rad=[math.inf] * 3, goal_tolerance_rad=[math.inf] * 3)
    assert ctrl.submit_goal(goal, 1.0).code == jtac.ResultCode.SUCCESSFUL


def test_trajectory_ending_exactly_now_is_not_old():
    ctrl = _controller()
    goal = _goal([_point(0.5)], start_time_s=0.5)
    assert ctrl.submit_goal(goal, 1.0).code == jtac.ResultCode.SUCCESSFUL


# ------------------------------------------------------------------------------- INVALID_JOINTS


def test_unknown_joint_is_rejected():
    ctrl = _controller()
    result = ctrl.submit_goal(_goal(joint_names=["shoulder", "knee", "wrist"]), 1.0)
    _assert_rejected(result, jtac.ResultCode.INVALID_JOINTS, "trajectory.joint_names[1]", "'knee'")


def test_missing_joint_is_rejected():
    ctrl = _controller()
    goal = _goal([_point(0.5, (0.0, 0.0))], joint_names=["shoulder", "wrist"])
    result = ctrl.submit_goal(goal, 1.0)
    _assert_rejected(result, jtac.ResultCode.INVALID_JOINTS, "trajectory.joint_names", "missing", "'elbow'")


def test_duplicate_joint_is_rejected():
    ctrl = _controller()
    goal = _goal([_point(0.5, (0.0, 0.0, 0.0, 0.0))], joint_names=["shoulder", "elbow", "wrist", "elbow"])
    result = ctrl.submit_goal(goal, 1.0)
    _assert_rejected(
        result, jtac.ResultCode.INVALID_JOINTS, "trajectory.joint_names[3]", "'elbow'", "joint_names[1]"
    )


def test_empty_joint_names_are_rejected():
    ctrl = _controller()
    result = ctrl.submit_goal(_goal([_point(0.5, ())], joint_names=[]), 1.0)
    _assert_rejected(
        result, jtac.ResultCode.INVALID_JOINTS, "trajectory.joint_names", "missing", "'shoulder'"
    )


# ------------------------------------------------------------------------------- INVALID_GOAL


def test_empty_points_are_rejected():
    ctrl = _controller()
    result = ctrl.submit_goal(_goal([]), 1.0)
    _assert_rejected(result, jtac.ResultCode.INVALID_GOAL, "trajectory.points", "empty")


def test_more_points_than_capacity_are_rejected():
    ctrl = _controller(max_points=4)
    points = [_point(0.1 * (i + 1)) for i in range(5)]
    result = ctrl.submit_goal(_goal(points), 1.0)
    _assert_rejected(
        result,
        jtac.ResultCode.INVALID_GOAL,
        "trajectory.points",
        "5 points",
        "at most 4",
        "max_trajectory_points",
    )
    # Exactly the capacity fits.
    assert ctrl.submit_goal(_goal(points[:4]), 1.0).code == jtac.ResultCode.SUCCESSFUL


@pytest.mark.parametrize(
    ("field", "key", "values"),
    [
        ("positions", "positions_rad", [0.0, 0.0]),
        ("positions", "positions_rad", []),
        ("velocities", "velocities_rad_s", [0.0, 0.0, 0.0, 0.0]),
        ("accelerations", "accelerations_rad_s2", [0.0]),
    ],
)
def test_wrong_array_size_is_rejected(field, key, values):
    ctrl = _controller()
    points = [_point(0.5, v=(0, 0, 0), a=(0, 0, 0)), _point(1.0, v=(0, 0, 0), a=(0, 0, 0))]
    setattr(points[1], key, values)
    result = ctrl.submit_goal(_goal(points), 1.0)
    _assert_rejected(
        result,
        jtac.ResultCode.INVALID_GOAL,
        f"trajectory.points[1].{field}",
        f"has {len(values)} values",
        "expected 3",
    )


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize(
    ("field", "key"),
    [
        ("positions", "positions_rad"),
        ("velocities", "velocities_rad_s"),
        ("accelerations", "accelerations_rad_s2"),
    ],
)
def test_non_finite_value_is_rejected_naming_point_joint_and_value(field, key, bad):
    ctrl = _controller()
    # The goal's joint order differs from the controller's: the message names the goal's joint.
    names = ["wrist", "elbow", "shoulder"]
    points = [_point(0.5, v=(0, 0, 0), a=(0, 0, 0)) for _ in range(1)]
    points += [_point(1.0, v=(0, 0, 0), a=(0, 0, 0)), _point(1.5, v=(0, 0, 0), a=(0, 0, 0))]
    values = getattr(points[2], key)  # a copy: assigned back whole
    values[1] = bad
    setattr(points[2], key, values)
    result = ctrl.submit_goal(_goal(points, joint_names=names), 1.0)
    _assert_rejected(
        result, jtac.ResultCode.INVALID_GOAL, f"trajectory.points[2].{field}[1]", "'elbow'", str(bad)
    )


@pytest.mark.parametrize(("bad", "shown"), [(math.nan, "nan"), (math.inf, "inf"), (-0.25, "-0.25")])
def test_bad_time_from_start_is_rejected(bad, shown):
    ctrl = _controller()
    points = [_point(0.5), _point(bad)]
    result = ctrl.submit_goal(_goal(points), 1.0)
    _assert_rejected(result, jtac.ResultCode.INVALID_GOAL, "trajectory.points[1].time_from_start", shown)


@pytest.mark.parametrize("t2", [0.5, 0.25])
def test_non_increasing_time_from_start_is_rejected(t2):
    ctrl = _controller()
    points = [_point(0.25 if t2 > 0.25 else 0.1), _point(0.5), _point(t2), _point(2.0)]
    result = ctrl.submit_goal(_goal(points), 1.0)
    _assert_rejected(
        result,
        jtac.ResultCode.INVALID_GOAL,
        "trajectory.points[2].time_from_start",
        f"= {t2:g} s",
        "increase strictly",
        "after points[1] (0.5 s)",
    )


def test_accelerations_without_velocities_are_rejected():
    ctrl = _controller()
    points = [_point(0.5, v=(0, 0, 0), a=(0, 0, 0)), _point(1.0, a=(0, 0, 0))]
    result = ctrl.submit_goal(_goal(points), 1.0)
    _assert_rejected(
        result, jtac.ResultCode.INVALID_GOAL, "trajectory.points[1].accelerations", "without velocities"
    )


@pytest.mark.parametrize("field", ["path_tolerance", "goal_tolerance"])
@pytest.mark.parametrize(
    ("bad", "shown"), [(0.0, "= 0"), (-0.1, "= -0.1"), (math.nan, "= nan"), (-math.inf, "-inf")]
)
def test_non_positive_tolerance_is_rejected(field, bad, shown):
    ctrl = _controller()
    tolerance = [0.1, 0.1, 0.1]
    tolerance[2] = bad
    result = ctrl.submit_goal(_goal(**{f"{field}_rad": tolerance}), 1.0)
    _assert_rejected(result, jtac.ResultCode.INVALID_GOAL, f"{field}[2]", "'wrist'", shown, "must be > 0")


@pytest.mark.parametrize("field", ["path_tolerance", "goal_tolerance"])
def test_tolerance_of_wrong_size_is_rejected(field):
    ctrl = _controller()
    result = ctrl.submit_goal(_goal(**{f"{field}_rad": [0.1, 0.1]}), 1.0)
    _assert_rejected(result, jtac.ResultCode.INVALID_GOAL, field, "has 2 values", "expected 3")


@pytest.mark.parametrize(("bad", "shown"), [(math.nan, "nan"), (math.inf, "inf"), (-1.0, "-1")])
def test_bad_goal_time_tolerance_is_rejected(bad, shown):
    ctrl = _controller()
    result = ctrl.submit_goal(_goal(goal_time_tolerance_s=bad), 1.0)
    _assert_rejected(result, jtac.ResultCode.INVALID_GOAL, "goal_time_tolerance", shown)


@pytest.mark.parametrize(("bad", "shown"), [(math.nan, "nan"), (math.inf, "inf"), (-2.0, "-2")])
def test_bad_header_stamp_is_rejected(bad, shown):
    ctrl = _controller()
    result = ctrl.submit_goal(_goal(start_time_s=bad), 1.0)
    _assert_rejected(result, jtac.ResultCode.INVALID_GOAL, "trajectory.header.stamp", shown)


# ------------------------------------------------------------------------------- OLD_HEADER_TIMESTAMP


def test_trajectory_entirely_in_the_past_is_rejected_when_taken():
    # Judged by the control thread, which knows how much trajectory time the speed scale let elapse.
    ctrl = _controller()
    result = ctrl.submit_goal(_goal(start_time_s=2.0), 10.0)  # ends at 3 s, now is 10 s
    assert result.code == jtac.ResultCode.SUCCESSFUL
    ctrl.update(10.0, DT, np.zeros(3), np.zeros(3))
    (event,) = ctrl.poll_events()
    assert event.code == jtac.ResultCode.OLD_HEADER_TIMESTAMP
    assert event.value == pytest.approx(7.0)
    assert "ended 7 s before it could start" in event.message


def test_trajectory_gone_stale_in_the_mailbox_is_aborted_when_taken():
    ctrl = _controller()
    assert ctrl.submit_goal(_goal(start_time_s=1.0), 1.0).code == jtac.ResultCode.SUCCESSFUL
    ctrl.update(2.5, DT, np.zeros(3), np.zeros(3))  # taken 1.5 s after its stamp; it lasted 1 s
    (event,) = ctrl.poll_events()
    assert event.type == jtac.EventType.GOAL_ABORTED
    assert event.code == jtac.ResultCode.OLD_HEADER_TIMESTAMP
    assert event.detail == jtac.EventDetail.TRAJECTORY_IN_THE_PAST
    assert event.value == pytest.approx(0.5)
    assert "0.5 s" in event.message


# ------------------------------------------------------------------------------- state


def test_goal_to_inactive_controller_is_rejected():
    ctrl = jtac.TrajectoryController()
    result = ctrl.submit_goal(_goal(), 1.0)
    _assert_rejected(result, jtac.ResultCode.INVALID_STATE, "not configured")
    ctrl.configure(JOINTS, [], 8, _parameters())
    _assert_rejected(ctrl.submit_goal(_goal(), 1.0), jtac.ResultCode.INVALID_STATE, "not active")


def test_second_goal_before_the_first_is_taken_is_busy():
    ctrl = _controller()
    first = ctrl.submit_goal(_goal(), 1.0)
    second = ctrl.submit_goal(_goal(), 1.0)
    assert first.goal_id == 1
    assert second.busy
    assert second.goal_id == 0
    assert "retry" in second.message


# ------------------------------------------------------------------------------- bindings


def test_configure_errors_are_value_errors():
    ctrl = jtac.TrajectoryController()
    with pytest.raises(ValueError, match=r"joints\[1\] = 'a' duplicates joints\[0\]"):
        ctrl.configure(["a", "a"], [], 8, _parameters(2))
    with pytest.raises(ValueError, match="continuous_joints: 'z'"):
        ctrl.configure(["a", "b"], ["z"], 8, _parameters(2))
    with pytest.raises(ValueError, match=r"stop_accelerations\[1\] \(joint 'b'\) = 0"):
        ctrl.configure(["a", "b"], [], 8, _parameters(2, stop_accelerations_rad_s2=[1.0, 0.0]))
    with pytest.raises(ValueError, match="default_path_tolerance has 3 values, expected 2"):
        ctrl.configure(["a", "b"], [], 8, _parameters(2, default_path_tolerance_rad=[0.1] * 3))
    with pytest.raises(ValueError, match="max_trajectory_points = 0"):
        ctrl.configure(["a", "b"], [], 0, _parameters(2))


def test_set_parameters_returns_the_validation_message():
    ctrl = _controller()
    assert ctrl.set_parameters(_parameters(time_scale_percentage=50.0)) == ""
    message = ctrl.set_parameters(_parameters(time_scale_percentage=120.0))
    assert "time_scale_percentage = 120" in message


def test_parameters_are_constructible_and_checked_for_capacity():
    p = jtac.ControllerParameters(stop_accelerations_rad_s2=np.arange(1.0, 4.0), time_scale_percentage=40.0)
    np.testing.assert_array_equal(p.stop_accelerations_rad_s2, [1.0, 2.0, 3.0])
    assert p.time_scale_percentage == 40.0
    assert p.stitch_position_tolerance_rad == 0.01
    p.default_goal_tolerance_rad = [0.5, 0.5]
    np.testing.assert_array_equal(p.default_goal_tolerance_rad, [0.5, 0.5])
    with pytest.raises(ValueError, match="default_path_tolerance_rad has 17 entries"):
        p.default_path_tolerance_rad = np.ones(17)
    with pytest.raises(ValueError, match="stop_accelerations_rad_s2 must be one-dimensional"):
        jtac.ControllerParameters(stop_accelerations_rad_s2=np.ones((2, 2)))


def test_update_rejects_arrays_of_the_wrong_size():
    ctrl = _controller()
    with pytest.raises(ValueError, match="position_rad has 2 entries, expected 3"):
        ctrl.update(1.001, DT, np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError, match="velocity_rad_s has 4 entries, expected 3"):
        ctrl.update(1.001, DT, np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="joint_offset_rad has 1 entries, expected 3"):
        ctrl.update(1.001, DT, np.zeros(3), np.zeros(3), joint_offset_rad=[0.0])
    with pytest.raises(ValueError, match="position_rad has 20 entries"):
        ctrl.update(1.001, DT, np.zeros(20), np.zeros(3))


def test_update_output_and_joint_offset():
    ctrl = _controller(q0=(0.1, 0.2, 0.3))
    out = ctrl.update(1.001, DT, [0.1, 0.2, 0.3], [0, 0, 0], joint_offset_rad=[0.01, 0.0, -0.01])
    assert out.status == jtac.UpdateStatus.OK
    assert out.mode == jtac.ControllerMode.IDLE
    np.testing.assert_allclose(out.command_position_rad, [0.11, 0.2, 0.29])
    np.testing.assert_allclose(out.reference_position_rad, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(out.command_velocity_rad_s, np.zeros(3))
    np.testing.assert_array_equal(out.error_rad, np.zeros(3))
    assert out.goal_id == 0
    assert out.time_scale == 1.0


def test_non_finite_joint_offset_during_motion_stops_with_admittance_error():
    ctrl = _controller()
    ctrl.submit_goal(_goal([_point(1.0, (0.3, 0.3, 0.3), v=(0, 0, 0))]), 1.0)
    t, q, _ = _run(ctrl, 1.0, np.zeros(3), 300)
    out = ctrl.update(t + DT, DT, q, np.zeros(3), joint_offset_rad=[0.0, math.nan, 0.0])
    assert out.mode == jtac.ControllerMode.STOPPING
    _run(ctrl, t + DT, out.command_position_rad, 500)
    events = ctrl.poll_events()
    assert events[-1].type == jtac.EventType.GOAL_ABORTED
    assert events[-1].code == jtac.ResultCode.ADMITTANCE_ERROR
    assert "joint 'elbow'" in events[-1].message


def test_stop_request_brakes_and_reports_its_code():
    ctrl = _controller()
    ctrl.submit_goal(_goal([_point(1.0, (0.3, 0.3, 0.3), v=(0, 0, 0))]), 1.0)
    t, q, _ = _run(ctrl, 1.0, np.zeros(3), 300)
    stop = jtac.StopRequest(jtac.ResultCode.FORCE_TORQUE_THRESHOLD_EXCEEDED, index=2, value=31.0, limit=30.0)
    out = ctrl.update(t + DT, DT, q, np.zeros(3), stop_request=stop)
    assert out.mode == jtac.ControllerMode.STOPPING
    _run(ctrl, t + DT, out.command_position_rad, 500)
    events = ctrl.poll_events()
    stop_started = [e for e in events if e.type == jtac.EventType.STOP_STARTED]
    assert len(stop_started) == 1
    assert events[-1].type == jtac.EventType.GOAL_ABORTED
    assert events[-1].code == jtac.ResultCode.FORCE_TORQUE_THRESHOLD_EXCEEDED
    assert events[-1].detail == jtac.EventDetail.EXTERNAL_STOP
    assert (events[-1].joint, events[-1].value, events[-1].limit) == (2, 31.0, 30.0)
    assert "FORCE_TORQUE_THRESHOLD_EXCEEDED" in events[-1].message


def test_cancel_brakes_and_reports_canceled():
    ctrl = _controller()
    goal_id = ctrl.submit_goal(_goal([_point(1.0, (0.3, 0.3, 0.3), v=(0, 0, 0))]), 1.0).goal_id
    t, q, _ = _run(ctrl, 1.0, np.zeros(3), 300)
    ctrl.request_cancel(goal_id)
    _, _, out = _run(ctrl, t, q, 500)
    assert out.mode == jtac.ControllerMode.IDLE
    events = ctrl.poll_events()
    assert events[-1].type == jtac.EventType.GOAL_CANCELED
    assert events[-1].goal_id == goal_id
    assert events[-1].message == "canceled; the arm braked to a stop"


def test_event_fields_and_message():
    ctrl = _controller()
    far = _goal([_point(0.0, (0.5, 0.0, 0.0)), _point(1.0, (0.5, 0.0, 0.0))])
    ctrl.submit_goal(far, 1.0)
    ctrl.update(1.001, DT, np.zeros(3), np.zeros(3))
    (event,) = ctrl.poll_events()
    assert event.type == jtac.EventType.GOAL_ABORTED
    assert event.detail == jtac.EventDetail.START_POSITION_JUMP
    assert event.code == jtac.ResultCode.INVALID_GOAL
    assert event.goal_id == 1
    assert event.joint == 0
    assert event.value == pytest.approx(0.5)
    assert event.limit == pytest.approx(0.05)
    assert event.time_s == pytest.approx(1.001)
    assert event.message == (
        "trajectory does not start at the current command: joint 'shoulder' jumps 0.5 rad "
        "(tolerance 0.05 rad)"
    )


def test_deactivate_aborts_the_active_goal_with_invalid_state():
    ctrl = _controller()
    ctrl.submit_goal(_goal([_point(1.0, (0.3, 0.3, 0.3), v=(0, 0, 0))]), 1.0)
    t, q, _ = _run(ctrl, 1.0, np.zeros(3), 100)
    ctrl.deactivate(t)
    assert not ctrl.is_active
    out = ctrl.update(t + DT, DT, q, np.zeros(3))
    assert out.status == jtac.UpdateStatus.INACTIVE
    np.testing.assert_array_equal(out.command_position_rad, q)
    events = ctrl.poll_events()
    assert events[-1].code == jtac.ResultCode.INVALID_STATE
    assert events[-1].detail == jtac.EventDetail.DEACTIVATED


def test_submit_goal_takes_a_trajectory_goal_only():
    # A mapping is typed on the Python side (jtac_py.goals; test/unit/test_goals.py checks that path).
    ctrl = _controller()
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ctrl.submit_goal([1, 2, 3], 1.0)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ctrl.submit_goal({"joint_names": JOINTS, "points": []}, 1.0)
    with pytest.raises(ValueError, match=r"positions_rad must be a sequence of numbers, got str"):
        jtac.GoalPoint(1.0, "abc")


def test_trajectory_and_stop_bindings_check_sizes():
    traj = jtac.Trajectory()
    with pytest.raises(RuntimeError, match="reserve"):
        traj.append(0.0, [0.0])
    with pytest.raises(ValueError, match="num_joints = 17"):
        traj.reserve(17, 4)
    traj.reserve(2, 2)
    with pytest.raises(ValueError, match="positions_rad has 3 entries, expected 2"):
        traj.append(0.0, [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="velocities_rad_s has 1 entries, expected 2"):
        traj.append(0.0, [0.0, 0.0], [0.0])
    with pytest.raises(ValueError, match="q has 1 entries, expected 2"):
        traj.set_start_state([0.0], [0.0, 0.0], [0.0, 0.0])
    assert traj.append(0.5, [1.0, 2.0])
    assert not traj.append(0.5, [1.0, 2.0])  # time must increase
    assert traj.append(1.0, [1.0, 2.0])
    assert not traj.append(1.5, [1.0, 2.0])  # full
    assert (traj.size(), len(traj), traj.capacity(), traj.duration()) == (2, 2, 2, 1.0)
    with pytest.raises(IndexError):
        traj.position(2, 0)
    stop = jtac.StopTrajectory()
    with pytest.raises(ValueError, match="v0_rad_s has 2 entries, expected 3"):
        stop.start(np.zeros(3), np.zeros(2), np.ones(3))
    with pytest.raises(ValueError, match="a_max_rad_s2 has 4 entries, expected 3"):
        stop.start(np.zeros(3), np.zeros(3), np.ones(4))


def test_tolerance_functions_are_vectorised():
    assert jtac.shortest_angular_difference(0.0, 3.0 * math.pi / 2) == pytest.approx(-math.pi / 2)
    np.testing.assert_allclose(
        jtac.shortest_angular_difference(np.zeros(3), np.array([0.5, math.tau + 0.5, -math.tau - 0.5])),
        [0.5, 0.5, -0.5],
    )
    assert jtac.joint_difference(0.0, math.tau + 0.5, False) == pytest.approx(math.tau + 0.5)
    assert jtac.joint_difference(0.0, math.tau + 0.5, True) == pytest.approx(0.5)
    assert jtac.whole_turn_offset(0.1, 0.1 + 2 * math.tau) == pytest.approx(-2 * math.tau)


# ------------------------------------------------------------------- edges (regressions of fixed engine bugs)


def _moving_controller(path_tolerance=0.1, max_points=8, time_scale_percentage=100.0):
    """One joint moving at about 1 rad/s (mid-way through a 0 → 2.5 rad goal) after 1.5 s."""
    ctrl = jtac.TrajectoryController()
    params = jtac.ControllerParameters(
        stop_accelerations_rad_s2=[10.0],
        default_path_tolerance_rad=[path_tolerance],
        default_goal_tolerance_rad=[0.01],
        time_scale_percentage=time_scale_percentage,
    )
    ctrl.configure(["j"], [], max_points, params)
    ctrl.activate()
    t = 1.0
    out = ctrl.update(t, DT, [0.0], [0.0])
    points = [_point(1.0, (0.5,), v=(1.0,)), _point(3.0, (2.5,), v=(0.0,))]
    assert ctrl.submit_goal(_goal(points, joint_names=["j"]), t).code == jtac.ResultCode.SUCCESSFUL
    for _ in range(1500):
        t += DT
        out = ctrl.update(t, DT, out.command_position_rad, out.command_velocity_rad_s)
    assert out.mode == jtac.ControllerMode.EXECUTING
    return ctrl, t, out


def test_nan_period_never_makes_the_command_jump():
    # Spare capacity (8 > 2 points): the stale read stays inside the storage, so this test has no UB.
    ctrl, t, out = _moving_controller(path_tolerance=math.inf)
    previous = out.command_position_rad
    assert previous[0] > 1.0
    out = ctrl.update(t + DT, math.nan, previous, out.command_velocity_rad_s)
    # Expected: BAD_INPUT holding the last command, or a brake from it; at most one cycle of motion.
    assert abs(out.command_position_rad[0] - previous[0]) <= 0.01, out.command_position_rad
    out = ctrl.update(t + 2 * DT, DT, out.command_position_rad, out.command_velocity_rad_s)
    assert abs(out.command_position_rad[0] - previous[0]) <= 0.02, out.command_position_rad


def test_stop_started_event_states_the_reason_and_the_stop_duration():
    # Regression: STOP_STARTED used to carry the stop's duration in `value`, which describe() then
    # printed as the deviation ("deviates 0.131225 rad ... (tolerance 0.1 rad)" for 0.5 rad).
    ctrl, t, out = _moving_controller()
    off_by_half = out.command_position_rad + 0.5
    ctrl.update(t + DT, DT, off_by_half, out.command_velocity_rad_s)
    stop = next(e for e in ctrl.poll_events() if e.type == jtac.EventType.STOP_STARTED)
    assert stop.code == jtac.ResultCode.PATH_TOLERANCE_VIOLATED
    assert stop.detail == jtac.EventDetail.PATH_TOLERANCE
    assert stop.value == pytest.approx(0.5, abs=0.01)
    assert stop.limit == 0.1
    assert 0.0 < stop.stop_duration_s < 1.0
    claimed = re.search(r"deviates (\S+) rad from the reference \(tolerance (\S+) rad\)", stop.message)
    assert claimed, stop.message
    assert float(claimed[1]) == pytest.approx(stop.value, rel=1e-5)
    assert float(claimed[2]) == 0.1
    assert f"{stop.stop_duration_s:.6g} s" in stop.message


def test_constant_joint_offset_is_not_added_twice_after_a_stop():
    # Regression: the held position after a stop used to carry the frozen offset, and idle added it
    # again, so the command jumped by the offset one cycle after STOPPING → IDLE.
    ctrl = _controller()
    offset = np.array([0.02, 0.0, -0.01])
    t, out = 1.0, None
    goal_id = ctrl.submit_goal(_goal([_point(1.0, (0.5, 0.5, 0.5), v=(0, 0, 0))]), t).goal_id
    commands = []
    q, v = np.zeros(3), np.zeros(3)
    for k in range(900):
        if k == 500:
            ctrl.request_cancel(goal_id)
        t += DT
        out = ctrl.update(t, DT, q, v, joint_offset_rad=offset)
        q, v = out.command_position_rad, out.command_velocity_rad_s
        commands.append(q)
    assert out.mode == jtac.ControllerMode.IDLE
    assert ctrl.poll_events()[-1].type == jtac.EventType.GOAL_CANCELED
    jumps = np.abs(np.diff(np.array(commands), axis=0)).max(axis=0)
    assert np.all(jumps <= 0.002), jumps  # at most one cycle of motion (< 1 rad/s · 1 ms)


def test_stamped_stitch_is_continuous_under_time_scaling():
    ctrl, t, out = _moving_controller(time_scale_percentage=50.0)
    s = out.time_scale
    assert s == pytest.approx(0.5)
    q, v = out.reference_position_rad, out.reference_velocity_rad_s
    points = [_point(0.0, q, v=v / s), _point(1.0, q + 0.5, v=(0.0,))]  # trajectory-time velocities
    result = ctrl.submit_goal(_goal(points, joint_names=["j"], start_time_s=t), t)
    assert result.code == jtac.ResultCode.SUCCESSFUL
    previous = out
    out = ctrl.update(t + DT, DT, out.command_position_rad, out.command_velocity_rad_s)
    assert out.goal_id == result.goal_id
    moved = out.command_position_rad[0] - previous.command_position_rad[0]
    expected = 0.5 * (out.command_velocity_rad_s[0] + previous.command_velocity_rad_s[0]) * DT
    assert moved == pytest.approx(expected, abs=1e-6)
