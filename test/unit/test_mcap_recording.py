"""Recordings as MCAP (jtac_py.mcap_io): a recording-shaped table of awkward values (NaN payloads,
−0.0, ±inf, the largest int64, two tips, the hand's series) written as .mcap comes back bit for bit; the
ROS 2 channels decode with mcap-ros2-support's reader to the recorded values, in their units, on the
wall clock of the file's metadata; the file passes mcap's CRC validation and its summary indexes every
message; ``jtac convert`` round-trips and ``jtac plot`` reads .mcap. (On a real lockstep recording:
test/loop/test_mcap_lockstep.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import NonSeekingReader, make_reader
from mcap_ros2.decoder import DecoderFactory

from jtac_py import _native
from jtac_py.mcap_io import METADATA_NAME, ClockAnchor, load_mcap, save_mcap
from jtac_py.recording import GRIPPER_RECORD_FIELDS, RECORD_FIELDS, load

REPO = Path(__file__).resolve().parents[2]
JOINTS = [f"fr3_joint{k}" for k in range(1, 8)]
FRAMES = ["fr3_ft_sensor", "fr3_link7"]
ROWS = 50
ANCHOR = ClockAnchor(wall_time_ns=1_700_000_000_123_456_789, controller_time_s=0.5)


def _cycle_table(rows: int = ROWS, tips: int = 2) -> dict[str, np.ndarray]:
    """Every cycle field, with the recording's shapes and dtypes, full of values that test bits."""
    rng = np.random.default_rng(7)
    data = {}
    for name, shape, _doc in _native.CYCLE_FIELDS:
        row_shape = (tips, 6) if len(shape) == 2 else tuple(shape)
        if isinstance(_native.CYCLE_DEFAULTS[name], float | np.ndarray):
            values = rng.normal(size=(rows, *row_shape))
        else:
            values = rng.integers(-(2**62), 2**62, size=(rows, *row_shape), dtype=np.int64)
        data[name] = values
    data["time"] = 0.5 + 1e-3 * np.arange(rows)
    odd = np.array([np.nan, -0.0, np.inf, -np.inf, 5e-324]).view(np.uint64)
    odd[0] |= 0x0000_DEAD_BEEF  # a NaN with a payload
    data["q"][:5, 0] = odd.view(np.float64)
    data["tick"][0] = np.iinfo(np.int64).max
    return data


def _gripper_table() -> dict[str, np.ndarray]:
    return {
        "gripper_time": np.array([0.5, 0.51, 0.52]),
        "gripper_width_m": np.array([0.08, 0.05, 0.0299]),
        "gripper_is_grasped": np.array([False, False, True]),
        "gripper_moving": np.array([False, True, False]),
        "gripper_command_time": np.array([0.505]),
        "gripper_command_kind": np.array(["grasp"], dtype="U5"),
        "gripper_command_width_m": np.array([0.03]),
        "gripper_command_id": np.array([1]),
        "gripper_result_time": np.array([0.53, 0.54]),
        "gripper_result_kind": np.array(["grasp", "home"], dtype="U5"),
        "gripper_result_code": np.array(["SUCCEEDED", ""], dtype="U15"),
        "gripper_result_width_m": np.array([0.0299, np.nan]),
        "gripper_result_id": np.array([1, 2]),
    }


@pytest.fixture
def recorded(tmp_path):
    data = {**_cycle_table(), **_gripper_table()}
    return data, save_mcap(data, tmp_path / "run.mcap", JOINTS, FRAMES, ANCHOR)


def _assert_same_bits(expected: dict, actual: dict) -> None:
    assert list(actual) == list(expected)
    for name, values in expected.items():
        assert actual[name].dtype == values.dtype, name
        assert actual[name].shape == values.shape, name
        assert actual[name].tobytes() == values.tobytes(), name


def test_every_field_comes_back_bit_for_bit(recorded):
    data, path = recorded
    assert set(data) == set(RECORD_FIELDS) | set(GRIPPER_RECORD_FIELDS)
    _assert_same_bits(data, load_mcap(path))
    _assert_same_bits(data, load(path))


def test_a_subset_and_an_empty_recording_come_back(tmp_path):
    table = _cycle_table()
    subset = {name: table[name] for name in ("q", "wrench_raw", "mode")}  # no time: stamped at the anchor
    _assert_same_bits(subset, load_mcap(save_mcap(subset, tmp_path / "subset.mcap", JOINTS, FRAMES, ANCHOR)))
    empty = {name: np.zeros((0,)) for name in RECORD_FIELDS}  # Recording.data() before a cycle
    _assert_same_bits(empty, load_mcap(save_mcap(empty, tmp_path / "empty.mcap", JOINTS, FRAMES, ANCHOR)))


