"""Two arms in one process (``jtac_py.arm_group.ArmGroup``), in lockstep.

Layer: loop with simulated hardware (two MuJoCo FR3s, each with its hardware thread's rate matcher
and limiter and its native loop, the Python API), stepped together packet by packet. Checks from the
recordings that a group goal starts both arms on the same cycle and keeps their trajectory times equal,
that one stream carries both arms on one observation, that an arm stopping by itself brakes the other
within its stop accelerations (or not, by the policy), and that stop() brakes both.
"""

import math

import numpy as np
import pytest

from jtac_py.arm_group import ArmGroup
from jtac_py.controller import ResultCode, Trajectory

STOP_ACC = 2.0  # [rad/s²]: every brake of the group within it; any cut shows
SEEDS = range(6)
OPS_PER_SEED = 16
LEFT_MOTION = np.array([0.3, 0.0, 0.0, 0.4, 0.0, 0.0, 0.2])  # [rad]
RIGHT_MOTION = np.array([-0.2, 0.0, 0.0, -0.3, 0.0, 0.0, -0.3])  # [rad]


@pytest.fixture
def pair():
    group = ArmGroup.simulated_pair(clock="lockstep", stop_accelerations=[STOP_ACC] * 7).start()
    group.step(20)
    yield group
    group.stop(brake=False)


def _q_cmd(group):
    return np.concatenate([np.array(c.state.q_cmd) for c in group.controllers.values()])


def _speed(controller):
    return float(np.abs(controller.state.dq_cmd).max())


def _peak_acceleration(rows, start=0):
    dq, t = rows["dq_cmd"][start:], rows["time"][start:]
    return float(np.max(np.abs(np.diff(dq, axis=0)) / np.diff(t)[:, None]))


def _limited(group):
    return {arm: c.timing()["hardware"]["limiter_activations"] for arm, c in group.controllers.items()}


def _group_goal(group, duration_s=1.5, scale=1.0):
    q0 = _q_cmd(group)
    return Trajectory.quintic(q0, q0 + scale * np.concatenate([LEFT_MOTION, RIGHT_MOTION]), duration_s)


# ================================================================ one clock: goals started together


def test_a_group_goal_starts_both_arms_on_the_requested_cycle_and_keeps_their_trajectory_times_equal(pair):
    limited = _limited(pair)
    with pair.record(["time", "trajectory_time", "q_cmd", "dq_cmd", "mode"]) as rec:
        start_at_s = pair.now() + 0.123
        result = pair.follow(_group_goal(pair), start_at_s=start_at_s, timeout=5.0)
    assert result.ok, result.message
    assert result.start_times_s == {"left": pytest.approx(start_at_s), "right": pytest.approx(start_at_s)}
    assert result.start_skew_s == 0.0
    data = rec.data()
    left, right = data["left"], data["right"]
    np.testing.assert_array_equal(left["group_time"], right["group_time"])  # the same cycles
    np.testing.assert_array_equal(left["trajectory_time"], right["trajectory_time"])
    for rows in (left, right):
        moving = np.flatnonzero(np.abs(rows["dq_cmd"]).max(axis=1) > 0)
        assert rows["time"][moving[0]] == pytest.approx(start_at_s, abs=1e-9)  # not a cycle early or late
    np.testing.assert_allclose(left["q_cmd"][-1] - left["q_cmd"][0], LEFT_MOTION, atol=1e-9)
    np.testing.assert_allclose(right["q_cmd"][-1] - right["q_cmd"][0], RIGHT_MOTION, atol=1e-9)
    assert _limited(pair) == limited


def test_a_goal_per_arm_with_different_durations_starts_together_and_ends_by_each_arms_trajectory(pair):
    left, right = pair.controllers["left"], pair.controllers["right"]
    q_left, q_right = np.array(left.state.q_cmd), np.array(right.state.q_cmd)
    goals = {
        "left": Trajectory.quintic(q_left, q_left + LEFT_MOTION, 1.0),
        "right": Trajectory.quintic(q_right, q_right + RIGHT_MOTION, 2.0),
    }
    with pair.record(["time", "trajectory_time"]) as rec:
        result = pair.follow(goals, timeout=5.0)
    assert result.ok and result.start_skew_s == 0.0
    ends = {arm: r.end_time_s - result.start_times_s[arm] for arm, r in result.results.items()}
    assert ends["left"] == pytest.approx(1.0, abs=0.1) and ends["right"] == pytest.approx(2.0, abs=0.1)
    data = rec.data()
    both = data["left"]["trajectory_time"] > 0
    assert both.any()
    np.testing.assert_array_equal(  # the same trajectory time while both execute
        data["left"]["trajectory_time"][both][: int(0.9 / 0.001)],
        data["right"]["trajectory_time"][both][: int(0.9 / 0.001)],
    )


