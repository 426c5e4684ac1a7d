"""A recording's controller events in its .mcap (/jtac/events, rcl_interfaces/msg/Log on the recording's
clock) and a .mcap streamed to disk in chunks while the recording runs (record(path=..., chunk_rows=)).

Layer: loop with simulated hardware in lockstep (as test_mcap_lockstep.py); the events are decoded with
mcap-ros2-support's reader, the streamed rows compared with an in-memory recording of the same cycles.
"""

from __future__ import annotations

import json
import time

import numpy as np
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from jtac_py.controller import RECORD_FIELDS, Controller, Trajectory
from jtac_py.hardware import SimulatedArm
from jtac_py.mcap_io import METADATA_NAME
from jtac_py.recording import LOG_LEVELS, load

CHUNK_ROWS = 100
STREAMED_CYCLES = 450  # four full chunks and a last one of 50 rows


def _events(path) -> list:
    """(log_time [ns], Log) of every /jtac/events message, in time order."""
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        return [(m.log_time, d) for _s, _c, m, d in reader.iter_decoded_messages(topics=["/jtac/events"])]


def _clock(path) -> tuple[int, float]:
    """(wall_time_at_start_ns, controller_time_at_start_s) of a jtac .mcap."""
    with path.open("rb") as stream:
        (meta,) = [m.metadata for m in make_reader(stream).iter_metadata() if m.name == METADATA_NAME]
    return int(meta["wall_time_at_start_ns"]), float(meta["controller_time_at_start_s"])


def _wall_ns(path, time_s: float) -> int:
    wall0_ns, controller0_s = _clock(path)
    return wall0_ns + round((time_s - controller0_s) * 1e9)


def _run_goal(controller: Controller, duration_s: float) -> object:
    q0 = controller.state.q_cmd
    handle = controller.follow(Trajectory.quintic(q0, q0 + 0.05, duration_s), wait=False)
    for _ in range(5000):
        controller.step(1)
        if handle.done():
            return handle.result(0)
    raise AssertionError("the goal did not end in 5 s of controller time")


def test_a_goals_start_and_success_are_logged_at_their_times(tmp_path):
    path = tmp_path / "goal.mcap"
    c = Controller(SimulatedArm("fr3", clock="lockstep")).start()
    try:
        c.step(20)
        with c.record(path=path) as rec:
            result = _run_goal(c, 0.5)
            c.step(10)
    finally:
        c.stop()
    assert result.ok
    logged = _events(path)
    prefix = f"goal {result.goal_id}"
    (started,) = [(t, m) for t, m in logged if m.msg.startswith(f"GOAL_STARTED {prefix}:")]
    (succeeded,) = [(t, m) for t, m in logged if m.msg.startswith(f"GOAL_SUCCEEDED {prefix}:")]
    assert started[0] == _wall_ns(path, result.start_time_s)
    assert succeeded[0] == _wall_ns(path, result.end_time_s)
    assert succeeded[1].msg == f"GOAL_SUCCEEDED {prefix}: {result.message}"
    assert started[1].level == succeeded[1].level == LOG_LEVELS["INFO"]
    assert succeeded[1].name == "jtac"
    stamp_ns = succeeded[1].stamp.sec * 1_000_000_000 + succeeded[1].stamp.nanosec
    assert stamp_ns == succeeded[0]
    assert 0.4 < (succeeded[0] - started[0]) * 1e-9 < 0.7  # the 0.5 s trajectory, then settling
    assert rec.events == []  # all written


def test_a_canceled_goal_is_logged_as_a_warning_in_a_saved_recording(tmp_path):
    c = Controller(SimulatedArm("fr3", clock="lockstep")).start()
    try:
        c.step(20)
        with c.record() as rec:
            q0 = c.state.q
            handle = c.follow(Trajectory.quintic(q0, q0 + 0.1, 2.0), wait=False)
            c.step(200)
            handle.cancel()
            c.step(600)
    finally:
        c.stop()
    result = handle.result(0)
    assert result.canceled
    path = rec.save(tmp_path / "canceled.mcap")
    (canceled,) = [(t, m) for t, m in _events(path) if m.msg.startswith("GOAL_CANCELED")]
    assert canceled[1].level == LOG_LEVELS["WARN"]
    assert canceled[0] == _wall_ns(path, result.end_time_s)
    assert [e.text for e in rec.events if e.text.startswith("GOAL_CANCELED")] == [canceled[1].msg]


