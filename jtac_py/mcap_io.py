"""A recording as an MCAP file with ROS 2 schemas (ros2msg, CDR), written and read without ROS.

Channels (docs/python_api.md, "Recordings as MCAP"):

- ``/joint_states`` sensor_msgs/msg/JointState: measured q [rad], dq [rad/s] (no effort: not recorded);
- ``/joint_commands`` sensor_msgs/msg/JointState: q_cmd [rad], dq_cmd [rad/s];
- ``/controller_state`` control_msgs/msg/JointTrajectoryControllerState (Jazzy): reference (q_ref,
  dq_ref), feedback (q, dq), error (error, dq_ref − dq), output (q_cmd, dq_cmd), time_from_start =
  trajectory_time, speed_scaling_factor = time_scale;
- ``/<sensor_frame>/wrench_raw``, ``_filtered``, ``_compensated`` geometry_msgs/msg/WrenchStamped per
  tip [N, N·m] (raw and filtered in the sensor frame, compensated in the control frame; frame_id is the
  tip's sensor frame);
- ``/jtac/cycle`` jtac/msg/CycleRecord: every recorded field of the cycle record, bit for bit, with
  its unit in the schema's comments;
- ``/jtac/events`` rcl_interfaces/msg/Log: the controller's events (goal started, succeeded, aborted,
  canceled, a stop started, a tare's outcome), name "jtac", msg "<EVENT_TYPE> goal <id>: <text>" with
  the text the goal's result carries (no goal: "<EVENT_TYPE>: <text>");
- the hand's series, when recorded: ``/jtac/gripper/state``, ``/jtac/gripper/command``,
  ``/jtac/gripper/result`` (jtac/msg/GripperState, GripperCommand, GripperResult: the recorded columns
  of each table) and ``/gripper/joint_states`` (a JointState "finger_width" [m], for viewers).

One clock: every message's log_time, publish_time and header.stamp is the row's controller time mapped
to wall time, ``wall_time_at_start_ns + (time − controller_time_at_start_s)·1e9``; both numbers are in
the ``jtac_recording`` metadata record, with the joint names, sensor frames and recorded columns.
``McapStream`` writes the same file in chunks while a recording runs (``record(path="run.mcap")``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mcap.reader import make_reader
from mcap.writer import CompressionType, Writer

from jtac_py.cdr_layout import CdrLayout
from jtac_py.recording import (
    _GRIPPER_SERIES,
    CYCLE_FIELD_DOCS,
    GRIPPER_FIELD_DOCS,
    RECORD_FIELDS,
    LogEvent,
)
from jtac_py.ros2_schemas import schema_text, table_definition

__all__ = [
    "GROUP_METADATA_NAME",
    "METADATA_NAME",
    "ClockAnchor",
    "McapStream",
    "load_group_mcap",
    "load_mcap",
    "save_mcap",
]

#: The metadata record that describes the recording.
METADATA_NAME = "jtac_recording"
_FORMAT = "jtac recording mcap 1"
#: The metadata record of an ArmGroup's recording.
GROUP_METADATA_NAME = "jtac_group"
_WRENCH_TOPICS = {"raw": "wrench_raw", "filtered": "wrench_filtered", "control": "wrench_compensated"}
#: The hand's tables: message name, topic, the table's time column.
_GRIPPER_TABLES = {
    "state": ("jtac/msg/GripperState", "/jtac/gripper/state", "gripper_time"),
    "command": ("jtac/msg/GripperCommand", "/jtac/gripper/command", "gripper_command_time"),
    "result": ("jtac/msg/GripperResult", "/jtac/gripper/result", "gripper_result_time"),
}
_ROS_TYPE_OF_KIND = {"f": "float64", "i": "int64", "u": "int64", "b": "bool", "U": "string"}


@dataclass(frozen=True)
class ClockAnchor:
    """Controller time mapped to wall time: `controller_time_s` happened at `wall_time_ns` (Unix)."""

    wall_time_ns: int
    controller_time_s: float

    def wall_ns(self, time_s: np.ndarray) -> np.ndarray:
        """Wall time [ns since the Unix epoch] of controller times [s]."""
        offset_ns = np.round((np.asarray(time_s, dtype=float) - self.controller_time_s) * 1e9)
        return self.wall_time_ns + offset_ns.astype(np.int64)


def _stamp_columns(wall_ns: np.ndarray) -> dict[str, np.ndarray]:
    return {"sec": wall_ns // 1_000_000_000, "nanosec": wall_ns % 1_000_000_000}


def _header(layout: CdrLayout, frame_id: str) -> CdrLayout:
    return layout.int32("sec").uint32("nanosec").string(frame_id)


def _joint_state_layout(joint_names: Sequence[str], with_velocity: bool = True) -> CdrLayout:
    n = len(joint_names)
    layout = _header(CdrLayout(), "").strings(joint_names).float64_sequence("position", n)
    return layout.float64_sequence("velocity", n if with_velocity else 0).float64_sequence("effort", 0)


def _point(layout: CdrLayout, prefix: str, n: int) -> None:
    layout.float64_sequence(f"{prefix}_positions", n).float64_sequence(f"{prefix}_velocities", n)
    layout.float64_sequence("_accelerations", 0).float64_sequence("_effort", 0)
    layout.int32(f"{prefix}_tfs_sec").uint32(f"{prefix}_tfs_nanosec")


def _controller_state_layout(joint_names: Sequence[str]) -> CdrLayout:
    layout = _header(CdrLayout(), "").strings(joint_names)
    for prefix in ("reference", "feedback", "error", "output"):
        _point(layout, prefix, len(joint_names))
    layout.strings([])
    for _ in range(4):  # the multi-DOF points: empty, time_from_start 0
        layout.sequence_length(0).sequence_length(0).sequence_length(0).int32("_zero").uint32("_zero")
    return layout.float64("speed_scaling_factor")


def _wrench_layout(frame_id: str) -> CdrLayout:
    return _header(CdrLayout(), frame_id).float64("force", 3).float64("torque", 3)


def _controller_state_columns(data: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    tfs_ns = np.round(np.maximum(data["trajectory_time"], 0.0) * 1e9).astype(np.int64)
    columns = {"speed_scaling_factor": data["time_scale"]}
    points = {
        "reference": (data["q_ref"], data["dq_ref"]),
        "feedback": (data["q"], data["dq"]),
        "error": (data["error"], data["dq_ref"] - data["dq"]),
        "output": (data["q_cmd"], data["dq_cmd"]),
    }
    for prefix, (positions, velocities) in points.items():
        columns[f"{prefix}_positions"], columns[f"{prefix}_velocities"] = positions, velocities
        columns[f"{prefix}_tfs_sec"] = tfs_ns // 1_000_000_000
        columns[f"{prefix}_tfs_nanosec"] = tfs_ns % 1_000_000_000
    return columns


def _tip_wrenches(data: Mapping[str, np.ndarray], kind: str) -> np.ndarray | None:
    """(rows, tips, 6) of one wrench kind, from wrenches_* or tip 0's wrench_*; None when unrecorded."""
    if f"wrenches_{kind}" in data:
        return data[f"wrenches_{kind}"]
    if f"wrench_{kind}" in data:
        return data[f"wrench_{kind}"][:, None, :]
    return None


