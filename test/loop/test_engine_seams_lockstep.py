"""Where two engine features meet, driven as a new user would: the Python API over the native loop and
the simulated FR3, in lockstep.

Layer: loop with simulated hardware. Each case is one the engine got wrong when the features were
only tested apart — a stamped replacement under time scaling, positions-only points, a non-finite
reading when a goal arrives, jtac's own segment to a first point that lies ahead — measured on the
reference the controller commands (q_ref, recorded every cycle) and on the goal results.
"""

import math

import numpy as np
import pytest

from jtac_py import _native
from jtac_py.controller import Controller, Trajectory
from jtac_py.hardware import SimulatedArm

RC = _native.ResultCode
DT = 0.001  # [s] one lockstep packet
JOINT = 3  # fr3_joint4, the one the paths move [index]


def _controller(**overrides):
    arm = SimulatedArm("fr3", clock="lockstep")
    controller = Controller(arm, **overrides).start()
    controller.step(20)
    return arm, controller


@pytest.fixture
def rig():
    arm, controller = _controller()
    yield arm, controller
    controller.stop()


def _stamped_path(c, delta_rad=0.1, duration_s=4.0):
    """A rest-to-rest quintic of joint 4 from where the arm is, stamped at the controller's next cycle:
    a goal the same way a ROS client would re-send it (same points, same stamp)."""
    q0 = c.state.q_ref
    goal_q = q0.copy()
    goal_q[JOINT] += delta_rad
    goal = Trajectory.quintic(q0, goal_q, duration_s).to_goal(c.joint_names)
    goal.start_time_s = c.state.time + DT
    return goal


def _peak_speed(c, packets):
    """Runs `packets` cycles; the largest |velocity| of the commanded reference, joint 4 [rad/s]."""
    with c.record(["q_ref"]) as rec:
        c.step(packets)
    q_ref = rec.data()["q_ref"][:, JOINT]
    return float(np.abs(np.diff(q_ref)).max() / DT)


# The quintic's own peak speed: 15/8 · 0.1 rad / 4 s.
PATH_PEAK_RAD_S = 1.875 * 0.1 / 4.0


def test_a_same_stamp_replacement_while_paused_continues_where_the_path_stopped(rig):
    _arm, c = rig
    path = _stamped_path(c)
    first = c.follow(path, wait=False)
    c.step(1000)
    c.time_scale = 0.0
    c.step(1000)
    q_paused = c.state.q_ref[JOINT]
    second = c.follow(path, wait=False)
    c.step(5)
    assert first.result(0.1).code == RC.GOAL_ABORTED_DUE_TO_STITCHING
    assert abs(c.state.q_ref[JOINT] - q_paused) < 1e-6
    c.time_scale = 100.0
    # Before: the replacement restarted at τ = 0 and ran back 38.5 mrad at 0.35 rad/s on resume.
    assert _peak_speed(c, 4000) < PATH_PEAK_RAD_S * 1.01
    assert second.result(2.0).ok


def test_a_same_stamp_replacement_after_a_slow_down_is_accepted(rig):
    _arm, c = rig
    path = _stamped_path(c)
    first = c.follow(path, wait=False)
    c.step(1000)
    c.time_scale = 50.0
    c.step(1000)
    second = c.follow(path, wait=False)  # before: INVALID_GOAL "jumps 0.031 rad"
    c.step(5)
    assert first.result(0.1).code == RC.GOAL_ABORTED_DUE_TO_STITCHING
    c.time_scale = 100.0
    result = second.result(5.0)
    assert result.ok, result.message


def test_a_half_done_goal_paused_past_its_duration_is_not_old(rig):
    _arm, c = rig
    path = _stamped_path(c)
    c.follow(path, wait=False)
    c.step(2000)
    c.time_scale = 0.0
    c.step(3000)  # 5 s after the stamp of a 4 s path, 2.3 s of which has elapsed
    second = c.follow(path, wait=False)  # before: OLD_HEADER_TIMESTAMP
    c.step(5)
    c.time_scale = 100.0
    result = second.result(3.0)
    assert result.ok, result.message


def test_a_positions_only_goal_of_any_speed_starts_and_runs_without_velocity_steps(rig):
    _arm, c = rig
    q0 = c.state.q_ref
    target = q0.copy()
    target[JOINT] += 0.5
    middle = q0 + 0.5 * (target - q0)
    # 0.5 rad in 1 s, positions only, as a script or rqt sends it. Before: refused at the start
    # (linear: 0.5 rad/s > start_velocity_tolerance 0.05 rad/s).
    goal = {
        "points": [
            {"positions": q0.tolist(), "time_from_start": 0.0},
            {"positions": middle.tolist(), "time_from_start": 0.5},
            {"positions": target.tolist(), "time_from_start": 1.0},
        ]
    }
    with c.record(["q_ref"]) as rec:
        result = c.follow(goal, timeout=3.0)
    assert result.ok, result.message
    v = np.diff(rec.data()["q_ref"][:, JOINT]) / DT
    accel = np.abs(np.diff(v)) / DT
    # A clamped C2 spline from rest to rest through three points: peak 3 rad/s² here; a velocity
    # step of 0.5 rad/s would read as 500 rad/s² in one cycle.
    assert accel.max() < 3.5
    assert np.abs(v).max() == pytest.approx(0.75, rel=0.02)  # the spline's peak, 1.5 × 0.5 rad / 1 s
    assert abs(c.state.q_ref[JOINT] - target[JOINT]) < 1e-9


