"""One controller cycle on the Python side: ``ControllerState`` (the last cycle) and ``Recording`` (one
row per cycle).

Both are derived from the native cycle table (``_native.CYCLE_FIELDS``: name, shape, doc of every field
of jtac_loop's ``CycleRecord``, in table order), so a field added there appears in the snapshot, the
recording's columns, ``RECORD_FIELDS`` and ``ControllerState`` without a line here.

Shapes natively: numbers and enums (), joint arrays (7,), tip 0's wrench ``wrench_*`` (6,), every tip's
``wrenches_*`` (kMaxTips, 6); the Controller cuts the ``wrenches_*`` to the tips it has (num_tips,
6), tip 0 first (sensor_frames order). Units are in each field's doc (``CYCLE_FIELD_DOCS``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field, make_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jtac_py import _native

if TYPE_CHECKING:
    from jtac_py.event_pump import EventPump

__all__ = ["CYCLE_FIELD_DOCS", "RECORD_FIELDS", "ControllerState", "Recording"]

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


class Recording:
    """Rows of every controller cycle between start and stop (a context manager).

    data() gives {field: array}, one row per cycle; dropped counts rows the native ring could not
    keep (Python did not drain for longer than it holds); with a path, stop() saves an .npz there.
    """

    def __init__(self, pump: EventPump, fields: Sequence[str], path: str | Path | None) -> None:
        self._pump = pump
        self.fields = tuple(fields)
        self.path = Path(path) if path is not None else None
        self._chunks: list[dict[str, np.ndarray]] = []
        self._dropped_at_start = pump.dropped_records
        self.dropped = 0
        self.active = True

    def _append(self, chunk: Mapping[str, np.ndarray]) -> None:
        self._chunks.append({f: chunk[f] for f in self.fields})

    @property
    def rows(self) -> int:
        return sum(len(c[self.fields[0]]) for c in self._chunks) if self.fields else 0

    def data(self) -> dict[str, np.ndarray]:
        """Every row so far, one array per field (copies)."""
        if self.active:
            self._pump.pump()
        out = {}
        for f in self.fields:
            parts = [c[f] for c in self._chunks]
            out[f] = np.concatenate(parts) if parts else np.zeros((0,))
        return out

    def save(self, path: str | Path) -> Path:
        """Writes the rows so far as .npz (np.load gives the same dict as data())."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **self.data())
        return path

    def stop(self) -> None:
        if self.active:
            self._pump.end_recording(self)
            if self.path is not None:
                self.save(self.path)

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