@dataclass
class _Channel:
    """One topic: its schema, layout and per-row columns (encoded on demand)."""

    topic: str
    schema: str
    layout: CdrLayout
    columns: dict[str, np.ndarray]


def _names(given: Sequence[str], count: int, stem: str) -> list[str]:
    """`count` names: the given ones, then stem0, stem1 ... for those missing."""
    return [given[k] if k < len(given) else f"{stem}{k}" for k in range(count)]


def _standard_channels(
    data: Mapping[str, np.ndarray], joint_names: Sequence[str], sensor_frames: Sequence[str], stamp: dict
) -> list[_Channel]:
    """The ROS 2 channels whose fields were recorded (joints and tips without a name get joint<k>,
    tip<k>)."""
    joints = next((data[f].shape[1] for f in ("q", "q_cmd", "q_ref") if f in data), len(joint_names))
    tips = max((data[f].shape[1] for f in data if f.startswith("wrenches_")), default=1)
    return _joint_channels(data, _names(joint_names, joints, "joint"), stamp) + _wrench_channels(
        data, _names(sensor_frames, tips, "tip"), stamp
    )


def _joint_channels(
    data: Mapping[str, np.ndarray], joint_names: Sequence[str], stamp: dict
) -> list[_Channel]:
    """/joint_states, /joint_commands and /controller_state, those whose fields were recorded."""
    channels = []
    has = set(data)
    if {"q", "dq"} <= has:
        columns = {"position": data["q"], "velocity": data["dq"], **stamp}
        layout = _joint_state_layout(joint_names)
        channels.append(_Channel("/joint_states", "sensor_msgs/msg/JointState", layout, columns))
    if {"q_cmd", "dq_cmd"} <= has:
        columns = {"position": data["q_cmd"], "velocity": data["dq_cmd"], **stamp}
        layout = _joint_state_layout(joint_names)
        channels.append(_Channel("/joint_commands", "sensor_msgs/msg/JointState", layout, columns))
    needed = {"q", "dq", "q_ref", "dq_ref", "error", "q_cmd", "dq_cmd", "trajectory_time", "time_scale"}
    if needed <= has:
        columns = {**_controller_state_columns(data), **stamp}
        schema = "control_msgs/msg/JointTrajectoryControllerState"
        channels.append(_Channel("/controller_state", schema, _controller_state_layout(joint_names), columns))
    return channels


