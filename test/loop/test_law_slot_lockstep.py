"""The loop's one law slot seen from Python (jtac_py.law_slot): one hand-over contract for every switch.

Two layers: the slot's own bookkeeping against a stand-in loop (pure Python: who holds it, what a
refusal says, that a tenant is told when it loses the slot), then seeded random sequences of goals,
streams and custom laws on the simulated FR3 in lockstep, checked against the rule itself: the
command never changes its velocity faster than the stop accelerations in force, the hardware limiter
never acts, every switch ends at rest, and what holds the slot answers as the API says.
Seeds: JTAC_SLOT_SEEDS (default 5 sequences of 24 switches; e.g. JTAC_SLOT_SEEDS=200 for a long run).
"""

import math
import os
import threading

import numpy as np
import pytest

from jtac_py import laws
from jtac_py.controller import Controller, ResultCode, Trajectory
from jtac_py.hardware import SimulatedArm
from jtac_py.law_slot import LawSlot

STOP_ACC = 2.0  # [rad/s²] below every bound of the limiter: a cut would show
SWING_PARAMS = [0.08, 3.0, 3.0]  # amplitude [rad], ω [rad/s], joint: at most 0.24 rad/s, 0.72 rad/s²
SEEDS = range(int(os.environ.get("JTAC_SLOT_SEEDS", "5")))
OPS_PER_SEED = 24


# ================================================================ the slot against a stand-in loop
class StandInLoop:
    """What LawSlot uses of the native ControlLoop: use_law, jtac_active, snapshot, running."""

    def __init__(self):
        self.laws = []
        self.jtac_active = True
        self.running = False

    def use_law(self, law):
        self.laws.append(law)
        self.jtac_active = law is None

    def snapshot(self):
        return None


class Tenant:
    def __init__(self, name):
        self.in_use = f"{name} is in use (long)"
        self.busy_reason = f"{name} is in use"
        self.release_hint = f"release {name}"
        self.handover_reason = f"{name} was put in use"
        self.released_count = 0
        self.stopped_with = []

    def released(self):
        self.released_count += 1

    def poll(self):
        pass

    def stopped(self, message):
        self.stopped_with.append(message)


def _slot(loop):
    return LawSlot(loop, threading.RLock(), lambda: [STOP_ACC] * 7, step_until=lambda done, timeout: None)


def test_the_slot_says_who_holds_it_and_refuses_in_the_tenants_words():
    loop, a = StandInLoop(), Tenant("law a")
    slot = _slot(loop)
    assert slot.tenant is None and slot.in_use() == "" and slot.handover_reason == ""
    slot.require_jtac("stream()")  # free: nothing raised
    slot.hand_to(a, "native a")
    assert slot.tenant is a and loop.laws == ["native a"]
    assert slot.in_use() == "law a is in use (long)" and slot.handover_reason == "law a was put in use"
    with pytest.raises(RuntimeError, match=r"^stream\(\): law a is in use: release law a first$"):
        slot.require_jtac("stream()")
    slot.stopped("threshold")
    assert a.stopped_with == ["threshold"]


def test_a_tenant_replaced_or_given_back_is_told_once_and_a_stale_give_back_changes_nothing():
    loop, a, b = StandInLoop(), Tenant("a"), Tenant("b")
    slot = _slot(loop)
    slot.hand_to(a, "native a")
    slot.hand_to(b, "native b")  # a law replaced by another: the loop hands over directly
    assert (a.released_count, slot.tenant, loop.laws) == (1, b, ["native a", "native b"])
    slot.give_back(a, wait=True, what="closing a")  # a no longer holds it: nothing happens
    assert slot.tenant is b and loop.laws == ["native a", "native b"]
    slot.give_back(b, wait=True, what="closing b")
    assert (b.released_count, slot.tenant, loop.laws[-1], loop.jtac_active) == (1, None, None, True)
    slot.give_back(b, wait=True, what="closing b again")
    assert b.released_count == 1 and loop.laws[-1] is None and len(loop.laws) == 3


def test_a_hand_over_that_does_not_complete_names_what_waited():
    loop, a = StandInLoop(), Tenant("a")
    slot = _slot(loop)
    slot.hand_to(a, "native a")
    loop.use_law = lambda law: loop.laws.append(law)  # the loop never reports the JTAC back
    with pytest.raises(RuntimeError, match=r"closing a: the hand-over did not complete within 2\.0 s"):
        slot.give_back(a, wait=True, what="closing a")
    assert slot.tenant is a  # still the tenant's: nothing pretends the switch happened


# ================================================================ random switches on the simulated arm
def swing_law(t, dt, q, dq, q_d, tau_ext, wrench, tcp_pose, jacobian, params, memory, q_cmd, dq_cmd):
    """q0 + A·(1 − cos(ω(t − t0))) on joint params[2]: starts at rest; memory [started, t0, q0 (7)]."""
    if memory[0] == 0.0:
        memory[0] = 1.0
        memory[1] = t
        for j in range(7):
            memory[2 + j] = q_d[j]
    tau = t - memory[1]
    joint = int(params[2])
    for j in range(7):
        q_cmd[j] = memory[2 + j]
        dq_cmd[j] = 0.0
    q_cmd[joint] += params[0] * (1.0 - math.cos(params[1] * tau))
    dq_cmd[joint] = params[0] * params[1] * math.sin(params[1] * tau)
    return 0


