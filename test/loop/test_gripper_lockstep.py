"""The gripper of the simulated FR3 (jtac_py.gripper over the MujocoDevice's Franka Hand) in lockstep:
commands, results and timing on the controller's clock, preemption, bad input, no hand, asyncio, the
events, and the arm's goal beside the hand's traffic.

In lockstep the hand moves only while the Controller steps the arm; Controller.step() polls the
gripper after each step, so results land on the step that shows them (1 ms resolution with step(1),
10 ms through result(), which steps in chunks of 10 packets).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading

import numpy as np
import pytest

from jtac_py import robots
from jtac_py.controller import Controller, Trajectory
from jtac_py.gripper import FRANKA_HAND, GripperResultCode
from jtac_py.hardware import SimulatedArm

Code = GripperResultCode
OBJECT_WIDTH_M = 0.03
TIMEOUT_S = 3.0  # simulated


def _controller(**arm_options) -> Controller:
    return Controller(SimulatedArm("fr3", clock="lockstep", **arm_options)).start()


@pytest.fixture
def c():
    controller = _controller(hand=True, grasp_object=robots.GraspObject(OBJECT_WIDTH_M))
    yield controller
    controller.stop()


def _step_until_done(c: Controller, handle, limit_packets: int = 5000) -> None:
    """One packet at a time, so that the result lands on the tick that shows it."""
    for _ in range(limit_packets):
        if handle.done():
            return
        c.step(1)
    raise AssertionError(f"{handle} not done after {limit_packets} packets")


def test_move_takes_width_over_speed_and_ends_at_its_width(c):
    g = c.gripper
    assert g.present and g.limits == FRANKA_HAND
    assert g.state.width_m == pytest.approx(0.08, abs=1e-4)  # the hand starts open
    handle = g.move(0.04, 0.05)
    assert not handle.done()  # returned at once
    _step_until_done(c, handle)
    result = handle.result(0)
    assert (result.code, result.command, result.message) == (Code.SUCCEEDED, "move", "")
    # 0.04 m at 0.05 m/s: 0.8 s at speed, plus the ramps (measured 0.848 s).
    assert 0.80 <= result.duration_s <= 0.90
    assert result.width_m == pytest.approx(0.04, abs=0.5e-3)
    state = g.state
    assert (state.moving, state.command, state.is_grasped) == (False, None, False)
    assert state.width_m == pytest.approx(0.04, abs=0.5e-3)


def test_grasp_holds_the_object_at_its_width(c):
    result = c.gripper.grasp(OBJECT_WIDTH_M, 0.1, 20.0).result(TIMEOUT_S)
    assert result.grasped
    assert result.width_m == pytest.approx(OBJECT_WIDTH_M, abs=0.5e-3)  # measured 0.02992 m
    c.step(200)
    state = c.gripper.state
    assert state.is_grasped
    assert state.width_m == pytest.approx(OBJECT_WIDTH_M, abs=0.5e-3)  # still held 0.2 s later


def test_a_grasp_outside_the_band_is_not_grasped(c):
    missed = c.gripper.grasp(0.05, 0.1, 20.0, 0.005, 0.005).result(TIMEOUT_S)
    assert missed.code is Code.NOT_GRASPED
    assert not missed.grasped
    assert missed.width_m == pytest.approx(OBJECT_WIDTH_M, abs=0.5e-3)  # stopped on the object
    assert "outside the grasp band 45.0..55.0 mm" in missed.message
    assert "NOT_GRASPED" in c.gripper.state.last_error
    assert not c.gripper.state.is_grasped


def test_a_grasp_on_nothing_closes_the_fingers_and_is_not_grasped():
    c = _controller(hand=True)  # no object
    try:
        missed = c.gripper.grasp(OBJECT_WIDTH_M).result(TIMEOUT_S)
        assert missed.code is Code.NOT_GRASPED
        assert abs(missed.width_m) < 1e-3  # closed on each other
    finally:
        c.stop()


def test_stop_ends_the_move_where_the_fingers_are(c):
    g = c.gripper
    move = g.move(0.0, 0.05)
    c.step(300)
    width_at_stop_m = g.state.width_m
    stop = g.stop()
    assert move.done() and move.result(0).code is Code.PREEMPTED  # at once
    assert "preempted by stop" in move.result(0).message
    _step_until_done(c, stop)
    assert stop.result(0).code is Code.SUCCEEDED
    c.step(100)
    state = g.state
    assert not state.moving
    assert state.width_m == pytest.approx(width_at_stop_m, abs=1e-3)  # no further than braking takes it
    assert 0.05 < state.width_m < 0.065  # 0.3 s of 0.08 m closing at 0.05 m/s


def test_a_new_command_preempts_the_running_one_and_reverses_within_10_ms(c):
    g = c.gripper
    widths = []
    g.add_listener(lambda e: widths.append((e.time_s, e.state.width_m)) if e.kind == "state" else None)
    first = g.move(0.0, 0.05)
    c.step(200)
    issued_s = c.controller_time()
    second = g.move(0.075, 0.05)
    assert first.result(0).code is Code.PREEMPTED
    _step_until_done(c, second)
    assert second.result(0).code is Code.SUCCEEDED
    assert second.result(0).width_m == pytest.approx(0.075, abs=0.5e-3)
    after = np.array([w for w in widths if w[0] >= issued_s])
    opening = np.nonzero(np.diff(after[:, 1]) > 0)[0]
    reversed_after_s = after[opening[0] + 1, 0] - issued_s
    assert reversed_after_s <= 0.010 + 1e-9  # measured 10 ms: the fingers brake, then open


@pytest.mark.parametrize(
    ("call", "field", "value"),
    [
        (lambda g: g.move(-0.01), "width_m", "-0.01"),
        (lambda g: g.move(0.081), "width_m", "0.081"),
        (lambda g: g.move(math.nan), "width_m", "nan"),
        (lambda g: g.move(0.04, 0.0), "speed_m_s", "0.0"),
        (lambda g: g.move(0.04, 0.2), "speed_m_s", "0.2"),
        (lambda g: g.grasp(0.03, force_n=0.0), "force_n", "0.0"),
        (lambda g: g.grasp(0.03, force_n=141.0), "force_n", "141.0"),
        (lambda g: g.grasp(0.03, epsilon_inner_m=-0.001), "epsilon_inner_m", "-0.001"),
        (lambda g: g.grasp(0.03, epsilon_outer_m=math.inf), "epsilon_outer_m", "inf"),
    ],
)
def test_bad_input_raises_naming_field_and_value_and_leaves_the_running_command(
    c, caplog, call, field, value
):
    running = c.gripper.move(0.04, 0.05)
    c.step(100)
    with caplog.at_level(logging.WARNING, logger="jtac.gripper"), pytest.raises(ValueError) as error:
        call(c.gripper)
    assert f"{field}={value}" in str(error.value)
    assert [r.getMessage() for r in caplog.records if r.name == "jtac.gripper"] == [str(error.value)]
    assert not running.done()
    assert running.result(TIMEOUT_S).code is Code.SUCCEEDED


def test_without_a_hand_every_command_ends_no_hand():
    c = _controller()
    try:
        g = c.gripper
        assert (g.present, g.limits) == (False, None)
        for handle in (g.move(0.04), g.grasp(0.03), g.home(), g.stop()):
            assert handle.done()
            result = handle.result(0)
            assert result.code is Code.NO_HAND
            assert math.isnan(result.width_m)
        assert math.isnan(g.state.width_m)
        assert not g.state.present
    finally:
        c.stop()


def test_await_a_handle_steps_the_simulation(c):
    async def close_then_open():
        grasped = await c.gripper.grasp(OBJECT_WIDTH_M)
        opened = await c.gripper.home()
        return grasped, opened

    grasped, opened = asyncio.run(close_then_open())
    assert grasped.grasped
    assert opened.success
    assert c.gripper.state.width_m == pytest.approx(0.08, abs=0.5e-3)


def test_events_and_callbacks_come_in_order_on_the_controllers_clock(c):
    events, results = [], []
    c.gripper.add_listener(events.append)
    handle = c.gripper.move(0.06, 0.1)
    handle.add_done_callback(results.append)
    _step_until_done(c, handle)
    kinds = [e.kind for e in events]
    assert kinds[0] == "command" and kinds[-1] == "result"
    assert kinds.count("state") >= 200  # one per step(1) poll, 0.2 s and more
    command, result = events[0], events[-1]
    assert (command.command, command.id, command.width_m, command.speed_m_s) == ("move", handle.id, 0.06, 0.1)
    assert result.result == handle.result(0) == results[0]
    times = [e.time_s for e in events]
    assert times == sorted(times)
    assert result.time_s == pytest.approx(c.controller_time(), abs=0.002)


def test_state_is_at_most_2_ms_old(c):
    ages = []
    for _ in range(50):
        c.step(7)
        ages.append(c.gripper.state.age_s)
    assert max(ages) <= 0.002


def _goal_q(with_hand_traffic: bool) -> np.ndarray:
    """The recorded q of one goal, with a grasp/release every 0.25 s beside it or none."""
    c = _controller(hand=True)
    try:
        c.step(1)
        q0 = c.state.q_cmd
        delta = np.array([0.2, -0.2, 0.1, 0.2, -0.2, 0.2, 0.3])
        with c.record(["time", "q"]) as rec:
            goal = c.follow(Trajectory.quintic(q0, q0 + delta, 1.5), wait=False)
            packets = 0
            while not goal.done():
                if with_hand_traffic and packets % 250 == 0:
                    _ = c.gripper.grasp(0.0, 0.1, 60.0) if packets % 500 == 0 else c.gripper.move(0.08)
                c.step(10)
                packets += 10
        assert goal.result(0).ok
        return rec.data()["q"]
    finally:
        c.stop()


def test_the_arms_goal_runs_the_same_beside_the_hands_traffic():
    quiet, busy = _goal_q(False), _goal_q(True)
    assert quiet.shape == busy.shape
    # Not bit-identical: the fingers' reaction forces reach the arm through the hand's mass; measured
    # 9.3e-8 rad at most over the 1.5 s goal with a grasp or release every 0.25 s.
    assert np.abs(quiet - busy).max() < 1e-6


def test_stop_closes_the_hand_and_a_lockstep_hand_waits_only_through_a_controller():
    arm = SimulatedArm("fr3", clock="lockstep", hand=True)
    c = Controller(arm).start()
    running = c.gripper.move(0.0, 0.05)
    c.step(50)
    c.stop()
    result = running.result(0)
    assert result.code is Code.PREEMPTED
    assert "closed" in result.message
    later = arm.gripper.move(0.05)  # the arm's own: nothing steps it now
    with pytest.raises(RuntimeError, match="only while a Controller steps the arm"):
        later.result(1.0)
    c = Controller(arm).start()  # a new Controller steps it again
    try:
        assert c.gripper.move(0.05).result(TIMEOUT_S).success
    finally:
        c.stop()


def test_the_service_thread_serves_the_hand_of_a_realtime_arm():
    """Real time (no timing asserted): the service thread reads the hand, ends the commands and
    feeds the listeners; stop() ends the thread."""
    arm = SimulatedArm("fr3", clock="realtime", hand=True, grasp_object=robots.GraspObject(OBJECT_WIDTH_M))
    events = []
    with Controller(arm) as c:
        c.gripper.add_listener(events.append)
        assert c.gripper.grasp(OBJECT_WIDTH_M).result(10.0).grasped
        assert any(t.name == "jtac::gripper" for t in threading.enumerate())
    assert not any(t.name == "jtac::gripper" for t in threading.enumerate())
    kinds = [e.kind for e in events]
    # The service thread runs from add_listener() on: states may come before the command.
    assert "command" in kinds and "result" in kinds and kinds.index("command") < kinds.index("result")
    assert kinds.count("state") >= 2