def test_a_goal_for_one_arm_leaves_the_other_at_rest(pair):
    q_left = np.array(pair.controllers["left"].state.q_cmd)
    q_right = np.array(pair.controllers["right"].state.q_cmd)
    result = pair.follow({"left": Trajectory.quintic(q_left, q_left + LEFT_MOTION, 1.0)}, timeout=5.0)
    assert result.ok and list(result.results) == ["left"]
    np.testing.assert_array_equal(pair.controllers["right"].state.q_cmd, q_right)


def test_group_goals_are_checked_before_any_arm_gets_one(pair):
    q0 = _q_cmd(pair)
    wrong_names = Trajectory.quintic(q0, q0, 1.0, joint_names=[f"j{i}" for i in range(14)])
    with pytest.raises(ValueError, match="must be the group's"):
        pair.follow(wrong_names)
    with pytest.raises(ValueError, match=r"the last axis must hold the group's 14 joints"):
        pair.follow(Trajectory.quintic(q0[:7], q0[:7], 1.0))
    with pytest.raises(ValueError, match=r"arms \['middle'\] are not in the group"):
        pair.follow({"middle": Trajectory.quintic(q0[:7], q0[:7], 1.0)})
    with pytest.raises(ValueError, match="must lie ahead"):
        pair.follow(_group_goal(pair), start_at_s=pair.now())
    assert all(not c._events.goals for c in pair.controllers.values())  # nothing was submitted


def test_a_group_needs_distinct_unstarted_controllers_on_one_clock():
    group = ArmGroup.simulated_pair(clock="lockstep")
    left = group.controllers["left"]
    with pytest.raises(ValueError, match="a Controller of its own per arm"):
        ArmGroup({"a": left, "b": left})
    with pytest.raises(ValueError, match="must be an identifier"):
        ArmGroup({"a b": left, "c": group.controllers["right"]})
    with pytest.raises(ValueError, match="on_fault must be one of"):
        ArmGroup(group.controllers, on_fault="pray")
    left.start()
    try:
        with pytest.raises(RuntimeError, match="start the arms through the group"):
            ArmGroup(group.controllers)
    finally:
        left.stop()


def test_admittance_is_per_arm_each_on_its_own_sensor(pair):
    """A group goal compliant on the left arm only, both arms pushed alike: the left command yields
    to its own sensor's reading, the right command stays on its trajectory."""
    compliant = {
        "mass": [4.0, 4.0, 4.0, 1.0, 1.0, 1.0],
        "stiffness": [400.0] * 3 + [50.0] * 3,
        "selected_axes": [True, True, True, False, False, False],
    }
    q0 = _q_cmd(pair)
    tolerances = {"path": 0.5}  # [rad]: the push deflects the compliant arm by design
    handle = pair.follow(
        Trajectory.quintic(q0, q0, 4.0), admittance={"left": compliant}, tolerances=tolerances, wait=False
    )
    pair.step(300)
    for c in pair.controllers.values():
        c.hardware.push([0.0, 15.0, 0.0], 1.5)  # [N], world y, at each TCP
    pair.step(1200)
    left, right = pair.controllers["left"].state, pair.controllers["right"].state
    assert np.abs(np.array(left.q_cmd) - np.array(left.q_ref)).max() > 1e-3  # yielded [rad]
    np.testing.assert_array_equal(right.q_cmd, right.q_ref)  # not compliant: on its trajectory
    assert np.abs(np.array(right.q) - np.array(right.q_cmd)).max() > 1e-4  # though pushed
    assert handle.result(5.0).ok


# ================================================================ one stream for both arms