def _wrench_channels(
    data: Mapping[str, np.ndarray], sensor_frames: Sequence[str], stamp: dict
) -> list[_Channel]:
    """/<sensor_frame>/wrench_raw, _filtered, _compensated per tip, those recorded."""
    channels = []
    for kind, suffix in _WRENCH_TOPICS.items():
        wrenches = _tip_wrenches(data, kind)
        for tip in range(0 if wrenches is None else wrenches.shape[1]):
            frame = sensor_frames[tip]
            columns = {"force": wrenches[:, tip, :3], "torque": wrenches[:, tip, 3:], **stamp}
            schema = "geometry_msgs/msg/WrenchStamped"
            channels.append(_Channel(f"/{frame}/{suffix}", schema, _wrench_layout(frame), columns))
    return channels


def _cycle_columns(data: Mapping[str, np.ndarray]) -> list[tuple[str, np.dtype, tuple[int, ...]]]:
    """The recorded cycle fields: (name, dtype, shape of one row), in the native table's order."""
    return [(f, data[f].dtype, data[f].shape[1:]) for f in RECORD_FIELDS if f in data]


def _table_layout(columns: Sequence[tuple[str, np.dtype, tuple[int, ...]]]) -> CdrLayout:
    """A table of 8-byte numbers (the cycle record): float64 / int64 arrays, no padding."""
    layout = CdrLayout()
    for name, dtype, shape in columns:
        count = int(np.prod(shape, dtype=int))
        if dtype.kind == "f":
            layout.float64(name, count)
        else:
            layout.int64(name, count)
    return layout


def _ros_field_type(dtype: np.dtype, shape: tuple[int, ...]) -> str:
    """A cycle column's ros2msg type, as _table_layout writes it (8-byte numbers)."""
    base = "float64" if dtype.kind == "f" else "int64"
    count = int(np.prod(shape, dtype=int))
    return f"{base}[{count}]" if shape else base


def _cycle_definition(columns: Sequence[tuple[str, np.dtype, tuple[int, ...]]]) -> str:
    fields = []
    for name, dtype, shape in columns:
        doc = CYCLE_FIELD_DOCS[name]
        if len(shape) == 2:
            doc += f"; ({shape[0]} tips, 6) row-major"
        fields.append((name, _ros_field_type(dtype, shape), doc))
    return table_definition("jtac controller cycle record (jtac_loop CycleRecord), one per cycle", fields)


def _cycle_channel(data: Mapping[str, np.ndarray], stamp: dict) -> tuple[_Channel, dict[str, str]]:
    columns = _cycle_columns(data)
    definition = {"jtac/msg/CycleRecord": _cycle_definition(columns)}
    channel = _Channel("/jtac/cycle", "jtac/msg/CycleRecord", _table_layout(columns), dict(data))
    return channel, definition


def _gripper_row_layout(row: Mapping[str, object], fields: Sequence[str]) -> CdrLayout:
    """One event's layout: its strings are constants of this row."""
    layout = CdrLayout()
    for name in fields:
        kind = np.dtype(_GRIPPER_SERIES[name][0]).kind
        if kind == "U":
            layout.string(str(row[name]))
        elif kind == "b":
            layout.boolean(name)
        elif kind == "f":
            layout.float64(name)
        else:
            layout.int64(name)
    return layout


def _gripper_definition(title: str, fields: Sequence[str]) -> str:
    typed = [
        (f, _ROS_TYPE_OF_KIND[np.dtype(_GRIPPER_SERIES[f][0]).kind], GRIPPER_FIELD_DOCS[f]) for f in fields
    ]
    return table_definition(title, typed)


