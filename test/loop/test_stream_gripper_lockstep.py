"""A stream's gripper channel on the simulated FR3 with its Franka Hand, in lockstep.

Layer: loop with simulated hardware (the MuJoCo arm and hand, the controller's StreamLaw, the
stream's gripper follower run by every step(), the Gripper API), 1 ms at a time on a virtual clock.
Checked with numbers: when each gripper command is issued against the chunk's time, how many a
noisy or fast channel gives (5 mm threshold, 0.1 s minimum interval), the widths commanded for
fraction units, the refusals of bad values, and the recorded gripper series on the controller's
time base.
"""

import logging

import numpy as np
import pytest

from jtac_py import robots
from jtac_py.controller import Controller, ResultCode, Trajectory
from jtac_py.gripper.follower import (
    FINGERS_CLOSED_M,
    FRACTION_THRESHOLD,
    MIN_COMMAND_INTERVAL_S,
    WIDTH_THRESHOLD_M,
)
from jtac_py.hardware import SimulatedArm
from jtac_py.recording import GRIPPER_RECORD_FIELDS, RECORD_FIELDS

OPEN_M = 0.08  # the Franka Hand's stroke [m]
POINTS, SPACING_S = 16, 0.02  # a policy's chunk: 16 points 20 ms apart
#: A lockstep follower looks at its target once per step(): with step(1), one packet [s].
LOCKSTEP_FOLLOWER_PERIOD_S = 0.001


def _controller(hand=True, grasp_object=None):
    arm = SimulatedArm("fr3", clock="lockstep", hand=hand, grasp_object=grasp_object)
    controller = Controller(arm).start()
    controller.step(20)
    return controller


@pytest.fixture
def c():
    controller = _controller()
    yield controller
    controller.stop()


class _Commands:
    """Every command the hand is sent, by anyone (a listener on the Controller's gripper)."""

    def __init__(self, gripper):
        self.events = []
        gripper.add_listener(lambda event: self.events.append(event) if event.kind == "command" else None)

    @property
    def kinds(self):
        return [event.command for event in self.events]


def _hold_chunk(c, widths):
    """A chunk that holds the arm where it is, with `widths` as its gripper channel."""
    times = SPACING_S * np.arange(len(widths))
    return times, np.tile(c.state.q_cmd, (len(widths), 1))


def _run(c, seconds):
    """Steps `seconds` 10 ms at a time (the follower looks once per step(), as in a blocking wait)."""
    for _ in range(round(seconds / 0.01)):
        assert c.step(10).name == "OK"


def _step_until(c, stream, t_s):
    """Steps 1 ms at a time until the controller clock reaches t_s."""
    while stream.now() < t_s - 1e-9:
        assert c.step(1).name == "OK"


def test_a_chunk_closes_the_hand_at_the_point_whose_time_has_come(c):
    """Points 0-7 open (80 mm), 8-15 closed (0 mm): one grasp to 0 mm, issued within one follower
    period of point 8's time on the controller clock, nothing before; the fingers then close."""
    sent = _Commands(c.gripper)
    stream = c.stream()
    widths = np.where(np.arange(POINTS) >= 8, 0.0, OPEN_M)
    times, q = _hold_chunk(c, widths)
    observed_s = stream.now()
    stream.send_chunk(times, q, observed_at_s=observed_s, gripper=widths)
    crossing_s = observed_s + times[8]
    _step_until(c, stream, crossing_s - 0.002)
    assert stream.gripper_commands == []  # an open target on an open hand: nothing to send
    _step_until(c, stream, observed_s + times[-1] + 0.1)
    (grasp,) = stream.gripper_commands
    delay_s = grasp.issued_at_s - crossing_s
    print(f"grasp issued {delay_s * 1e3:+.1f} ms after point 8's time")
    assert grasp.command == "grasp" and sent.kinds == ["grasp"]
    assert -LOCKSTEP_FOLLOWER_PERIOD_S <= delay_s <= LOCKSTEP_FOLLOWER_PERIOD_S
    assert sent.events[0].width_m == FINGERS_CLOSED_M  # a closed target: the band's lower edge
    result = grasp.result(timeout=2.0)  # nothing between the fingers: closed all the way
    print(f"grasp ended {result.code.name} at {result.width_m * 1e3:.2f} mm after {result.duration_s:.3f} s")
    assert result.width_m < 0.001
    assert 0.7 < result.duration_s < 1.0  # 80 mm at 0.1 m/s
    stream.close()


