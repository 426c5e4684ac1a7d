"""One recording per arm of an ArmGroup on the group clock (``ArmGroup.record()``), and the arms'
trajectory times compared on it."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from jtac_py.recording import RECORD_FIELDS, Recording

if TYPE_CHECKING:
    from jtac_py.arm_group import ArmGroup

__all__ = ["GroupRecording", "TrajectoryTimeGap", "trajectory_start_s", "trajectory_time_gap"]


def trajectory_start_s(rows: Mapping[str, np.ndarray], window_s: float = 0.01) -> float:
    """The group time at which an arm's trajectory time was 0 [s], from one arm's rows of a
    GroupRecording (group_time, trajectory_time): the median of group time − trajectory time over
    the trajectory's first window_s (a state that arrived late moves one row, not the median)."""
    first = (rows["trajectory_time"] > 0.0) & (rows["trajectory_time"] < window_s)
    return float(np.median(rows["group_time"][first] - rows["trajectory_time"][first]))


@dataclass(frozen=True)
class TrajectoryTimeGap:
    """Two arms' trajectory times compared at equal group times over a goal (trajectory_time_gap)."""

    drift: float  # the gap's slope over the group time [s/s]: how far the two robot clocks run apart
    off_line_median_s: float  # the gaps' median distance from that line [s]
    largest_s: float  # the largest gap [s]


def trajectory_time_gap(
    first: Mapping[str, np.ndarray], second: Mapping[str, np.ndarray], duration_s: float
) -> TrajectoryTimeGap:
    """first − second trajectory time at equal group times, over first's rows inside a trajectory of
    duration_s (second's interpolated at their group times), as a line over the group time. Each
    arm's trajectory time runs on its robot's clock: lockstep and real FR3s keep the gap at 0 (a few
    ppm); franka-sim's clock runs slow by a different amount per server, and the gap grows."""
    inside = (first["trajectory_time"] > 0.0) & (first["trajectory_time"] < duration_s)
    inside &= (first["group_time"] >= second["group_time"][0]) & (
        first["group_time"] <= second["group_time"][-1]
    )
    t_s = first["group_time"][inside] - first["group_time"][inside][0]
    gap_s = first["trajectory_time"][inside] - np.interp(
        first["group_time"][inside], second["group_time"], second["trajectory_time"]
    )
    slope, at_start_s = np.polyfit(t_s, gap_s, 1)
    off_line = float(np.median(np.abs(gap_s - at_start_s - slope * t_s)))
    return TrajectoryTimeGap(float(slope), off_line, float(np.abs(gap_s).max()))


class GroupRecording:
    """One recording per arm, started together (ArmGroup.record()): data() gives {arm: {field:
    array}}, each with ``group_time`` [s], its rows' time on the group clock (real time: the host
    time their states arrived; lockstep: the simulated time). save() writes one .npz with keys
    ``"<arm>/<field>"``, or one .mcap with each arm's channels and events under its name
    (``/left/joint_states`` ...) on one clock: group time mapped to the wall time of the recording's
    start (jtac_py.mcap_io.load_group_mcap reads it back). A context manager; with a path, stop()
    saves there."""

    def __init__(self, group: ArmGroup, recordings: dict[str, Recording], path: str | Path | None) -> None:
        self._group = group
        self.recordings = recordings
        self.path = None if path is None else Path(path)
        #: the wall time when the recording started [ns since the Unix epoch]
        self.started_wall_time_ns = time.time_ns()

    def data(self) -> dict[str, dict[str, np.ndarray]]:
        out = {}
        for arm, recording in self.recordings.items():
            rows = recording.data()
            rows["group_time"] = rows["time"].copy() if self._group.lockstep else rows["host_time"].copy()
            out[arm] = rows
        return out

    def save(self, path: str | Path) -> Path:
        """Writes every arm's rows: .mcap (ROS 2 schemas, one clock) or .npz ("<arm>/<field>")."""
        path = Path(path)
        if path.suffix == ".mcap":
            return self._save_mcap(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        flat = {f"{arm}/{name}": v for arm, rows in self.data().items() for name, v in rows.items()}
        np.savez(path, **flat)
        return path

    def _save_mcap(self, path: Path) -> Path:
        """Each arm under /<arm>; the file's clock: the earliest first row's group time at the wall
        time of the recording's start."""
        from jtac_py.mcap_io import ClockAnchor, McapStream

        data = self.data()
        firsts_s = [float(rows["group_time"][0]) for rows in data.values() if len(rows["group_time"])]
        stream = McapStream(path, (), (), ClockAnchor(self.started_wall_time_ns, min(firsts_s, default=0.0)))
        for arm, rows in data.items():
            c = self._group.controllers[arm]
            names = {"joint_names": c.joint_names, "sensor_frames": c.sensor_frames}
            cycles = {f: v for f, v in rows.items() if f in RECORD_FIELDS}
            stream.write_cycles(cycles, f"/{arm}", names, rows["group_time"])
            events = [
                dataclasses.replace(e, time_s=self._group.group_time(arm, e.time_s))
                for e in self.recordings[arm].events
            ]
            stream.write_events(events, f"/{arm}")
            stream.write_metadata(list(cycles), prefix=f"/{arm}", names=names)
        stream.write_group(list(data), "time" if self._group.lockstep else "host_time")
        stream.close()
        return path

    def stop(self) -> None:
        for recording in self.recordings.values():
            recording.stop()
        if self.path is not None:
            self.save(self.path)
            self.path = None

    def __enter__(self) -> GroupRecording:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