def test_a_streamed_recording_reads_back_bit_for_bit_and_holds_one_chunk(tmp_path):
    path = tmp_path / "streamed.mcap"
    c = Controller(SimulatedArm("fr3", clock="lockstep")).start()
    try:
        c.step(20)
        q0 = c.state.q
        c.follow(Trajectory.quintic(q0, q0 + 0.1, 1.0), wait=False)
        with c.record() as in_memory, c.record(path=path, chunk_rows=CHUNK_ROWS) as streamed:
            for cycle in range(STREAMED_CYCLES):
                c.step(1)
                if cycle == 250:  # two chunks handed to the MCAP writer, 51 rows held
                    assert streamed._stream.rows_written == 2 * CHUNK_ROWS and streamed.rows == cycle + 1
    finally:
        c.stop()
    assert streamed.peak_rows_in_memory == CHUNK_ROWS
    assert streamed._stream.chunks_written == 5 and streamed._stream.rows_written == STREAMED_CYCLES
    expected = in_memory.data()
    assert len(expected["time"]) == STREAMED_CYCLES
    actual = load(path)
    assert list(actual) == list(RECORD_FIELDS)
    for name, values in expected.items():
        assert actual[name].dtype == values.dtype and actual[name].shape == values.shape, name
        assert actual[name].tobytes() == values.tobytes(), name
    assert streamed.data()["q"].tobytes() == expected["q"].tobytes()
    wall0_ns, controller0_s = _clock(path)
    assert controller0_s <= float(expected["time"][0])  # the controller time when record() was called
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        (meta,) = [m.metadata for m in reader.iter_metadata() if m.name == METADATA_NAME]
        states = [m for _s, _c, m in reader.iter_messages(topics=["/joint_states"])]
    assert [name for name, _dtype, _shape in json.loads(meta["columns"])] == list(RECORD_FIELDS)
    assert [m.sequence for m in states] == list(range(STREAMED_CYCLES))
    expected_ns = wall0_ns + np.round((expected["time"] - controller0_s) * 1e9).astype(np.int64)
    assert [m.log_time for m in states] == expected_ns.tolist()


def test_a_real_time_recording_streams_from_the_pump_thread(tmp_path):
    path = tmp_path / "realtime.mcap"
    c = Controller(SimulatedArm("fr3", clock="realtime")).start()
    try:
        time.sleep(0.1)
        with c.record(["time", "q", "q_cmd"], path=path, chunk_rows=CHUNK_ROWS) as streamed:
            deadline_s = time.monotonic() + 10.0  # liveness only: 0.3 s of cycles, however loaded
            while streamed._stream is None or streamed._stream.chunks_written < 3:
                assert time.monotonic() < deadline_s, "the pump thread wrote no chunks"
                time.sleep(0.01)
    finally:
        c.stop()
    data = load(path)
    assert len(data["time"]) == streamed.rows >= 3 * CHUNK_ROWS and streamed.dropped == 0
    # Every recorded cycle once, in order (a controller cycle that ran late under load takes the
    # newest state and skips a robot tick: a 2 ms step here is the loop's, not the recording's).
    assert np.all(np.diff(data["time"]) > 0.0)
    # Streamed: never all of it in memory. How many rows wait for the pump depends on how late the
    # pump thread runs (load); the bound of one chunk is asserted in lockstep above.
    assert streamed.peak_rows_in_memory < streamed.rows


def test_a_per_goal_recording_writes_each_goals_cycles_and_events_to_its_own_file(tmp_path):
    c = Controller(SimulatedArm("fr3", clock="lockstep")).start()
    try:
        c.step(20)
        with c.record() as in_memory, c.record(path=tmp_path, chunk_rows=CHUNK_ROWS, per_goal=True) as rec:
            first = _run_goal(c, 0.3)
            c.step(50)  # at rest between the goals
            second = _run_goal(c, 0.2)
            c.step(30)
    finally:
        c.stop()
    assert first.ok and second.ok
    expected = in_memory.data()
    names = [f"goal_{first.goal_id}.mcap", f"goal_{second.goal_id}.mcap"]
    assert [p.name for p in rec.files] == names and sorted(p.name for p in tmp_path.iterdir()) == names
    for result, name in zip((first, second), names, strict=True):
        rows = expected["goal_id"] == result.goal_id
        assert rows.sum() == round((result.end_time_s - result.start_time_s) / 0.001)  # one row per cycle
        loaded = load(tmp_path / name)
        for field in RECORD_FIELDS:
            assert loaded[field].tobytes() == expected[field][rows].tobytes(), (name, field)
        logged = [m.msg.split(":")[0] for _t, m in _events(tmp_path / name)]
        assert logged == [f"GOAL_STARTED goal {result.goal_id}", f"GOAL_SUCCEEDED goal {result.goal_id}"]