def _gripper_tables(data: Mapping[str, np.ndarray]) -> dict[str, list[str]]:
    """The recorded columns of each hand table: {"state": [...], "command": [...], "result": [...]}."""
    tables: dict[str, list[str]] = {}
    for name in _GRIPPER_SERIES:
        if name in data:
            kind = "command" if "_command_" in name else "result" if "_result_" in name else "state"
            tables.setdefault(kind, []).append(name)
    return tables


@dataclass
class _Message:
    log_time_ns: int
    channel_id: int
    payload: bytes


def _gripper_messages(writer: Writer, data: Mapping[str, np.ndarray], anchor: ClockAnchor) -> list[_Message]:
    """The hand's events (jtac tables) and finger width (JointState), registered on `writer`."""
    messages: list[_Message] = []
    for kind, fields in _gripper_tables(data).items():
        message, topic, time_column = _GRIPPER_TABLES[kind]
        text = schema_text(message, {message: _gripper_definition(f"the hand's {kind} series", fields)})
        channel_id = _register(writer, topic, message, text)
        rows = len(data[fields[0]])
        times = data[time_column] if time_column in data else np.full(rows, anchor.controller_time_s)
        wall = anchor.wall_ns(times)
        for k in range(rows):
            row = {f: data[f][k] for f in fields}
            payload = _gripper_row_layout(row, fields).encode({f: np.array([row[f]]) for f in fields}, 1)[0]
            messages.append(_Message(int(wall[k]), channel_id, payload))
    if {"gripper_time", "gripper_width_m"} <= set(data):
        wall = anchor.wall_ns(data["gripper_time"])
        layout = _joint_state_layout(["finger_width"], with_velocity=False)
        channel_id = _register(writer, "/gripper/joint_states", "sensor_msgs/msg/JointState")
        columns = {"position": data["gripper_width_m"], **_stamp_columns(wall)}
        payloads = layout.encode(columns, len(wall))
        messages += [_Message(int(t), channel_id, p) for t, p in zip(wall, payloads, strict=True)]
    return messages


def _register(writer: Writer, topic: str, message: str, text: str | None = None) -> int:
    text = schema_text(message) if text is None else text
    schema_id = writer.register_schema(name=message, encoding="ros2msg", data=text.encode())
    return writer.register_channel(topic=topic, message_encoding="cdr", schema_id=schema_id)


def _metadata(columns: list, names: dict[str, Sequence[str]], anchor: ClockAnchor) -> dict:
    """The jtac_recording record; columns: [name, dtype, shape of one row] in data()'s order."""
    return {
        "format": _FORMAT,
        "columns": json.dumps(columns),
        "joint_names": json.dumps(list(names["joint_names"])),
        "sensor_frames": json.dumps(list(names["sensor_frames"])),
        "wall_time_at_start_ns": str(anchor.wall_time_ns),
        "controller_time_at_start_s": repr(float(anchor.controller_time_s)),
        "clock": "log_time [ns] = wall_time_at_start_ns + (time - controller_time_at_start_s) * 1e9",
    }


def save_mcap(
    data: Mapping[str, np.ndarray],
    path: str | Path,
    joint_names: Sequence[str],
    sensor_frames: Sequence[str],
    anchor: ClockAnchor | None = None,
    events: Sequence[LogEvent] = (),
) -> Path:
    """Writes a recording's {field: array} (Recording.data()) and its events (``/jtac/events``) as
    MCAP; anchor: now at the first row when None. Returns the path."""
    cycle_data = {f: v for f, v in data.items() if f in RECORD_FIELDS}
    if anchor is None:
        has_time = "time" in data and len(data["time"])
        anchor = ClockAnchor(time.time_ns(), float(data["time"][0]) if has_time else 0.0)
    stream = McapStream(path, joint_names, sensor_frames, anchor)
    stream.write_cycles(cycle_data)
    stream.write_events(events)
    stream.finish({f: v for f, v in data.items() if f not in RECORD_FIELDS}, list(data))
    return stream.path


def _log_layout(event: LogEvent) -> CdrLayout:
    """rcl_interfaces/msg/Log with this event's strings (file and function empty, line 0)."""
    layout = CdrLayout().int32("sec").uint32("nanosec").boolean("level")
    return layout.string(event.name).string(event.text).string("").string("").uint32("line")


