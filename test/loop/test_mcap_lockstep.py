"""A real lockstep recording saved as MCAP (record(path="run.mcap"), Recording.save): the file holds
what data() gave bit for bit, its ROS 2 channels carry the controller's joint names and sensor frame,
and its timestamps are the controller clock mapped to the wall clock of the recording's start. With the
hand, its series come back too.

Layer: loop with simulated hardware (as test_cycle_record_lockstep.py); the format itself is tested on
hand-made tables in test/unit/test_mcap_recording.py.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from jtac_py.controller import RECORD_FIELDS, Controller, Trajectory
from jtac_py.hardware import SimulatedArm
from jtac_py.mcap_io import METADATA_NAME
from jtac_py.recording import GRIPPER_RECORD_FIELDS, load

CYCLES = 300


def _same_bits(expected: dict, actual: dict) -> None:
    assert list(actual) == list(expected)
    for name, values in expected.items():
        assert actual[name].dtype == values.dtype and actual[name].shape == values.shape, name
        assert actual[name].tobytes() == values.tobytes(), name


def _decoded(path, topic: str) -> list:
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        return [(m, d) for _s, _c, m, d in reader.iter_decoded_messages(topics=[topic])]


def test_a_goal_recorded_to_mcap_comes_back(tmp_path):
    c = Controller(SimulatedArm("fr3", clock="lockstep")).start()
    try:
        c.step(20)
        q0 = c.state.q
        c.follow(Trajectory.quintic(q0, q0 + 0.1, 1.0), wait=False)
        started_wall_ns = time.time_ns()
        started_controller_s = c.state.time
        with c.record(path=tmp_path / "run.mcap") as rec:
            c.step(CYCLES)
    finally:
        c.stop()
    data = rec.data()
    assert rec.rows == CYCLES and set(data) == set(RECORD_FIELDS)
    _same_bits(data, load(tmp_path / "run.mcap"))

    with (tmp_path / "run.mcap").open("rb") as stream:
        (meta,) = [m.metadata for m in make_reader(stream).iter_metadata() if m.name == METADATA_NAME]
    wall0_ns, controller0_s = int(meta["wall_time_at_start_ns"]), float(meta["controller_time_at_start_s"])
    assert controller0_s == started_controller_s
    assert 0 <= wall0_ns - started_wall_ns < 1_000_000_000  # taken when record() was called
    assert json.loads(meta["joint_names"]) == c.joint_names

    states = _decoded(tmp_path / "run.mcap", "/joint_states")
    assert len(states) == CYCLES
    for k in (0, 150, CYCLES - 1):
        message, msg = states[k]
        assert msg.name == c.joint_names
        assert msg.position == data["q"][k].tolist() and msg.velocity == data["dq"][k].tolist()
        expected_ns = wall0_ns + round((data["time"][k] - controller0_s) * 1e9)
        assert message.log_time == expected_ns
    wrenches = _decoded(tmp_path / "run.mcap", f"/{c.sensor_frames[0]}/wrench_raw")
    assert [w.wrench.force.z for _m, w in wrenches] == data["wrench_raw"][:, 2].tolist()
    reference = _decoded(tmp_path / "run.mcap", "/controller_state")
    assert np.array([r.reference.positions for _m, r in reference]).tobytes() == data["q_ref"].tobytes()


def test_the_hands_series_come_back(tmp_path):
    c = Controller(SimulatedArm("fr3", clock="lockstep", hand=True)).start()
    try:
        with c.record() as rec:
            handle = c.gripper.move(0.06, 0.1)
            for _ in range(400):
                c.step(1)
                if handle.done():
                    break
    finally:
        c.stop()
    assert handle.result(0).success
    path = rec.save(tmp_path / "hand.mcap")
    data = rec.data()
    assert set(GRIPPER_RECORD_FIELDS) <= set(data) and len(data["gripper_time"]) > 100
    _same_bits(data, load(path))
    widths = _decoded(path, "/gripper/joint_states")
    assert [w.position[0] for _m, w in widths] == pytest.approx(data["gripper_width_m"].tolist(), abs=0)