@dataclass
class _Decoded:
    schema: object
    message: object
    ros_msg: object

    @property
    def log_time_ns(self) -> int:
        return self.message.log_time

    @property
    def publish_time_ns(self) -> int:
        return self.message.publish_time


def _messages(path: Path, topic: str) -> list[_Decoded]:
    """A topic's messages decoded by mcap-ros2-support (its DecoderFactory: mcap_ros2.reader's
    read_ros2_messages is deprecated), in log-time order."""
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        return [_Decoded(s, m, d) for s, _c, m, d in reader.iter_decoded_messages(topics=[topic])]


def _stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def test_joint_channels_decode_with_the_ros2_reader(recorded):
    data, path = recorded
    wall_ns = ANCHOR.wall_time_ns + np.round((data["time"] - 0.5) * 1e9).astype(np.int64)
    for topic, (position, velocity) in {
        "/joint_states": ("q", "dq"),
        "/joint_commands": ("q_cmd", "dq_cmd"),
    }.items():
        messages = _messages(path, topic)
        assert len(messages) == ROWS
        assert messages[0].schema.name == "sensor_msgs/msg/JointState"
        for k in (1, ROWS - 1):  # row 0 holds a NaN; rows 1.. finite in q beyond row 4
            msg = messages[k].ros_msg
            assert msg.name == JOINTS and msg.effort == []
            assert msg.position == data[position][k].tolist() or k < 5
            assert msg.velocity == data[velocity][k].tolist()
            assert messages[k].log_time_ns == messages[k].publish_time_ns == _stamp_ns(msg) == wall_ns[k]
    assert wall_ns[1] - wall_ns[0] == 1_000_000  # 1 ms of controller time is 1 ms on the wall clock


def test_controller_state_decodes_with_jtc_fields(recorded):
    data, path = recorded
    messages = _messages(path, "/controller_state")
    assert len(messages) == ROWS
    assert messages[0].schema.name == "control_msgs/msg/JointTrajectoryControllerState"
    k = 10
    msg = messages[k].ros_msg
    assert msg.joint_names == JOINTS
    assert msg.reference.positions == data["q_ref"][k].tolist()
    assert msg.reference.velocities == data["dq_ref"][k].tolist()
    assert msg.feedback.positions == data["q"][k].tolist()
    assert msg.error.positions == data["error"][k].tolist()
    assert msg.error.velocities == (data["dq_ref"][k] - data["dq"][k]).tolist()
    assert msg.output.positions == data["q_cmd"][k].tolist()
    assert msg.speed_scaling_factor == data["time_scale"][k]
    tfs_ns = round(max(data["trajectory_time"][k], 0.0) * 1e9)
    assert msg.output.time_from_start.sec * 1_000_000_000 + msg.output.time_from_start.nanosec == tfs_ns


def test_wrenches_per_tip_in_newtons(recorded):
    data, path = recorded
    for tip, frame in enumerate(FRAMES):
        for suffix, field in (("raw", "raw"), ("filtered", "filtered"), ("compensated", "control")):
            messages = _messages(path, f"/{frame}/wrench_{suffix}")
            assert len(messages) == ROWS
            msg = messages[3].ros_msg
            assert msg.header.frame_id == frame
            force, torque = msg.wrench.force, msg.wrench.torque
            expected = data[f"wrenches_{field}"][3, tip]
            assert [force.x, force.y, force.z, torque.x, torque.y, torque.z] == expected.tolist()


def test_cycle_and_gripper_schemas_carry_units_and_decode(recorded):
    data, path = recorded
    messages = _messages(path, "/jtac/cycle")
    schema = messages[0].schema.data.decode()
    assert "float64[7] q  # measured position [rad]" in schema
    assert "float64[12] wrenches_raw" in schema and "(2 tips, 6) row-major" in schema
    assert "float64 cycle_duration_us  # state read -> command submitted [µs]" in schema
    assert messages[7].ros_msg.tick == data["tick"][7] and messages[7].ros_msg.time == data["time"][7]
    widths = _messages(path, "/gripper/joint_states")
    assert [m.ros_msg.position for m in widths] == [[0.08], [0.05], [0.0299]]
    results = _messages(path, "/jtac/gripper/result")
    assert [m.ros_msg.gripper_result_code for m in results] == ["SUCCEEDED", ""]
    assert "the width when it ended [m]" in results[0].schema.data.decode()