def test_a_14_joint_chunk_stream_moves_both_arms_from_one_observation(pair):
    q0 = _q_cmd(pair)
    motion = np.concatenate([LEFT_MOTION, RIGHT_MOTION]) * 0.3
    with pair.record(["time", "q_cmd", "dq_cmd"]) as rec, pair.stream() as stream:
        for _ in range(20):  # a 10 Hz policy: 16 points 50 ms apart, observed now
            observed = stream.now()
            times = np.arange(1, 17) * 0.05
            phase = np.clip((observed + times - 0.05) / 1.5, 0.0, 1.0)
            smooth = 10 * phase**3 - 15 * phase**4 + 6 * phase**5
            stream.send_chunk(times, q0 + np.outer(smooth, motion), observed_at_s=observed)
            pair.step(100)
        pair.step(400)
    data = rec.data()
    for arm, cut in (("left", slice(0, 7)), ("right", slice(7, 14))):
        rows = data[arm]
        np.testing.assert_allclose(rows["q_cmd"][-1], (q0 + motion)[cut], atol=1e-6)
        assert _peak_acceleration(rows) < STOP_ACC
    # One observation for both: their commands are the same function of the group time.
    np.testing.assert_array_equal(data["left"]["group_time"], data["right"]["group_time"])
    progress_left = (data["left"]["q_cmd"][:, 0] - q0[0]) / motion[0]
    progress_right = (data["right"]["q_cmd"][:, 0] - q0[7]) / motion[7]
    np.testing.assert_allclose(progress_left, progress_right, atol=1e-9)


def test_a_group_stream_checks_the_whole_input_before_any_arm_gets_it(pair):
    q0 = _q_cmd(pair)
    with pair.stream() as stream:
        bad = np.tile(q0, (4, 1))
        bad[2, 9] = math.nan
        with pytest.raises(ValueError, match="right_fr3_joint3"):
            stream.send_chunk(np.arange(1, 5) * 0.05, bad)
        with pytest.raises(ValueError, match=r"shape \(14,\)"):
            stream.send(q0[:7])
        pair.step(50)
        assert [s.chunks_taken + s.targets_taken for s in stream.streams.values()] == [0, 0]
    for c in pair.controllers.values():
        assert _speed(c) == 0.0


def test_a_group_stream_carries_each_arms_gripper_channel():
    group = ArmGroup.simulated_pair(clock="lockstep", hand=True).start()
    try:
        group.step(20)
        q0 = _q_cmd(group)
        with group.stream(gripper_units="fraction") as stream:
            with pytest.raises(ValueError, match=r"one column per arm"):
                stream.send_chunk(np.arange(1, 5) * 0.05, np.tile(q0, (4, 1)), gripper=np.ones(4))
            with pytest.raises(ValueError, match=r"arm 'right'.*1\.5"):
                stream.send_chunk(np.arange(1, 5) * 0.05, np.tile(q0, (4, 1)), gripper={"right": [1.5] * 4})
            closing = np.column_stack([np.ones(4), np.zeros(4)])  # left closes, right stays open
            stream.send_chunk(np.arange(1, 5) * 0.05, np.tile(q0, (4, 1)), gripper=closing)
            for _ in range(15):  # the channel's commands are issued when the group pumps, after a step
                group.step(100)
        widths = {arm: c.gripper.state.width_m for arm, c in group.controllers.items()}
        assert widths["left"] < 0.01 and widths["right"] > 0.07, widths
    finally:
        group.stop(brake=False)


# ================================================================ a fault: the policy


def _fault_mid_goal(group, arm="left", at_s=0.7):
    handle = group.follow(_group_goal(group, duration_s=2.0), wait=False)
    group.step(int(at_s * 1000))
    group.controllers[arm].hardware.inject_fault("reflex: joint_velocity_violation (injected)")
    return handle


def test_an_arm_that_stops_by_itself_brakes_the_other_to_rest_within_its_stop_accelerations(pair):
    with pair.record(["time", "dq_cmd"]) as rec:
        handle = _fault_mid_goal(pair)
        result = handle.result(5.0)
    assert (
        pair.fault is not None
        and pair.fault.arm == "left"
        and "joint_velocity_violation" in pair.fault.message
    )
    left, right = result.results["left"], result.results["right"]
    assert left.code == ResultCode.INVALID_STATE and "joint_velocity_violation" in left.message
    assert right.code == ResultCode.INVALID_STATE
    assert "another arm of the group stopped by itself" in right.message
    assert "arm 'left' stopped" in right.message and "joint_velocity_violation" in right.message
    other = pair.controllers["right"]
    assert _speed(other) == 0.0 and other._loop.peer_brakes == 1
    rows = rec.data()["right"]
    assert _peak_acceleration(rows) <= STOP_ACC * (1 + 1e-6)  # braked, not cut
    # It braked at once: at rest within the time a stop from the fault's speed takes (+ a cycle).
    fault_k = int(np.argmin(np.abs(rows["time"] - (handle.start_at_s + 0.65))))
    speed = np.abs(rows["dq_cmd"]).max(axis=1)
    rest_k = fault_k + int(np.argmax(speed[fault_k:] == 0.0))
    assert rows["time"][rest_k] - rows["time"][fault_k] <= speed[fault_k] / STOP_ACC + 0.06
    # A stream on the other arm is refused while the group is faulted, naming the arm.
    with pytest.raises(RuntimeError, match="arm 'left' stopped by itself"):
        pair.follow(_group_goal(pair))


