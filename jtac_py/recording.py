"""One controller cycle on the Python side: ``ControllerState`` (the last cycle) and ``Recording`` (one
row per cycle).

Both are derived from the native cycle table (``_native.CYCLE_FIELDS``: name, shape, doc of every field
of jtac_loop's ``CycleRecord``, in table order), so a field added there appears in the snapshot, the
recording's columns, ``RECORD_FIELDS`` and ``ControllerState`` without a line here.

Shapes natively: numbers and enums (), joint arrays (7,), tip 0's wrench ``wrench_*`` (6,), every tip's
``wrenches_*`` (kMaxTips, 6); the Controller cuts the ``wrenches_*`` to the tips it has (num_tips,
6), tip 0 first (sensor_frames order). Units are in each field's doc (``CYCLE_FIELD_DOCS``).

A recording also holds the hand's series (``GRIPPER_RECORD_FIELDS``), from the gripper's listener
events: not one row per cycle but one per event, each series with its own time column on the
controller's clock (docs/gripper.md, "Streams and recording").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, make_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jtac_py import _native

if TYPE_CHECKING:
    from jtac_py.event_pump import EventPump

__all__ = [
    "CYCLE_FIELD_DOCS",
    "GRIPPER_FIELD_DOCS",
    "GRIPPER_RECORD_FIELDS",
    "LOG_LEVELS",
    "RECORD_FIELDS",
    "ControllerState",
    "LogEvent",
    "Recording",
    "load",
]

#: Columns a recording can hold (one row per controller cycle), in the native table's order: time
#: [s], joints [rad, rad/s], wrenches [N, N·m] (raw and filtered in the sensor frame, filtered still
#: holding the payload's weight; control = payload-compensated in the control frame, the admittance's
#: input; ``wrench_*`` tip 0's (n, 6), ``wrenches_*`` every tip's (n, tips, 6), tip 0 first),
#: trajectory_time [s] (the trajectory time of the sampled reference), durations [µs]; mode and status
#: as their enum values. The same names are ControllerState's attributes.
RECORD_FIELDS: tuple[str, ...] = tuple(name for name, _shape, _doc in _native.CYCLE_FIELDS)

#: What each field is, with its unit (the native table's doc).
CYCLE_FIELD_DOCS: dict[str, str] = {name: doc for name, _shape, doc in _native.CYCLE_FIELDS}

#: The per-tip wrench entries of a snapshot and a recording: (kMaxTips, 6) natively, cut to the tips
#: the controller has.
_TIP_FIELDS = tuple(name for name, shape, _doc in _native.CYCLE_FIELDS if len(shape) == 2)


#: The hand's series a recording can hold (docs/gripper.md), three tables of their own, each with its
#: time column [s, the controller's clock]: every state sample the gripper's thread sees
#: (``gripper_time`` ...), every command issued (``gripper_command_*``), every command's end
#: (``gripper_result_*``). Name -> (dtype, doc).
_GRIPPER_SERIES: dict[str, tuple[str, str]] = {
    "gripper_time": ("f8", "when the hand's state was measured [s]"),
    "gripper_width_m": ("f8", "the width between the fingers [m]"),
    "gripper_is_grasped": ("?", "the fingers hold an object"),
    "gripper_moving": ("?", "the fingers move"),
    "gripper_command_time": ("f8", "when a command was issued [s]"),
    "gripper_command_kind": ("U5", "move | grasp | home | stop"),
    "gripper_command_width_m": ("f8", "its target width [m] (nan: home, stop)"),
    "gripper_command_id": ("i8", "its id (the result's gripper_result_id)"),
    "gripper_result_time": ("f8", "when a command ended [s]"),
    "gripper_result_kind": ("U5", "the command that ended: move | grasp | home | stop"),
    "gripper_result_code": ("U15", "how it ended: GripperResultCode's name (SUCCEEDED, NOT_GRASPED ...)"),
    "gripper_result_width_m": ("f8", "the width when it ended [m] (nan: unknown)"),
    "gripper_result_id": ("i8", "the id of the command that ended"),
}

#: The hand's series, in table order: state, commands, results.
GRIPPER_RECORD_FIELDS: tuple[str, ...] = tuple(_GRIPPER_SERIES)

#: What each gripper series is, with its unit.
GRIPPER_FIELD_DOCS: dict[str, str] = {name: doc for name, (_dtype, doc) in _GRIPPER_SERIES.items()}


#: rcl_interfaces/msg/Log's levels, which a recording's events carry.
LOG_LEVELS = {"DEBUG": 10, "INFO": 20, "WARN": 30, "ERROR": 40, "FATAL": 50}

#: Rows a recording streamed to .mcap holds before writing them (5 s at 1 kHz, about 2.5 MB).
DEFAULT_CHUNK_ROWS = 5000


@dataclass(frozen=True)
class LogEvent:
    """One controller event as a recording keeps it (an rcl_interfaces/msg/Log in a .mcap): when [s,
    the controller's clock], its level (LOG_LEVELS), the logger's name, the text and its goal (0:
    none)."""

    time_s: float
    level: int
    name: str
    text: str
    goal_id: int = 0


def _no_tips() -> np.ndarray:
    return np.zeros((0, 6))


def _state_field(name: str, shape: tuple[int, ...]) -> tuple[str, Any, Any]:
    """A ControllerState attribute: its default is what the native cycle holds before the first
    update (every tip's wrenches: no tips)."""
    default = _native.CYCLE_DEFAULTS[name]
    if name in _TIP_FIELDS:
        return name, np.ndarray, field(default_factory=_no_tips)
    if shape:
        return name, np.ndarray, field(default_factory=default.copy)
    return name, Any, field(default=default)


def _state_doc() -> str:
    lines = [
        "The controller's last cycle (a snapshot; joint arrays in the controller's joint order).",
        "",
        "Attributes (the native cycle table, in its order):",
    ]
    for name, shape, doc in _native.CYCLE_FIELDS:
        dims = "(tips, 6)" if name in _TIP_FIELDS else str(tuple(shape))
        lines.append(f"    {name} {dims}: {doc}")
    lines.append("    timing: the loop's counters when the cycle was published (dict)")
    return "\n".join(lines)


ControllerState = make_dataclass(
    "ControllerState",
    [_state_field(name, tuple(shape)) for name, shape, _doc in _native.CYCLE_FIELDS]
    + [("timing", dict[str, Any], field(default_factory=dict, repr=False))],
    frozen=True,
    kw_only=True,
)
ControllerState.__module__ = __name__  # pickles and prints as jtac_py.recording.ControllerState
ControllerState.__doc__ = _state_doc()


class _GripperSeries:
    """The hand's series of a recording, collected by a gripper listener (any thread; a lock)."""

    def __init__(self, fields: Sequence[str]) -> None:
        self.fields = tuple(fields)
        self._lock = threading.Lock()
        self._rows: dict[str, list[Any]] = {name: [] for name in GRIPPER_RECORD_FIELDS}

    def on_event(self, event: Any) -> None:
        """The gripper's listener: one row in the table of the event's kind."""
        row = _ROW_OF_EVENT[event.kind](event)
        with self._lock:
            for name, value in row.items():
                self._rows[name].append(value)

    def data(self) -> dict[str, np.ndarray]:
        with self._lock:
            return {f: np.array(self._rows[f], dtype=_GRIPPER_SERIES[f][0]) for f in self.fields}


def _state_row(event: Any) -> dict[str, Any]:
    state = event.state
    return {
        "gripper_time": event.time_s,
        "gripper_width_m": state.width_m,
        "gripper_is_grasped": state.is_grasped,
        "gripper_moving": state.moving,
    }


def _command_row(event: Any) -> dict[str, Any]:
    return {
        "gripper_command_time": event.time_s,
        "gripper_command_kind": event.command,
        "gripper_command_width_m": np.nan if event.width_m is None else event.width_m,
        "gripper_command_id": event.id,
    }


def _result_row(event: Any) -> dict[str, Any]:
    return {
        "gripper_result_time": event.time_s,
        "gripper_result_kind": event.command,
        "gripper_result_code": event.result.code.name,
        "gripper_result_width_m": event.result.width_m,
        "gripper_result_id": event.id,
    }


_ROW_OF_EVENT: dict[str, Callable[[Any], dict[str, Any]]] = {
    "state": _state_row,
    "command": _command_row,
    "result": _result_row,
}


class Recording:
    """Rows of every controller cycle between start and stop (a context manager).

    data() gives {field: array}, one row per cycle; dropped counts rows the native ring could not
    keep (Python did not drain for longer than it holds); with a path, stop() saves there (.npz, or
    .mcap with ROS 2 schemas: jtac_py.mcap_io). A .mcap path is written while the recording runs:
    every `chunk_rows` rows go to disk from the pump (its thread, or step() in lockstep), so memory
    holds at most one chunk (peak_rows_in_memory); data() reads the file back after stop(). The
    controller's events during the recording are kept as LogEvents (events: those not written yet),
    the .mcap's /jtac/events. The hand's series (GRIPPER_RECORD_FIELDS), when chosen, come from the
    gripper's events: one row per event, with their own time columns on the controller's clock.
    joint_names and sensor_frames name the joints and tips (the .mcap's messages);
    started_wall_time_ns and started_controller_time_s are one instant on both clocks (the .mcap's
    timestamps).
    """

    def __init__(
        self,
        pump: EventPump,
        fields: Sequence[str],
        path: str | Path | None,
        gripper: Any = None,
        *,
        joint_names: Sequence[str] = (),
        sensor_frames: Sequence[str] = (),
        controller_time_s: float | None = None,
        chunk_rows: int = DEFAULT_CHUNK_ROWS,
        per_goal: bool = False,
    ) -> None:
        self._pump = pump
        self.joint_names = tuple(joint_names)
        self.sensor_frames = tuple(sensor_frames)
        self.started_wall_time_ns = time.time_ns()
        #: the controller time when the recording started [s] (None: the first row's, once there is one)
        self.started_controller_time_s = controller_time_s
        self.fields = tuple(fields)
        self._cycle_fields = tuple(f for f in self.fields if f not in _GRIPPER_SERIES)
        self.path = Path(path) if path is not None else None
        self._chunks: list[dict[str, np.ndarray]] = []
        #: a streamed recording's full chunk of rows and its events, waiting for write_pending()
        self._pending: tuple[list[dict[str, np.ndarray]], list[LogEvent]] | None = None
        self._write_lock = threading.Lock()  # one writer of the .mcap at a time (pump thread, stop())
        #: the controller's events not written to disk yet (all of them unless streamed to .mcap)
        self.events: list[LogEvent] = []
        self.chunk_rows = int(chunk_rows)
        #: a file per goal: path is a folder, each goal's rows (its cycles' goal_id) and events go to
        #: <path>/goal_<id>.mcap (files: those written)
        self.per_goal = per_goal
        if per_goal and (self.path is None or self.path.suffix):
            raise ValueError(f"record(per_goal=True) takes a folder as path, got {path!r}")
        if per_goal and "goal_id" not in self._cycle_fields:
            self._cycle_fields += ("goal_id",)
        self.streamed = self.path is not None and (per_goal or self.path.suffix == ".mcap")
        self._stream: Any = None  # the McapStream, opened with the first chunk
        self._goal_streams: dict[int, Any] = {}  # per goal: goal id -> its open McapStream
        self._ended_goals: set[int] = set()  # per goal: goals whose end event was written
        self.files: list[Path] = []
        self._rows_written = 0
        #: the most cycle rows held in memory at once (streamed: at most chunk_rows)
        self.peak_rows_in_memory = 0
        self._dropped_at_start = pump.dropped_records
        self.dropped = 0
        self.active = True
        self._gripper = gripper
        self._gripper_series: _GripperSeries | None = None
        chosen = [f for f in self.fields if f in _GRIPPER_SERIES]
        if chosen and gripper is not None:
            self._gripper_series = _GripperSeries(chosen)
            gripper.add_listener(self._gripper_series.on_event)

    def _count_rows(self, chunks: Sequence[Mapping[str, np.ndarray]]) -> int:
        if not self._cycle_fields:
            return 0
        return sum(len(c[self._cycle_fields[0]]) for c in chunks)

    def _rows_in_memory(self) -> int:
        pending = self._pending
        return self._count_rows(self._chunks) + (0 if pending is None else self._count_rows(pending[0]))

    def _append(self, chunk: Mapping[str, np.ndarray]) -> None:
        """The pump's drained rows (under the pump's lock); a streamed recording's full chunk waits,
        with its events, for write_pending() (the pump, after its lock)."""
        self._chunks.append({f: chunk[f] for f in self._cycle_fields})
        self.peak_rows_in_memory = max(self.peak_rows_in_memory, self._rows_in_memory())
        if self.streamed and self._pending is None and self._count_rows(self._chunks) >= self.chunk_rows:
            self._pending = (self._chunks, self.events)
            self._chunks, self.events = [], []

    def write_pending(self) -> None:
        """Writes a streamed recording's full chunk to its .mcap (the pump, outside its lock: goals and
        the loop's drain never wait for the disk)."""
        with self._write_lock:
            pending, self._pending = self._pending, None
            if pending is not None:
                self._write(*pending)

    def _on_event(self, event: LogEvent) -> None:
        """A controller event during the recording (the pump, under its lock)."""
        self.events.append(event)

    @property
    def rows(self) -> int:
        """Controller cycles recorded (the hand's series have rows of their own)."""
        return self._rows_written + self._rows_in_memory()

    def _cycles_in_memory(self) -> dict[str, np.ndarray]:
        return self._concatenate(list(self._chunks))  # one set of rows while the pump thread appends

    def _concatenate(self, chunks: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
        out = {}
        for f in self._cycle_fields:
            parts = [c[f] for c in chunks]
            out[f] = np.concatenate(parts) if parts else np.zeros((0,))
        return out

    def _anchor(self, first_time_s: float | None) -> Any:
        from jtac_py.mcap_io import ClockAnchor

        controller_time_s = self.started_controller_time_s
        if controller_time_s is None:
            controller_time_s = 0.0 if first_time_s is None else first_time_s
        return ClockAnchor(self.started_wall_time_ns, controller_time_s)

    def _write(self, chunks: list[dict[str, np.ndarray]], events: list[LogEvent]) -> None:
        """Rows and events to the .mcap (opened with the first chunk); under the write lock."""
        cycles = self._concatenate(chunks)
        self._rows_written += self._count_rows(chunks)
        if self.per_goal:
            self._write_per_goal(cycles, events)
            return
        if self._stream is None:
            from jtac_py.mcap_io import McapStream

            times = cycles.get("time", ())
            anchor = self._anchor(float(times[0]) if len(times) else None)
            self._stream = McapStream(self.path, self.joint_names, self.sensor_frames, anchor)
            self.files.append(self.path)
        self._stream.write_cycles(cycles)
        self._stream.write_events(events)

    def _goal_stream(self, goal_id: int, first_time_s: float) -> Any:
        """The open file of a goal, <path>/goal_<id>.mcap (its clock: the recording's)."""
        if goal_id not in self._goal_streams:
            from jtac_py.mcap_io import McapStream

            path = self.path / f"goal_{goal_id}.mcap"
            anchor = self._anchor(first_time_s)
            self._goal_streams[goal_id] = McapStream(path, self.joint_names, self.sensor_frames, anchor)
            self.files.append(path)
        return self._goal_streams[goal_id]

    def _write_per_goal(self, cycles: dict[str, np.ndarray], events: list[LogEvent]) -> None:
        """Each goal's rows and events to its file; a goal that ended in an earlier chunk and has no
        rows in this one is complete (its file closed)."""
        goal_ids = cycles["goal_id"]
        for goal_id in (int(g) for g in np.unique(goal_ids) if g != 0):
            rows = goal_ids == goal_id
            times = cycles["time"][rows] if "time" in cycles else np.zeros(1)
            self._goal_stream(goal_id, float(times[0])).write_cycles({f: v[rows] for f, v in cycles.items()})
        for event in (e for e in events if e.goal_id != 0):
            self._goal_stream(event.goal_id, event.time_s).write_events([event])
        for goal_id in [g for g in self._ended_goals if g not in goal_ids]:
            self._close_goal(goal_id)
        ends = ("GOAL_SUCCEEDED", "GOAL_ABORTED", "GOAL_CANCELED")
        self._ended_goals |= {e.goal_id for e in events if e.goal_id and e.text.startswith(ends)}

    def _close_goal(self, goal_id: int) -> None:
        self._ended_goals.discard(goal_id)
        stream = self._goal_streams.pop(goal_id, None)
        if stream is not None:
            stream.finish({}, self._cycle_fields)

    def data(self) -> dict[str, np.ndarray]:
        """Every row so far, one array per field (copies); streamed to .mcap: only after stop()."""
        if self.streamed:
            if self.active or self.per_goal:
                raise RuntimeError(f"the recording streams to {self.path}: its rows are there after stop()")
            return load(self.path)
        if self.active:
            self._pump.pump()
        out = self._cycles_in_memory()
        hand = self._gripper_series.data() if self._gripper_series is not None else {}
        for f in self.fields:
            if f in _GRIPPER_SERIES:
                out[f] = hand.get(f, np.zeros(0, dtype=_GRIPPER_SERIES[f][0]))
        return {f: out[f] for f in self.fields}

    def save(self, path: str | Path) -> Path:
        """Writes the rows so far: .mcap (ROS 2 schemas and the events, jtac_py.mcap_io) or .npz
        (np.load gives the same dict as data()); load(path) reads either back."""
        path = Path(path)
        data = self.data()
        if path.suffix == ".mcap":
            from jtac_py.mcap_io import save_mcap

            times = data.get("time", ())
            anchor = self._anchor(float(times[0]) if len(times) else None)
            return save_mcap(data, path, self.joint_names, self.sensor_frames, anchor, self.events)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **data)
        return path

    def _finish_stream(self) -> None:
        """The last rows, the hand's series and the metadata: the streamed .mcap complete."""
        self.write_pending()
        with self._write_lock:
            self._write(self._chunks, self.events)
            self._chunks, self.events = [], []
            for goal_id in list(self._goal_streams):
                self._close_goal(goal_id)
        if self.per_goal:
            return
        hand = self._gripper_series.data() if self._gripper_series is not None else {}
        other = {
            f: hand.get(f, np.zeros(0, dtype=_GRIPPER_SERIES[f][0]))
            for f in self.fields
            if f in _GRIPPER_SERIES
        }
        self._stream.finish(other, self.fields)

    def stop(self) -> None:
        if self.active:
            self._pump.end_recording(self)
            if self._gripper_series is not None:
                self._gripper.remove_listener(self._gripper_series.on_event)
            if self.streamed:
                self._finish_stream()
            elif self.path is not None:
                self.save(self.path)

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def load(path: str | Path) -> dict[str, np.ndarray]:
    """A saved recording (.npz or .mcap) as the {field: array} dict Recording.data() gave."""
    path = Path(path)
    if path.suffix == ".mcap":
        from jtac_py.mcap_io import load_mcap

        return load_mcap(path)
    with np.load(path, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}