def test_the_metadata_holds_both_clocks_and_the_names(recorded):
    _data, path = recorded
    with path.open("rb") as stream:
        (record,) = [m for m in make_reader(stream).iter_metadata() if m.name == METADATA_NAME]
    meta = record.metadata
    assert int(meta["wall_time_at_start_ns"]) == ANCHOR.wall_time_ns
    assert float(meta["controller_time_at_start_s"]) == 0.5
    assert json.loads(meta["joint_names"]) == JOINTS and json.loads(meta["sensor_frames"]) == FRAMES


def test_the_file_passes_mcap_validation(recorded):
    data, path = recorded
    with path.open("rb") as stream:  # reads every record, checking the data section's and chunks' CRCs
        messages = sum(1 for _ in NonSeekingReader(stream, validate_crcs=True).iter_messages())
    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    stats = summary.statistics
    # 50 rows × (2 joint states, controller state, 3 × 2 wrenches, cycle) + 3 + 1 + 2 hand events + 3 widths
    assert messages == stats.message_count == ROWS * 10 + 9
    assert sum(stats.channel_message_counts.values()) == stats.message_count
    assert sum(chunk.message_index_offsets != {} for chunk in summary.chunk_indexes) == len(
        summary.chunk_indexes
    )
    assert stats.message_start_time == ANCHOR.wall_time_ns
    assert stats.message_end_time == ANCHOR.wall_time_ns + round((data["time"][-1] - 0.5) * 1e9)
    assert {c.topic for c in summary.channels.values()} >= {
        "/joint_states",
        "/controller_state",
        "/jtac/cycle",
    }
    assert all(s.encoding == "ros2msg" for s in summary.schemas.values())


def _jtac(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jtac_py.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def test_convert_round_trips(tmp_path):
    data = {**_cycle_table(), **_gripper_table()}
    np.savez(tmp_path / "run.npz", **data)
    run = _jtac("convert", tmp_path / "run.npz", tmp_path / "run.mcap")
    assert run.returncode == 0, run.stderr
    _assert_same_bits(data, load(tmp_path / "run.mcap"))
    run = _jtac("convert", tmp_path / "run.mcap", tmp_path / "back.npz")
    assert run.returncode == 0, run.stderr
    _assert_same_bits(data, load(tmp_path / "back.npz"))
    with (tmp_path / "run.mcap").open("rb") as stream:
        summary = make_reader(stream).get_summary()
    assert {c.topic for c in summary.channels.values()} >= {"/fr3_ft_sensor/wrench_raw"}
    bad = _jtac("convert", tmp_path / "run.npz", tmp_path / "run.csv")
    assert bad.returncode == 2 and "expected a .npz or .mcap" in bad.stderr


def test_plot_reads_mcap(tmp_path):
    pytest.importorskip("matplotlib")
    data = _cycle_table(tips=1)
    data["q"][:5, 0] = 0.0
    save_mcap(data, tmp_path / "run.mcap", JOINTS, FRAMES[:1], ANCHOR)
    run = _jtac("plot", tmp_path / "run.mcap", "--out", tmp_path / "plots")
    assert run.returncode == 0, run.stderr
    written = [Path(p) for p in run.stdout.split()]
    assert [p.name for p in written] == [
        f"run_{k}.png" for k in ("tracking", "wrench", "deflection", "timing")
    ]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)


def _field(message, path: str):
    """A Foxglove message path's value on a decoded message (".a.b[3]")."""
    value = message
    for part in path.strip(".").split("."):
        name, _, index = part.partition("[")
        value = getattr(value, name)
        if index:
            value = value[int(index.rstrip("]"))]
    return value


def test_the_foxglove_layout_plots_fields_the_demo_records(tmp_path):
    data = _cycle_table(tips=1)
    path = save_mcap(data, tmp_path / "demo.mcap", JOINTS, FRAMES[:1], ANCHOR)
    layout = json.loads((REPO / "docs" / "foxglove_layout.json").read_text())
    panels = layout["configById"]
    assert len(panels) == 4 and all(key.startswith("Plot!") for key in panels)
    placed = json.dumps(layout["layout"])
    checked = 0
    for key, panel in panels.items():
        assert f'"{key}"' in placed
        for series in panel["paths"]:
            topic, _, field = series["value"].partition(".")
            first = _messages(path, topic)[0]
            assert isinstance(_field(first.ros_msg, field), float), series["value"]
            checked += 1
    assert checked == 14 + 6 + 10 + 2