def test_with_continue_the_other_arm_finishes_its_goal():
    group = ArmGroup.simulated_pair(clock="lockstep", on_fault="continue").start()
    try:
        group.step(20)
        result = _fault_mid_goal(group, arm="right").result(5.0)
        assert result.results["right"].code == ResultCode.INVALID_STATE
        assert result.results["left"].ok, result.results["left"].message
        assert group.controllers["left"]._loop.peer_brakes == 0
    finally:
        group.stop(brake=False)


def test_a_group_stream_stops_on_a_fault_and_names_the_arm(pair):
    q0 = _q_cmd(pair)
    stream = pair.stream()
    motion = np.concatenate([LEFT_MOTION, RIGHT_MOTION]) * 0.5
    for _ in range(8):
        observed = stream.now()
        times = np.arange(1, 17) * 0.05
        ramp = np.clip((observed + times) / 2.0, 0.0, 1.0)[:, None]
        stream.send_chunk(times, q0 + ramp * motion, observed_at_s=observed)
        pair.step(100)
    pair.controllers["right"].hardware.inject_fault("link lost (injected)")
    pair.step(600)
    left = pair.controllers["left"]
    assert _speed(left) == 0.0 and left._loop.peer_brakes == 1
    with pytest.raises(RuntimeError, match=r"arm 'right' of the group stopped by itself \(.*link lost"):
        stream.send(q0)
    stream.close()
    assert left._loop.jtac_active


def test_after_recovery_the_group_runs_again_and_the_watch_is_armed_again(pair):
    _fault_mid_goal(pair).result(5.0)
    pair.stop()
    pair.controllers["left"].hardware.clear_fault()
    pair.start()
    pair.step(20)
    assert pair.fault is None
    assert pair.follow(_group_goal(pair, duration_s=0.8, scale=0.5), timeout=5.0).ok
    result = _fault_mid_goal(pair, arm="right", at_s=0.3).result(5.0)
    assert "arm 'right' stopped" in result.results["left"].message
    assert pair.controllers["left"]._loop.peer_brakes >= 1


# ================================================================ one stop for both


def test_stop_brakes_both_arms_to_rest_within_their_stop_accelerations_then_stops_them(pair):
    handle = pair.follow(_group_goal(pair, duration_s=2.0), wait=False)
    pair.step(900)
    with pair.record(["time", "dq_cmd"]) as rec:
        assert min(_speed(c) for c in pair.controllers.values()) > 0.1
        data = rec.data
        pair.stop()
        rows = data()
    assert not pair.running
    for arm, r in handle.result(0.0).results.items():
        assert r.canceled, (arm, r)
        assert _peak_acceleration(rows[arm]) <= STOP_ACC * (1 + 1e-6)
        assert np.abs(rows[arm]["dq_cmd"][-1]).max() == 0.0
    pair.start()  # the fixture's teardown stops it again


def test_a_group_recording_saves_both_arms_on_the_group_clock(pair, tmp_path):
    path = tmp_path / "pair.npz"
    with pair.record(["q_cmd"], path=path):
        pair.step(30)
    saved = np.load(path)
    assert {"left/q_cmd", "right/q_cmd", "left/time", "left/host_time", "left/group_time"} <= set(saved.files)
    assert len(saved["left/time"]) == len(saved["right/time"]) == 30
    np.testing.assert_array_equal(saved["left/group_time"], saved["right/group_time"])


# ================================================================ random sequences


