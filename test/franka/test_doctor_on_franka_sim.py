"""``jtac doctor --robot-ip`` against franka-sim: the compatibility line's handshake and the read-only
state-stream measurement, with the robot-side probe proving that no motion was ever started."""

from __future__ import annotations

import re

import pytest

from jtac_py import doctor
from jtac_py.doctor import compat

pytestmark = pytest.mark.franka_sim(probe=True)
SECONDS = 2.0
# Events a motion would leave in the probe: a Move asked for or started, a command datagram answered.
MOTION_EVENTS = {"move_received", "move_accepted", "move_refused", "command", "motion_end"}


def _received_versions(log_text: str) -> list[int]:
    """The protocol versions clients sent in their Connect, as franka-sim logged them."""
    return [int(v) for v in re.findall(r"Received version: (\d+)", log_text)]


def test_doctor_reads_the_state_stream_and_the_robot_stays_idle(franka_sim):
    pytest.importorskip("pylibfranka")
    report = doctor.run(franka_sim.ip, SECONDS)
    stream = report.check("state stream")
    data = stream.data
    assert stream.verdict in ("ok", "warn"), stream  # warn: this shared VM may delay the reader
    assert (data["robot_mode_before"], data["robot_mode_after"]) == ("Idle", "Idle")
    # About one state per ms of the robot's clock: received or counted lost.
    assert 0.8 * SECONDS * 1000 <= data["states"] + data["lost_states"] <= SECONDS * 1000 + 50
    assert 900 <= data["interval_median_us"] <= 1100
    assert f"{data['states']} states in {SECONDS:g} s, {data['lost_states']} lost" in stream.value
    assert f"jitter p99 {data['jitter_p99_us']:.0f} µs" in stream.value and "no motion" in stream.value
    events = franka_sim.probe_events()
    kinds = {e.event for e in events}
    assert not kinds & MOTION_EVENTS, sorted(kinds & MOTION_EVENTS)
    assert sum(e.event == "state" for e in events) >= data["states"]
    # Two sessions: the compatibility line's handshake, then pylibfranka's read-only connection.
    assert sum(e.event == "session_start" for e in events) == 2


def test_compatibility_line_gets_the_server_version_libfranka_expects(franka_sim):
    pylibfranka = pytest.importorskip("pylibfranka")
    line = doctor.check_compatibility(franka_sim.ip)
    assert line.verdict == "ok", line
    assert line.data["server_version"] == compat.LIBFRANKA_PROTOCOL_VERSION
    assert f"robot server version {compat.LIBFRANKA_PROTOCOL_VERSION}" in line.value
    # pylibfranka's own Connect names the version this module claims libfranka speaks.
    robot = pylibfranka.Robot(franka_sim.ip, pylibfranka.RealtimeConfig.kIgnore)
    assert robot.read_once().robot_mode == pylibfranka.RobotMode.Idle
    del robot
    assert franka_sim.wait_no_clients(2.0)
    versions = _received_versions(franka_sim.log_path.read_text())
    assert versions == [compat.LIBFRANKA_PROTOCOL_VERSION] * 2, versions  # ours, then libfranka's
    assert not {e.event for e in franka_sim.probe_events()} & MOTION_EVENTS


@pytest.mark.franka_sim(probe=True, faults="state_loss=2% seed=3")
def test_lost_states_are_the_states_the_link_dropped(franka_sim):
    """franka-sim's fault injector drops 2 % of the states: the line counts each as a step of the robot's
    clock (RobotState.time is the state's message_id in ms)."""
    pytest.importorskip("pylibfranka")
    line = doctor.check_state_stream(franka_sim.ip, SECONDS)
    data = line.data
    events = franka_sim.probe_events()
    session_t_ns = next(e.t_ns for e in events if e.event == "session_start")
    dropped = [
        e
        for e in events
        if e.event == "dropped" and e.direction == "state" and e.t_ns > session_t_ns
        if data["first_robot_time_ms"] < e.message_id < data["last_robot_time_ms"]
    ]
    assert len(dropped) >= 0.01 * data["states"], len(dropped)
    # Every drop is counted; beyond them only states this reader was too late for (libfranka hands over
    # the newest), a few at most.
    assert len(dropped) <= data["lost_states"] <= len(dropped) + max(5, data["states"] // 200), (
        len(dropped),
        data,
    )
    assert line.verdict == "fail" and f"{data['lost_states']} lost" in line.value  # over 1 % lost
    assert "robot route" in line.fix
    assert not {e.event for e in events} & MOTION_EVENTS
