"""Two simulated arms in real time (``jtac_py.arm_group.ArmGroup``): each arm's hardware thread on its
own 1 kHz clock, each controller thread, the group on the host's steady clock.

Real time on a shared 2-core machine: these tests check behaviour — that a group goal starts both arms
at the instant asked for on the host clock (a bound that holds under load: the exact skew is a
benchmark's), that a loop brakes by itself when the other arm's hardware thread stops, that stop()
brakes both — never timing figures.
"""

import time

import numpy as np
import pytest

from jtac_py.arm_group import ArmGroup
from jtac_py.controller import ResultCode, Trajectory

STOP_ACC = 2.0  # [rad/s²]
MOTION = np.array([0.2, -0.15, 0.1, 0.2, -0.2, 0.15, 0.25] * 2)  # [rad], both arms
# Where the start instant may lie from the one asked for [s]: one robot period, plus what a loaded
# machine adds to the arrival of the states the clock maps are fitted to.
START_BOUND_S = 0.005


@pytest.fixture
def pair():
    group = ArmGroup.simulated_pair(
        clock="realtime",
        stop_accelerations=[STOP_ACC] * 7,
        default_path_tolerance=0.3,
        default_goal_tolerance=0.03,
        default_goal_time_tolerance=0.5,
    ).start()
    yield group
    group.stop(brake=False)


def _q_cmd(group):
    return np.concatenate([np.array(c.state.q_cmd) for c in group.controllers.values()])


def _start_instant_s(rows):
    """The group time at which trajectory time 0 was, from every executing cycle (the median: a state
    that arrived late under load moves one sample, not the figure)."""
    executing = rows["trajectory_time"] > 0
    return float(np.median(rows["group_time"][executing] - rows["trajectory_time"][executing]))


def test_a_group_goal_starts_both_arms_at_the_instant_asked_for_on_the_host_clock(pair):
    q0 = _q_cmd(pair)
    with pair.record(["time", "host_time", "trajectory_time"]) as rec:
        handle = pair.follow(Trajectory.quintic(q0, q0 + MOTION, 1.0), wait=False)
        result = handle.result(timeout=10.0)
    assert result.ok, result.message
    data = rec.data()
    starts = {arm: _start_instant_s(rows) for arm, rows in data.items()}
    for arm, start_s in starts.items():
        assert abs(start_s - handle.start_at_s) < START_BOUND_S, (arm, start_s - handle.start_at_s)
    assert abs(starts["left"] - starts["right"]) < START_BOUND_S
    np.testing.assert_allclose(_q_cmd(pair), q0 + MOTION, atol=1e-9)


def test_an_arm_stopping_by_itself_brakes_the_other_from_its_own_loop(pair):
    q0 = _q_cmd(pair)
    with pair.record(["time", "dq_cmd"]) as rec:
        handle = pair.follow(Trajectory.quintic(q0, q0 + MOTION, 2.0), wait=False)
        time.sleep(1.0)
        pair.controllers["right"].hardware.inject_fault("reflex: cartesian_reflex (injected)")
        result = handle.result(timeout=10.0)
    left = pair.controllers["left"]
    assert left._loop.peer_brakes == 1  # the loop saw the hardware thread stop: no Python on the path
    assert result.results["right"].code == ResultCode.INVALID_STATE
    assert "cartesian_reflex" in result.results["right"].message
    assert result.results["left"].code == ResultCode.INVALID_STATE
    assert "arm 'right' stopped" in result.results["left"].message
    rows = rec.data()["left"]
    assert np.abs(rows["dq_cmd"][-1]).max() == 0.0
    ddq = np.abs(np.diff(rows["dq_cmd"], axis=0)).max(axis=1) / np.diff(rows["time"])
    assert ddq.max() <= STOP_ACC * (1 + 1e-6)  # braked within its stop accelerations, not cut
    assert pair.fault is not None and pair.fault.arm == "right"
    # Recovery: the group stops, the fault is cleared, both run again ("left" starts first, while
    # "right" still shows its fault: the watch must not keep that as the fault it braked for).
    pair.stop()
    pair.controllers["right"].hardware.clear_fault()
    pair.start()
    q1 = _q_cmd(pair)
    assert pair.follow(Trajectory.quintic(q1, q1 - MOTION / 2, 1.0), timeout=10.0).ok
    # The watch is armed again: the same arm's next fault brakes the other again.
    q2 = _q_cmd(pair)
    handle = pair.follow(Trajectory.quintic(q2, q2 + MOTION / 2, 2.0), wait=False)
    time.sleep(0.8)
    pair.controllers["right"].hardware.inject_fault("link lost (injected)")
    result = handle.result(timeout=10.0)
    assert result.results["left"].code == ResultCode.INVALID_STATE
    assert "arm 'right' stopped" in result.results["left"].message


def test_stop_brakes_both_arms_to_rest_then_stops_them(pair):
    q0 = _q_cmd(pair)
    handle = pair.follow(Trajectory.quintic(q0, q0 + MOTION, 2.0), wait=False)
    time.sleep(1.0)
    pair.stop()
    assert not pair.running
    for arm, result in handle.result(timeout=0.0).results.items():
        assert result.canceled, (arm, result)
    for c in pair.controllers.values():
        assert np.abs(c.state.dq_cmd).max() == 0.0
    pair.start()  # the fixture's teardown stops it


def test_with_continue_the_other_arm_finishes_its_goal():
    group = ArmGroup.simulated_pair(clock="realtime", on_fault="continue", default_path_tolerance=0.3).start()
    try:
        q0 = _q_cmd(group)
        handle = group.follow(Trajectory.quintic(q0, q0 + MOTION, 1.5), wait=False)
        time.sleep(0.5)
        group.controllers["right"].hardware.inject_fault()
        result = handle.result(timeout=10.0)
        assert result.results["right"].code == ResultCode.INVALID_STATE
        assert result.results["left"].ok, result.results["left"].message
        assert group.controllers["left"]._loop.peer_brakes == 0
    finally:
        group.stop(brake=False)