class GroupRun:
    """One random sequence on the pair: group goals, goals per arm, a time scale, cancels, a stream,
    tares, a stop and restart, an arm's fault and its recovery; every segment between restarts
    recorded."""

    def __init__(self, group, rng):
        self.group, self.rng = group, rng
        self.handles = []
        self.stream = None
        self.segments = []
        self.recording = group.record(["time", "dq_cmd"])
        self.faults = 0

    def _busy(self):
        return self.stream is not None or any(not h.done() for h in self.handles)

    def tare(self):
        arm = self.rng.choice(self.group.names)
        controller = self.group.controllers[arm]
        if self._busy() or _speed(controller) > 0.0:
            with pytest.raises(RuntimeError, match=r"refused|tare"):
                controller.zero_fts()
        else:
            assert controller.zero_fts().ok
        self.wait()

    def restart(self):
        self.close_stream()
        self.group.stop()  # brakes every goal to rest first (CANCELED)
        self.segments.append(self.recording.data())
        self.group.start()
        self.recording = self.group.record(["time", "dq_cmd"])
        self.wait()

    def fault(self):
        arm = self.rng.choice(self.group.names)
        other = next(a for a in self.group.names if a != arm)
        brakes = self.group.controllers[other]._loop.peer_brakes
        self.group.controllers[arm].hardware.inject_fault("injected reflex")
        self.group.step(1500)  # the other arm brakes from any speed of these motions within it
        assert _speed(self.group.controllers[other]) == 0.0
        assert self.group.controllers[other]._loop.peer_brakes == brakes + 1
        for handle in self.handles:
            for name, result in handle.result(0.0).results.items():
                assert result.ok or result.canceled or result.code == ResultCode.INVALID_STATE, (name, result)
        self.handles.clear()
        if self.stream is not None:
            with pytest.raises(RuntimeError, match=f"arm '{arm}'"):
                self.stream.send(_q_cmd(self.group))
        self.close_stream()
        self.group.stop(brake=False)
        self.segments.append(self.recording.data())
        self.group.controllers[arm].hardware.clear_fault()
        self.group.start()
        self.recording = self.group.record(["time", "dq_cmd"])
        self.faults += 1
        self.wait()

    def group_goal(self):
        if self.stream is not None or any(not h.done() for h in self.handles):
            return self.wait()
        scale = self.rng.uniform(-1.0, 1.0)
        self.handles.append(self.group.follow(_group_goal(self.group, 1.2, scale), wait=False))
        self.wait()

    def arm_goal(self):
        if self.stream is not None or any(not h.done() for h in self.handles):
            return self.wait()
        arm = self.rng.choice(self.group.names)
        q = np.array(self.group.controllers[arm].state.q_cmd)
        step = self.rng.uniform(-0.2, 0.2) * np.array([1, 0, 0, 1, 0, 0, 1])
        self.handles.append(self.group.follow({arm: Trajectory.quintic(q, q + step, 1.0)}, wait=False))
        self.wait()

    def time_scale(self):
        if self.stream is not None:
            return self.wait()
        arm = self.rng.choice(self.group.names)
        self.group.controllers[arm].time_scale = float(self.rng.choice([50.0, 100.0]))
        self.wait()

    def cancel(self):
        self.group.cancel()
        self.wait()

    def stream_chunks(self):
        if any(not h.done() for h in self.handles):
            return self.wait()
        if self.stream is None:
            self.stream, self.q_open = self.group.stream(), _q_cmd(self.group)
        amplitude = self.rng.uniform(0.02, 0.08)
        for _ in range(int(self.rng.integers(3, 8))):
            observed = self.stream.now()
            times = np.arange(1, 17) * 0.05
            wave = amplitude * (1.0 - np.cos(1.5 * (observed + times)))[:, None]
            self.stream.send_chunk(times, self.q_open + wave * np.ones(14), observed_at_s=observed)
            self.group.step(100)

    def close_stream(self):
        if self.stream is not None:
            self.stream.close()
            self.stream = None
        self.wait()

    def wait(self):
        self.group.step(int(self.rng.integers(50, 500)))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_group_sequences_keep_both_arms_within_their_stop_accelerations(seed):
    rng = np.random.default_rng(seed)
    group = ArmGroup.simulated_pair(clock="lockstep", stop_accelerations=[STOP_ACC] * 7).start()
    try:
        group.step(20)
        run = GroupRun(group, rng)
        ops = [
            run.group_goal,
            run.arm_goal,
            run.time_scale,
            run.cancel,
            run.stream_chunks,
            run.close_stream,
            run.tare,
            run.restart,
            run.fault,
        ]
        for _ in range(OPS_PER_SEED):
            ops[int(rng.integers(len(ops)))]()
        run.close_stream()
        for handle in run.handles:
            for arm, result in handle.result(10.0).results.items():
                assert result.ok or result.canceled, (seed, arm, result)
        run.restart()
        for k, segment in enumerate(run.segments):
            for arm in group.names:
                rows = segment[arm]
                if len(rows["time"]) > 2:
                    assert _peak_acceleration(rows) <= STOP_ACC * (1 + 1e-6), (
                        f"seed {seed}, segment {k}, {arm}"
                    )
            n = min(len(segment["left"]["time"]), len(segment["right"]["time"]))
            np.testing.assert_array_equal(
                segment["left"]["group_time"][:n], segment["right"]["group_time"][:n]
            )
        assert all(v == 0 for v in _limited(group).values()), f"seed {seed}"
    finally:
        group.stop(brake=False)