@pytest.fixture(scope="module")
def swing():
    return laws.compile(swing_law, 3, 9, params=SWING_PARAMS)


def _peak_acceleration(data):
    dq, t = data["dq_cmd"], data["time"]
    return float(np.max(np.abs(np.diff(dq, axis=0)) / np.diff(t)[:, None]))


def _speed(c):
    return float(np.abs(c.state.dq_cmd).max())


class Run:
    """One random sequence: the controller, what should hold the slot, the goals sent."""

    def __init__(self, c, swing, rng):
        self.c, self.swing, self.rng = c, swing, rng
        self.holder = None  # None (the JTAC), "stream" or "law"
        self.stream = None
        self.goals = []

    def goal(self):
        if self.goals and not self.goals[-1].done():
            return self.wait()  # one goal at a time: a second would be stitched, another rule
        q0 = np.array(self.c.state.q_cmd)
        q1 = q0 + self.rng.uniform(-0.2, 0.2, 7) * np.array([1, 0, 0, 1, 0, 0, 1])
        handle = self.c.follow(Trajectory.quintic(q0, q1, 1.5, joint_names=self.c.joint_names), wait=False)
        if self.holder is not None:
            result = handle.result(0.0)
            assert result.code == ResultCode.INVALID_STATE and "before sending goals" in result.message
        else:
            self.goals.append(handle)
        self.c.step(int(self.rng.integers(100, 600)))

    def open_stream(self):
        if self.holder is not None:
            with pytest.raises(RuntimeError, match=r"is open|custom law is in use"):
                self.c.stream()
            return
        self.stream, self.holder = self.c.stream(), "stream"
        # The sender's motion, one smooth function of the controller time for the stream's life (a
        # stream follows its inputs as they come: a sender that jumps gets a jumping command).
        q_open, amplitude, t_open = (
            np.array(self.c.state.q_cmd),
            self.rng.uniform(0.02, 0.1),
            self.stream.now(),
        )
        self.target = lambda t: q_open + np.eye(7)[3] * amplitude * (1.0 - math.cos(2.0 * (t - t_open)))
        self.send()

    def send(self):
        if self.holder != "stream":
            return self.wait()
        for _ in range(int(self.rng.integers(20, 80))):  # 8 ms apart: a 125 Hz sender
            now = self.stream.now()
            self.stream.send(self.target(now), sampled_at_s=now)
            self.c.step(8)

    def close_stream(self):
        if self.holder != "stream":
            return self.wait()
        self.stream.close()
        self.holder = None
        assert _speed(self.c) == 0.0 and self.c._loop.jtac_active

    def use_law(self):
        if self.holder == "stream":
            with pytest.raises(RuntimeError, match="a stream is open"):
                self.c.use_law(self.swing, SWING_PARAMS)
            return
        self.c.use_law(self.swing, SWING_PARAMS)
        self.holder = "law"
        assert self.c.law is self.swing
        self.c.step(int(self.rng.integers(100, 800)))

    def law_none(self):
        was_law = self.holder == "law"
        self.c.use_law(None)  # nothing to give back unless a law holds the slot
        if was_law:
            self.holder = None
            assert _speed(self.c) == 0.0 and self.c._loop.jtac_active
        assert self.c.law is None or self.holder == "stream"

    def wait(self):
        self.c.step(int(self.rng.integers(50, 400)))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_switches_between_goals_streams_and_laws_keep_the_hand_over_rule(swing, seed):
    rng = np.random.default_rng(seed)
    c = Controller(SimulatedArm("fr3", clock="lockstep"), stop_accelerations=[STOP_ACC] * 7).start()
    c.step(20)
    run = Run(c, swing, rng)
    ops = [run.goal, run.open_stream, run.send, run.close_stream, run.use_law, run.law_none, run.wait]
    limited = c.timing()["hardware"]["limiter_activations"]
    with c.record(["time", "dq_cmd"]) as rec:
        for _ in range(OPS_PER_SEED):
            ops[int(rng.integers(len(ops)))]()
            assert c._slot.tenant is None if run.holder is None else c._slot.tenant is not None
        run.close_stream()
        run.law_none()
        for goal in run.goals:
            result = goal.result(5.0)
            handed_over = result.code == ResultCode.INVALID_STATE and "handed over" in result.message
            assert result.ok or handed_over, result
    c.stop()
    assert _peak_acceleration(rec.data()) <= STOP_ACC * (1 + 1e-6), f"seed {seed}"
    assert c.timing()["hardware"]["limiter_activations"] == limited, f"seed {seed}"
