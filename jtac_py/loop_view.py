"""What a Controller shows of its native loop without commanding anything: the names it controls,
the last cycle (``state``), the controller clock, timing, the hardware thread's flight recorder, the
last device command and recordings. ``Controller`` is a ``LoopView`` that also commands.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from jtac_py.assembly import NativeParts
from jtac_py.event_pump import EventPump
from jtac_py.lockstep import Stepper
from jtac_py.recording import (
    _TIP_FIELDS,
    DEFAULT_CHUNK_ROWS,
    GRIPPER_RECORD_FIELDS,
    RECORD_FIELDS,
    ControllerState,
    Recording,
)

__all__ = ["LoopView"]


class LoopView:
    """The read side of a controller's native parts (stepper: a lockstep arm's, else None)."""

    def __init__(self, parts: NativeParts, events: EventPump, stepper: Stepper | None) -> None:
        self._parts = parts
        self._core, self._interface, self._loop = parts.core, parts.interface, parts.loop
        self._events = events
        self._stepper = stepper

    @property
    def joint_names(self) -> list[str]:
        return list(self._core.joint_names)

    @property
    def sensor_frames(self) -> list[str]:
        return list(self._core.sensor_frames)

    @property
    def num_tips(self) -> int:
        """Tips the controller has (one per sensor frame): the rows of the wrenches_* fields."""
        return int(self._core.num_tips)

    @property
    def wrench_sources(self) -> dict[str, str]:
        """Where each tip's wrench comes from, by sensor frame: "device" (the arm's sensor),
        "external" (readings handed over by feed_wrench) or "none" (no sensor: zero)."""
        return dict(zip(self.sensor_frames, self._parts.wrench_sources, strict=True))

    @property
    def lockstep(self) -> bool:
        """True on a lockstep arm: nothing runs by itself (step() advances it)."""
        return self._stepper is not None

    @property
    def update_rate_hz(self) -> int:
        return self._loop.update_rate_hz

    @property
    def hardware_error(self) -> str | None:
        """Why the hardware thread stopped by itself (e.g. a libfranka reflex), None while it runs."""
        return self._events.hardware_error

    @property
    def fault_explanation(self) -> Any:
        """The last reflex explained (``jtac_py.reflexes.Explanation``: joint, quantity, value, limit,
        what preceded it, advice, the saved trace's path), None before one; also in hardware_error."""
        return self._events.fault_explanation

    @property
    def state(self) -> ControllerState | None:
        """The last controller cycle; None before the first."""
        snap = self._loop.snapshot()
        if snap is None:
            return None
        for name in _TIP_FIELDS:
            snap[name] = snap[name][: self.num_tips]
        return ControllerState(**snap)

    def controller_time(self) -> float:
        """The controller clock [s]: the robot time of the last cycle's state (goals' start times and
        results are on this clock). Lockstep: runs the first cycle when none has run yet."""
        if self._stepper is not None and self._loop.snapshot() is None:
            self._stepper.step_cycle()
        snap = self._loop.snapshot()
        if snap is None:
            raise RuntimeError("no controller cycle yet: call start() first")
        return float(snap["time"])

    def timing(self) -> dict[str, Any]:
        """Loop timing: the controller's counters, the hardware thread's packet counters and dEXT."""
        return {
            "loop": self._loop.timing(),
            "hardware": self._interface.counters(),
            "dext": self._interface.latency(),
        }

    def packet_trace(self) -> dict[str, np.ndarray]:
        """The hardware thread's flight recorder: its last 256 packets (oldest first) as column arrays
        (packet, tick, read_ns, write_ns, step_periods, flags, q_d_echo, q_cmd, dq_cmd; see
        _native.AsyncInterface.packet_trace). After the thread stopped — stop(), or a device error such
        as a reflex, where it shows what the robot was sent just before. Raises while it runs."""
        return self._interface.packet_trace()

    def device_command(self) -> tuple[np.ndarray, np.ndarray]:
        """(q_d [rad], dq_d [rad/s]) of the last 1 kHz packet written to the robot, after rate matching
        and the limiter. Lockstep (or stopped) only: in real time the hardware thread owns it."""
        return self._interface.last_command()

    def record(
        self,
        fields: Iterable[str] | None = None,
        path: str | Path | None = None,
        *,
        chunk_rows: int = DEFAULT_CHUNK_ROWS,
        per_goal: bool = False,
    ) -> Recording:
        """Starts recording every controller cycle; use as a context manager or call stop().

        fields: a subset of RECORD_FIELDS (one row per cycle) and GRIPPER_RECORD_FIELDS (the hand's
        series, one row per gripper event, each with its own time column on the controller's clock;
        empty without a hand); default all of RECORD_FIELDS, and the hand's series when the arm has
        a hand. path: written by stop(), .npz or .mcap (ROS 2 schemas and the controller's events;
        Recording.save); a .mcap is written while the recording runs, every chunk_rows rows.
        per_goal: path is a folder, each goal's cycles and events written to <path>/goal_<id>.mcap.
        """
        gripper = getattr(self, "gripper", None)  # a Controller's hand; a bare view has none
        if fields is None:
            with_hand = gripper is not None and gripper.present
            fields = RECORD_FIELDS + (GRIPPER_RECORD_FIELDS if with_hand else ())
        chosen = tuple(fields)
        known = RECORD_FIELDS + GRIPPER_RECORD_FIELDS
        unknown = [f for f in chosen if f not in known]
        if unknown:
            raise ValueError(f"record: unknown field(s) {unknown}; known: {list(known)}")
        snap = self._loop.snapshot()
        names = {"joint_names": self.joint_names, "sensor_frames": self.sensor_frames}
        controller_time_s = None if snap is None else float(snap["time"])
        return self._events.add_recording(
            chosen,
            path,
            gripper,
            controller_time_s=controller_time_s,
            chunk_rows=chunk_rows,
            per_goal=per_goal,
            **names,
        )