def test_a_goal_with_effort_is_refused_naming_the_field(rig):
    _arm, c = rig
    q0 = c.state.q_ref
    goal = {"points": [{"positions": q0.tolist(), "time_from_start": 1.0, "effort": [0.0] * 7}]}
    result = c.follow(goal, timeout=1.0)
    assert result.code == RC.INVALID_GOAL
    assert "trajectory.points[0].effort" in result.message


def test_a_non_finite_wrench_when_a_goal_arrives_fails_it_before_motion(rig):
    arm, c = rig
    q_before = c.state.q_ref
    arm.inject_sensor_fault(math.nan, 0.05)
    c.step(2)
    result = c.follow(Trajectory.quintic(q_before, q_before + 0.1, 1.0), timeout=1.0)
    # Before: ADMITTANCE_ERROR after a zero-length stop.
    assert result.code == RC.INVALID_GOAL, result.message
    assert "(state interface force.x) is nan" in result.message
    assert "refused before any motion" in result.message
    np.testing.assert_array_equal(c.state.q_ref, q_before)
    c.step(100)  # the reading is back: the same goal runs
    assert c.follow(Trajectory.quintic(q_before, q_before + 0.1, 1.0), timeout=3.0).ok


def test_the_segment_to_a_first_point_ahead_stays_within_the_robots_limits(rig):
    _arm, c = rig
    q0 = c.state.q_ref
    far = q0.copy()
    far[JOINT] += 0.3
    # 0.3 rad away at 0.2 s: jtac's own connecting segment would need 45 rad/s² (FR3: 10 rad/s²).
    goal = {"points": [{"positions": far.tolist(), "velocities": [0.0] * 7, "time_from_start": 0.2}]}
    result = c.follow(goal, timeout=1.0)
    assert result.code == RC.INVALID_GOAL
    assert "acceleration limit of 10 rad/s^2" in result.message and "fr3_joint4" in result.message
    np.testing.assert_array_equal(c.state.q_ref, q0)
    # The same point at 1 s: 1.8 rad/s², 0.45 rad/s, within the limits; followed.
    goal["points"][0]["time_from_start"] = 1.0
    with c.record(["q_ref"]) as rec:
        assert c.follow(goal, timeout=3.0).ok
    v = np.diff(rec.data()["q_ref"][:, JOINT]) / DT
    assert np.abs(v).max() == pytest.approx(0.45, rel=0.01)


def test_a_fast_plan_whose_first_sample_lies_a_few_milliseconds_ahead_is_followed(rig):
    _arm, c = rig
    q0 = c.state.q_ref
    goal_q = q0.copy()
    goal_q[JOINT] += 0.3
    # 0.3 rad in 0.15 s, first sample at 5 ms: the segment from the command to it is the plan's own
    # first 5 ms (24 rad/s² there, the plan peaks at 77 rad/s²): the plan's speed is the planner's
    # business, so it is followed, not refused for the robot's 10 rad/s² (the limiter and the arm lag it;
    # the path is not checked, the arm gets time to settle).
    plan = Trajectory.quintic(q0, goal_q, 0.15, samples=30)
    tolerances = {"path": math.inf, "goal": 0.01, "goal_time": 2.0}
    with c.record(["q_ref"]) as rec:
        result = c.follow(plan, tolerances=tolerances, timeout=3.0)
    assert result.ok, result.message
    q_ref = rec.data()["q_ref"][:, JOINT]
    assert q_ref.max() == pytest.approx(goal_q[JOINT], abs=1e-9)
    assert np.abs(np.diff(q_ref)).max() / DT == pytest.approx(1.875 * 0.3 / 0.15, rel=0.01)
    # The same plan with its first point 30 mrad off the command: reaching it in 5 ms is no part of
    # the plan; refused, nothing moves.
    q_now = c.state.q_ref
    far = Trajectory.quintic(q_now + 0.03, goal_q, 0.15, samples=30)
    result = c.follow(far, tolerances=tolerances, timeout=1.0)
    assert result.code == RC.INVALID_GOAL
    assert "velocity limit of" in result.message and "fr3_joint" in result.message, result.message
    np.testing.assert_array_equal(c.state.q_ref, q_now)


def test_a_re_sent_path_stamped_now_cannot_pull_the_arm_back(rig):
    _arm, c = rig
    q0 = c.state.q_ref
    ahead = q0.copy()
    ahead[JOINT] += 0.1
    # The path's first point lies 0.05 s in (where the arm starts), like a planner's output.
    path = {
        "points": [
            {"positions": q0.tolist(), "velocities": [0.0] * 7, "time_from_start": 0.05},
            {"positions": ahead.tolist(), "velocities": [0.0] * 7, "time_from_start": 2.0},
        ]
    }
    first = c.follow(path, wait=False)
    c.step(1000)
    q_now = c.state.q_ref[JOINT]
    second = c.follow(path, wait=False)  # stamp 0 = now: its first point lies behind the arm
    c.step(5)
    result = second.result(0.1)
    # Before: accepted, the arm pulled back 20.6 mrad at 0.51 rad/s.
    assert result.code == RC.INVALID_GOAL
    assert "limit" in result.message
    assert c.state.q_ref[JOINT] >= q_now
    assert first.result(3.0).ok