class McapStream:
    """A recording's MCAP file written as it grows: cycles and events in chunks of rows (each chunk
    encoded at once), the hand's series and the metadata at finish(). Not for a real-time thread: a
    chunk of n rows takes about n · 40 µs to encode and write."""

    def __init__(
        self, path: str | Path, joint_names: Sequence[str], sensor_frames: Sequence[str], anchor: ClockAnchor
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.anchor = anchor
        self._names = {"joint_names": joint_names, "sensor_frames": sensor_frames}
        self._file = self.path.open("wb")
        self._writer = Writer(self._file, compression=CompressionType.ZSTD, enable_data_crcs=True)
        self._writer.start(profile="ros2", library="jtac_py.mcap_io")
        self._channel_ids: dict[str, int] = {}
        self._specs: dict[
            tuple[str, str], tuple[str, list[int]]
        ] = {}  # (prefix, field) -> (dtype, row shape)
        self._sequences: dict[str, int] = {}  # prefix -> the next row's sequence number
        self.rows_written = 0
        #: write_cycles calls that wrote rows
        self.chunks_written = 0
        self.events_written = 0

    def _channel_id(self, channel: _Channel, definition: dict[str, str] | None = None) -> int:
        if channel.topic not in self._channel_ids:
            text = schema_text(channel.schema, definition)
            self._channel_ids[channel.topic] = _register(self._writer, channel.topic, channel.schema, text)
        return self._channel_ids[channel.topic]

    def write_cycles(
        self,
        data: Mapping[str, np.ndarray],
        prefix: str = "",
        names: Mapping[str, Sequence[str]] | None = None,
        times_s: np.ndarray | None = None,
    ) -> None:
        """One chunk of cycle rows (fields of RECORD_FIELDS, the same in every chunk), row by row
        (interleaved by time). An arm of a group: its topics under `prefix` ("/left/joint_states"),
        its joint names and sensor frames `names`, its rows' times on the file's clock `times_s` [s]
        (default: the time column)."""
        rows = next((len(v) for v in data.values()), 0)
        if rows == 0:
            return
        names = self._names if names is None else names
        for name, values in data.items():
            self._specs.setdefault((prefix, name), (values.dtype.str, list(values.shape[1:])))
        if times_s is None:
            times_s = data["time"] if "time" in data else np.full(rows, self.anchor.controller_time_s)
        wall = self.anchor.wall_ns(times_s)
        stamp = _stamp_columns(wall)
        channels = _standard_channels(data, names["joint_names"], names["sensor_frames"], stamp)
        cycle, definition = _cycle_channel(data, stamp)
        for channel in [*channels, cycle]:
            channel.topic = prefix + channel.topic
        ids = [self._channel_id(c) for c in channels] + [self._channel_id(cycle, definition)]
        payloads = [c.layout.encode(c.columns, rows) for c in [*channels, cycle]]
        log_times = wall.tolist()
        first = self._sequences.get(prefix, 0)
        for k in range(rows):
            for channel_id, encoded in zip(ids, payloads, strict=True):
                self._writer.add_message(
                    channel_id, log_times[k], encoded[k], log_times[k], sequence=first + k
                )
        self._sequences[prefix] = first + rows
        self.rows_written += rows
        self.chunks_written += 1

    def write_events(self, events: Sequence[LogEvent], prefix: str = "") -> None:
        """Controller events as rcl_interfaces/msg/Log on /jtac/events (an arm of a group: under
        `prefix`, its events' times already on the file's clock)."""
        if not events:
            return
        channel = _Channel(f"{prefix}/jtac/events", "rcl_interfaces/msg/Log", CdrLayout(), {})
        channel_id = self._channel_id(channel)
        wall = self.anchor.wall_ns(np.array([e.time_s for e in events]))
        for event, wall_ns in zip(events, wall.tolist(), strict=True):
            columns = {**_stamp_columns(np.array([wall_ns])), "level": np.array([event.level])}
            payload = _log_layout(event).encode(columns, 1)[0]
            self._writer.add_message(channel_id, wall_ns, payload, wall_ns, sequence=self.events_written)
            self.events_written += 1

    def finish(self, other: Mapping[str, np.ndarray], order: Sequence[str]) -> None:
        """The hand's series (`other`), the metadata (columns in `order`; a cycle field never written
        is an empty float64 column, as Recording.data() gives it) and the summary; closes the file."""
        for message in _gripper_messages(self._writer, other, self.anchor):  # table by table, in order
            self._writer.add_message(
                message.channel_id, message.log_time_ns, message.payload, message.log_time_ns
            )
        self.write_metadata(order, other)
        self.close()

    def write_metadata(
        self,
        order: Sequence[str],
        other: Mapping[str, np.ndarray] | None = None,
        prefix: str = "",
        names: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """The jtac_recording metadata of the rows under `prefix` (an arm of a group:
        "jtac_recording/left"); columns in `order`, `other`'s from their arrays."""
        other = {} if other is None else other
        specs = {f: spec for (p, f), spec in self._specs.items() if p == prefix}
        specs.update({f: (v.dtype.str, list(v.shape[1:])) for f, v in other.items()})
        columns = [[f, *specs.get(f, ("<f8", []))] for f in order]
        names = self._names if names is None else names
        self._writer.add_metadata(METADATA_NAME + prefix, _metadata(columns, names, self.anchor))

    def write_group(self, arms: Sequence[str], time_column: str) -> None:
        """The jtac_group metadata of a group's file: its arms (each under /<arm>, with its own
        jtac_recording/<arm>) and the column the group clock's times came from."""
        fields = {"format": _FORMAT, "arms": json.dumps(list(arms)), "group_time_column": time_column}
        self._writer.add_metadata(GROUP_METADATA_NAME, fields)

    def close(self) -> None:
        """The summary; closes the file."""
        self._writer.finish()
        self._file.close()


def _read_metadata(reader, name: str = METADATA_NAME) -> dict[str, str]:
    for record in reader.iter_metadata():
        if record.name == name:
            return dict(record.metadata)
    raise ValueError(f"no {name} metadata record: not a jtac recording")


def _payloads(reader, topic: str) -> Iterator[bytes]:
    for _schema, _channel, message in reader.iter_messages(topics=[topic], log_time_order=False):
        yield message.data


def load_mcap(path: str | Path, prefix: str = "") -> dict[str, np.ndarray]:
    """The {field: array} of a recording saved as MCAP, the same as Recording.data() gave; prefix: one
    arm's of a group's file ("/left")."""
    from mcap_ros2.decoder import DecoderFactory

    with Path(path).open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        meta = _read_metadata(reader, METADATA_NAME + prefix)
        columns = [
            (name, np.dtype(dtype), tuple(shape)) for name, dtype, shape in json.loads(meta["columns"])
        ]
        cycle = sorted((c for c in columns if c[0] in RECORD_FIELDS), key=lambda c: RECORD_FIELDS.index(c[0]))
        out = _decode_cycles(list(_payloads(reader, f"{prefix}/jtac/cycle")), cycle)
        out.update(_decode_gripper(reader, [c for c in columns if c[0] in _GRIPPER_SERIES]))
    return {name: out[name] for name, _dtype, _shape in columns}


def load_group_mcap(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """{arm: {field: array}} of an ArmGroup's recording saved as MCAP, each with its group_time [s],
    as GroupRecording.data() gave."""
    with Path(path).open("rb") as stream:
        group = _read_metadata(make_reader(stream), GROUP_METADATA_NAME)
    out = {}
    for arm in json.loads(group["arms"]):
        rows = load_mcap(path, f"/{arm}")
        rows["group_time"] = rows[group["group_time_column"]].copy()
        out[arm] = rows
    return out


def _decode_cycles(payloads: list[bytes], cycle: Sequence[tuple[str, np.dtype, tuple[int, ...]]]) -> dict:
    if not payloads:
        return {name: np.zeros((0, *shape), dtype=dtype) for name, dtype, shape in cycle}
    decoded = _table_layout(cycle).decode(payloads)
    rows = len(payloads)
    return {name: decoded[name].reshape(rows, *shape).astype(dtype) for name, dtype, shape in cycle}


def _decode_gripper(
    reader, columns: Sequence[tuple[str, np.dtype, tuple[int, ...]]]
) -> dict[str, np.ndarray]:
    """The hand's tables, decoded with mcap-ros2-support (a few rows per second)."""
    values: dict[str, list] = {name: [] for name, _dtype, _shape in columns}
    topics = [topic for _message, topic, _time in _GRIPPER_TABLES.values()]
    for _schema, _channel, _message, decoded in reader.iter_decoded_messages(
        topics=topics, log_time_order=False
    ):
        for name in values:
            if hasattr(decoded, name):
                values[name].append(getattr(decoded, name))
    return {name: np.array(values[name], dtype=dtype) for name, dtype, _shape in columns}