def test_noise_below_the_threshold_sends_nothing_and_commands_keep_the_minimum_interval(c):
    """send() at 100 Hz: 40 mm with ±2.4 mm of noise gives one command (the first), then a target
    switching between 20 and 60 mm every 30 ms for 1 s gives one command per 0.1 s at most, each
    5 mm or more from the last."""
    sent = _Commands(c.gripper)
    rng = np.random.default_rng(3)
    q = c.state.q_cmd
    with c.stream() as stream:
        for _ in range(100):
            stream.send(q, gripper=0.04 + rng.uniform(-0.0024, 0.0024))
            c.step(10)
        assert len(stream.gripper_commands) == 1
        for k in range(100):
            stream.send(q, gripper=0.02 if (k // 3) % 2 else 0.06)
            c.step(10)
        commands = stream.gripper_commands
    issued_s = np.array([h.issued_at_s for h in commands])
    widths_m = np.array([e.width_m for e in sent.events])
    intervals_s = np.diff(issued_s)
    print(f"{len(commands)} commands, intervals {intervals_s.min():.3f}..{intervals_s.max():.3f} s")
    assert len(sent.events) == len(commands)
    assert intervals_s.min() >= MIN_COMMAND_INTERVAL_S - 1e-9
    assert 9 <= len(commands) - 1 <= 11  # 1 s of switching: one command per 0.1 s
    assert np.abs(np.diff(widths_m)).min() > WIDTH_THRESHOLD_M


def test_a_fraction_channel_commands_the_width_droid_means(c):
    """gripper_units="fraction": 0 open, 1 closed; 1 -> grasp to 0 mm, 0.5 -> 40 mm, 0 -> a move to 80 mm."""
    sent = _Commands(c.gripper)
    stream = c.stream(gripper_units="fraction")
    times, q = _hold_chunk(c, np.zeros(POINTS))
    stream.send_chunk(times, q, gripper=np.where(np.arange(POINTS) >= 4, 1.0, 0.0))
    _run(c, 1.0)  # closed all the way (80 mm at 0.1 m/s)
    stream.send(q[0], gripper=0.5)
    _run(c, 0.2)
    stream.send(q[0], gripper=0.0)
    _run(c, 0.2)
    stream.send(q[0], gripper=FRACTION_THRESHOLD * 0.99)  # 4.95 mm from the last command: nothing
    _run(c, 0.2)
    stream.close()
    assert [(e.command, round(e.width_m, 6)) for e in sent.events] == [
        ("grasp", FINGERS_CLOSED_M),
        ("move", 0.04),  # from closed: opening
        ("move", 0.08),
    ]


@pytest.mark.parametrize(
    ("units", "values", "message"),
    [
        ("width_m", [0.08, 0.08, 0.08, float("nan")], r"gripper\[3\] is nan"),
        ("width_m", [0.0, 0.02, 0.04, 0.06, 0.08, 0.09], r"gripper\[5\] is 0\.09: .*0\.\.0\.08 m"),
        ("width_m", [-0.001], r"gripper\[0\] is -0\.001"),
        ("fraction", [0.0, 1.5], r"gripper\[1\] is 1\.5: .*0\.\.1$"),
        ("fraction", [0.0, 1.0, 0.5], r"gripper must have shape \(4,\)"),
    ],
)
def test_bad_gripper_values_are_refused_with_point_and_value_and_nothing_is_sent(c, units, values, message):
    """A bad gripper value refuses the whole chunk (joints included) before anything is sent."""
    sent = _Commands(c.gripper)
    stream = c.stream(gripper_units=units)
    points = 4 if "shape" in message else len(values)
    times, q = _hold_chunk(c, np.zeros(points))
    with pytest.raises(ValueError, match=message):
        stream.send_chunk(times, q, gripper=values[:points])
    c.step(50)
    assert stream.chunks_taken == 0 and stream.gripper_commands == [] and sent.events == []
    stream.close()


def test_bad_single_targets_and_options_are_refused(c):
    q = c.state.q_cmd
    with c.stream() as stream:
        for value, message in [(float("inf"), "gripper is inf"), (0.081, r"gripper is 0\.081")]:
            with pytest.raises(ValueError, match=message):
                stream.send(q, gripper=value)
        c.step(50)
        assert stream.targets_taken == 0 and stream.gripper_commands == []
    for options, message in [
        ({"gripper_units": "mm"}, "gripper_units must be one of"),
        ({"gripper_speed_m_s": 0.2}, r"gripper_speed_m_s=0\.2 is outside \(0, 0\.1\] m/s"),
        ({"gripper_force_n": 0.0}, r"gripper_force_n=0\.0 is outside \(0, 140\] N"),
    ]:
        with pytest.raises(ValueError, match=message):
            c.stream(**options)
    c.stream().close()  # nothing was opened by the refusals


def test_an_arm_without_a_hand_follows_the_joints_and_warns_once(caplog):
    """The channel is checked, then ignored with one warning per stream: the chunks still run."""
    c = _controller(hand=False)
    try:
        stream = c.stream()
        times, q = _hold_chunk(c, np.zeros(POINTS))
        with caplog.at_level(logging.WARNING, logger="jtac_py.streaming"):
            stream.send_chunk(times, q, gripper=np.zeros(POINTS))
            c.step(100)
            stream.send_chunk(times, q, gripper=np.full(POINTS, 0.08))
            c.step(100)
            with pytest.raises(ValueError, match=r"gripper\[0\] is 0\.5"):
                stream.send_chunk(times, q, gripper=np.full(POINTS, 0.5))
        warnings = [r for r in caplog.records if "no hand" in r.getMessage()]
        assert len(warnings) == 1
        assert stream.chunks_taken == 2 and stream.gripper_commands == []
        assert stream.gripper_target_m() is None
        stream.close()
        assert c.record().fields == RECORD_FIELDS  # no hand: no gripper series by default
    finally:
        c.stop()


def test_brake_and_close_leave_the_hand_alone(c):
    """A chunk that would close the hand 200 ms on: brake() at 100 ms drops it (no command); a grasp
    under way when the stream closes runs to its end, and nothing else is sent."""
    sent = _Commands(c.gripper)
    stream = c.stream()
    widths = np.where(np.arange(POINTS) >= 10, 0.0, OPEN_M)
    times, q = _hold_chunk(c, widths)
    start_s = stream.now()
    stream.send_chunk(times, q, observed_at_s=start_s, gripper=widths)
    _step_until(c, stream, start_s + 0.1)
    stream.brake()
    _step_until(c, stream, start_s + 0.6)
    assert sent.events == []
    stream.send(q[0], gripper=0.0)
    _run(c, 0.2)
    assert sent.kinds == ["grasp"]
    width_at_close_m = c.gripper.state.width_m
    stream.close()
    result = stream.gripper_commands[0].result(timeout=2.0)
    print(f"closed at {width_at_close_m * 1e3:.1f} mm; the grasp went on to {result.width_m * 1e3:.2f} mm")
    assert width_at_close_m > 0.05 and result.width_m < 0.001
    assert sent.kinds == ["grasp"]


def test_a_compliant_stream_stopped_by_a_threshold_sends_nothing_more(c):
    """A chunk that closes the hand 300 ms on; a 25 N push at 50 ms exceeds the stream's 8 N
    threshold and ends the stream: the closing point comes and goes without a command."""
    sent = _Commands(c.gripper)
    c.zero_fts()  # the hand's weight on the sensor
    compliant = {"mass": 4.0, "stiffness": 400.0, "selected_axes": [True] * 3 + [False] * 3}
    stream = c.stream(admittance=compliant, thresholds=[8.0, 8.0, 8.0, 5.0, 5.0, 5.0])
    widths = np.where(np.arange(POINTS) >= 15, 0.0, OPEN_M)
    times, q = _hold_chunk(c, widths)
    start_s = stream.now()
    stream.send_chunk(times, q, observed_at_s=start_s, gripper=widths)
    _step_until(c, stream, start_s + 0.05)
    c.hardware.push([0.0, 0.0, -25.0], 0.5)
    _step_until(c, stream, start_s + times[-1] + 0.2)
    assert stream.stop_code == ResultCode.FORCE_TORQUE_THRESHOLD_EXCEEDED
    assert sent.events == [] and stream.gripper_commands == []
    stream.close()


def test_a_stream_opened_on_a_hand_that_holds_a_box_sends_no_second_grasp():
    """The hand holds a 30 mm box before the stream: a closed target is already met (no command);
    an open one is a move to 80 mm."""
    c = _controller(grasp_object=robots.GraspObject(0.03))
    try:
        assert c.gripper.grasp(0.03).result(timeout=2.0).grasped
        sent = _Commands(c.gripper)
        q = c.state.q_cmd
        with c.stream(gripper_units="fraction") as stream:
            for fraction, seconds in [(1.0, 0.5), (0.9, 0.5), (0.0, 0.6)]:
                stream.send(q, gripper=fraction)
                _run(c, seconds)
        assert [(e.command, e.width_m) for e in sent.events] == [("move", OPEN_M)]
        assert c.gripper.state.width_m > OPEN_M - 0.001 and not c.gripper.state.is_grasped
    finally:
        c.stop()


def test_a_goal_refused_during_the_stream_and_run_after_it_leaves_the_hand_as_it_was():
    """The stream grasps a 30 mm box (one command); a goal sent while it is open is refused, one run
    after it carries the box 5 cm up: the hand still holds it at the same width, nothing more sent."""
    c = _controller(grasp_object=robots.GraspObject(0.03))
    try:
        sent = _Commands(c.gripper)
        stream = c.stream()
        q = c.state.q_cmd
        stream.send(q, gripper=0.0)
        _run(c, 0.7)
        held = c.gripper.state
        assert held.is_grasped and abs(held.width_m - 0.03) < 0.001
        point = {"positions": q, "time_from_start": 0.5}
        refused = c.follow({"joint_names": c.joint_names, "points": [point]}, timeout=1.0)
        assert refused.code == ResultCode.INVALID_STATE
        stream.close()
        up = Trajectory.quintic(q, q + np.array([0.0, -0.1, 0.0, 0.1, 0.0, 0.0, 0.0]), 1.0)
        assert c.follow(up, timeout=3.0).code == ResultCode.SUCCESSFUL
        after = c.gripper.state
        print(f"hand at {held.width_m * 1e3:.2f} mm before, {after.width_m * 1e3:.2f} mm after the goal")
        assert after.is_grasped and abs(after.width_m - held.width_m) < 2e-4
        assert sent.kinds == ["grasp"]
    finally:
        c.stop()


def test_the_recording_holds_the_gripper_series_on_the_controllers_time_base(c, tmp_path):
    """record(): the hand's state every step, the grasp issued and its result, each with a time
    column within the recorded cycles' times; save() writes the same arrays."""
    with c.record(path=tmp_path / "r.npz") as recording:
        stream = c.stream()
        widths = np.where(np.arange(POINTS) >= 8, 0.0, OPEN_M)
        times, q = _hold_chunk(c, widths)
        stream.send_chunk(times, q, gripper=widths)
        for _ in range(1200):  # 1.2 s, 1 ms at a time: the grasp ends in about 0.95 s
            c.step(1)
        (grasp,) = stream.gripper_commands
        result = grasp.result(timeout=0.0)
        stream.close()
    data = np.load(tmp_path / "r.npz")
    assert set(data.files) == set(RECORD_FIELDS + GRIPPER_RECORD_FIELDS)
    for name, values in recording.data().items():
        np.testing.assert_array_equal(data[name], values)
    t_s, state_s = data["time"], data["gripper_time"]
    print(f"{len(t_s)} cycles {t_s[0]:.3f}..{t_s[-1]:.3f} s; {len(state_s)} hand states {state_s[0]:.3f}..")
    assert t_s[0] - 0.001 <= state_s.min() and state_s.max() <= t_s[-1] + 0.001
    assert np.all(np.diff(state_s) > 0) and len(state_s) >= 1200
    assert data["gripper_command_kind"].tolist() == ["grasp"]
    assert data["gripper_command_time"][0] == pytest.approx(grasp.issued_at_s)
    assert data["gripper_command_width_m"].tolist() == [FINGERS_CLOSED_M]
    assert data["gripper_result_code"].tolist() == [result.code.name]
    assert data["gripper_result_id"].tolist() == data["gripper_command_id"].tolist() == [grasp.id]
    end_s = data["gripper_result_time"][0]
    assert grasp.issued_at_s < end_s <= t_s[-1] + 0.001
    width = data["gripper_width_m"]
    assert width[0] == pytest.approx(OPEN_M, abs=1e-4) and width[-1] < 0.001
    closing = (state_s > grasp.issued_at_s) & (width > 0.001)  # before the fingers settle at 0
    assert np.all(np.diff(width[closing]) < 0.0)
    assert data["gripper_moving"][closing & (state_s > grasp.issued_at_s + 0.01)].all()


def test_a_recording_of_chosen_fields(c):
    recording = c.record(["time", "gripper_width_m", "gripper_command_kind"])
    c.step(10)
    c.gripper.move(0.05)
    c.step(10)
    recording.stop()
    data = recording.data()
    assert list(data) == ["time", "gripper_width_m", "gripper_command_kind"]
    assert len(data["time"]) == 20 and len(data["gripper_width_m"]) == 2  # a state per step()
    assert data["gripper_command_kind"].tolist() == ["move"]
    with pytest.raises(ValueError, match="unknown field"):
        c.record(["gripper_force"])
