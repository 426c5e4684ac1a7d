"""Why the robot stopped: a reflex explained from the hardware thread's flight recorder.

When a Franka arm stops a motion by itself, libfranka's message names the reflex (``["joint_motion_
generator_velocity_discontinuity"]``) but not what led to it. The hardware thread keeps its last 256
packets (``AsyncInterface.packet_trace``: the commands it wrote, the robot's ticks, what shaped each
packet). ``explain()`` puts the two together into a plain statement: which joint and which quantity of
the command (position, velocity, acceleration, jerk — as the robot differentiates the commanded
positions, once per robot cycle) against which limit, at which packet relative to the fault, what
preceded it (lost or late packets, the hardware thread extrapolating without samples, the limiter
acting, a test disturbance) and what the user can change. ``save_trace()`` keeps the evidence as an
``.npz`` (``jtac why FILE`` explains it, or a controller recording, offline).

Limits: the robot's own table (``jtac_py.robots``), the same the hardware limiter and franka-sim
judge by (libfranka's ``joint_motion_generator_*`` checks: the position range, the velocity, the
commanded acceleration from two position differences, the jerk from three).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from jtac_py import robots

__all__ = ["FAULT_DIR_ENV", "REFLEX_QUANTITIES", "Explanation", "explain", "load_trace", "save_trace"]

#: Where save_trace() writes by default: this variable, else $XDG_STATE_HOME/jtac/faults (else
#: ~/.local/state/jtac/faults).
FAULT_DIR_ENV = "JTAC_FAULT_DIR"

#: libfranka's reflex names -> the quantity of the commanded motion (or "link", "measured") they judge.
REFLEX_QUANTITIES: dict[str, str] = {
    "joint_motion_generator_position_limits_violation": "position",
    "joint_position_limits_violation": "position",
    "joint_position_motion_generator_start_pose_invalid": "position",
    "joint_motion_generator_velocity_limits_violation": "velocity",
    "joint_motion_generator_velocity_discontinuity": "acceleration",
    "joint_motion_generator_acceleration_discontinuity": "jerk",
    "joint_velocity_violation": "measured",
    "joint_reflex": "measured",
    "cartesian_reflex": "measured",
    "communication_constraints_violation": "link",
}

# Flight recorder flags (franka_hw/async_records.hpp, PacketRecord::Flags).
_LATE, _HELD, _LIMITED, _LATE_READ, _RESYNCED, _DISTURBED = 2, 8, 16, 32, 64, 128
#: libfranka's messages for a link that went silent (no reflex named): a UDP timeout, a network error.
_LINK_MESSAGE = re.compile(r"UDP|[Tt]imeout|[Nn]etwork|connection", re.ASCII)
#: Packets before the worst one that count as "what preceded it" (100 ms at 1 kHz).
PRECEDING_PACKETS = 100
#: A link silent for longer than this after the last packet is named [ms] (the robot counts a cycle
#: lost after 1 ms and stops after 20 in a row; the fault is seen a few ms after it).
SILENT_MS = 10.0
_UNITS = {"position": "rad", "velocity": "rad/s", "acceleration": "rad/s²", "jerk": "rad/s³"}


@dataclass(frozen=True)
class Explanation:
    """What explain() found; text() is the plain statement."""

    reflexes: tuple[str, ...]  # libfranka's reflex names in its message, in its order
    quantity: str | None  # position | velocity | acceleration | jerk | link | measured
    joint: int | None = None  # 0-based
    joint_name: str | None = None
    value: float | None = None  # the command's worst value of `quantity` [its unit]
    limit: float | None = None  # the robot's limit for it [the same unit]
    packet_offset: int | None = None  # packets before the last one written (0: the last; -3: three before)
    preceded_by: tuple[str, ...] = field(default_factory=tuple)
    advice: str = ""
    trace_path: str | None = None

    def text(self) -> str:
        """One paragraph: the reflex, the joint, the quantity against its limit, when, what preceded
        it, what to change, and where the trace is."""
        parts = [f"reflex {', '.join(self.reflexes)}" if self.reflexes else "the robot stopped the motion"]
        if self.quantity in _UNITS and self.joint_name is not None:
            unit = _UNITS[self.quantity]
            against = "outside its range" if self.quantity == "position" else "against its limit"
            when = (
                "in the last packet written"
                if self.packet_offset == 0
                else f"{-self.packet_offset} packet(s) before the last one written"
            )
            parts.append(
                f"the command's {self.quantity} on {self.joint_name} reached {self.value:.4g} {unit} "
                f"{against} {self.limit:.4g} {unit}, {when}{self._short_of_the_limit()}"
            )
        elif self.quantity == "link":
            parts.append("the robot missed too many commands in a row")
        elif self.quantity == "measured":
            parts.append("the robot judged its measured motion or torques, not the command")
        parts.append(
            "preceded by " + "; ".join(self.preceded_by) if self.preceded_by else "nothing preceded it"
        )
        text = ": ".join(parts[:2]) + ("; " + "; ".join(parts[2:]) if len(parts) > 2 else "")
        if self.advice:
            text += f". {self.advice}"
        if self.trace_path:
            text += f" (trace: {self.trace_path}; `jtac why` explains it again)"
        return text

    def _short_of_the_limit(self) -> str:
        """Why a reflex named a limit the command stayed under: the robot judges its bounds on its
        own state (franka-sim and the FR3 evaluate the position-based velocity bound at the measured
        position, and the measured-motion reflexes on the measured velocity, which trails and
        overshoots the command), so a command within a few percent of the bound can trip it."""
        if self.quantity == "position" or self.value is None or not self.limit:
            return ""
        if abs(self.value) > self.limit:
            return ""
        short_pct = 100.0 * (1.0 - abs(self.value) / self.limit)
        return (
            f" ({short_pct:.1f}% short of it: the robot judges the bound on its measured state, which "
            "trails and overshoots the command)"
        )


def reflex_names(message: str) -> tuple[str, ...]:
    """libfranka's reflex names in its message (the quoted names of its error list), or the known
    names anywhere in it."""
    quoted = re.findall(r'"([a-z_]+)"', message or "")
    names = [n for n in quoted if "_" in n]
    if not names:
        names = [n for n in REFLEX_QUANTITIES if n in (message or "")]
    return tuple(dict.fromkeys(names))


def _derivatives(q: np.ndarray, dt_s: np.ndarray) -> dict[str, np.ndarray]:
    """Backward differences of the commanded positions as the robot takes them, one row per packet
    (NaN where there are not enough packets before)."""
    n = len(q)
    out = {"position": q}
    value = q
    for name in ("velocity", "acceleration", "jerk"):
        d = np.full_like(q, np.nan)
        if n > 1:
            d[1:] = np.diff(value, axis=0) / dt_s[1:, None]
        out[name] = d
        value = d
    return out


def _excess(
    quantity: str, values: np.ndarray, positions: np.ndarray, spec: robots.RobotSpec
) -> tuple[np.ndarray, np.ndarray]:
    """(how far past its limit each value is, as a ratio: > 1 beyond; the limit per packet and joint)."""
    if quantity == "position":
        low, high = np.array(spec.q_min_rad), np.array(spec.q_max_rad)
        beyond = np.maximum(low - values, values - high)
        limit = np.where(values < (low + high) / 2, low, high)
        return 1.0 + beyond / (high - low), limit
    if quantity == "velocity":
        limit = _velocity_bound(positions, values, spec)
    else:
        table = {"acceleration": spec.ddq_max_rad_s2, "jerk": spec.dddq_max_rad_s3}
        limit = np.broadcast_to(np.array(table[quantity]), values.shape)
    return np.abs(values) / np.maximum(limit, 1e-9), limit


def _velocity_bound(q: np.ndarray, dq: np.ndarray, spec: robots.RobotSpec) -> np.ndarray:
    """The velocity bound each command moved against [rad/s]: dq_max, or for an FR3 the
    position-based bound toward the end of the range it moved to (it shrinks to 0 near the end)."""
    dq_max = np.broadcast_to(np.array(spec.dq_max_rad_s), q.shape)
    if spec.velocity_bound_coeffs is None:
        return dq_max
    coeffs = spec.velocity_bound_coeffs
    offset, gain = np.array([c.offset_rad_s for c in coeffs]), np.array([c.gain_rad_s2 for c in coeffs])
    upper_ref = np.array([c.q_upper_ref_rad for c in coeffs])
    lower_ref = np.array([c.q_lower_ref_rad for c in coeffs])
    upper = np.clip(np.sqrt(np.maximum(0.0, gain * (upper_ref - q))) - offset, 0.0, dq_max)
    lower = np.clip(np.sqrt(np.maximum(0.0, gain * (q - lower_ref))) - offset, 0.0, dq_max)
    return np.where(dq >= 0.0, upper, lower)


def _worst(trace: Mapping[str, np.ndarray], quantity: str | None, spec: robots.RobotSpec) -> dict[str, Any]:
    """The packet and joint where the command went furthest past a limit: of `quantity` when the
    reflex names one, else of whichever quantity did."""
    ticks = np.asarray(trace["tick"], dtype=float)
    dt_s = np.concatenate([[1.0], np.maximum(np.diff(ticks), 1.0)]) * 0.001
    series = _derivatives(np.asarray(trace["q_cmd"], dtype=float), dt_s)
    candidates = [quantity] if quantity in _UNITS else list(_UNITS)
    best: dict[str, Any] = {}
    for name in candidates:
        ratio, limit = _excess(name, series[name], series["position"], spec)
        ratio = np.nan_to_num(ratio, nan=-np.inf)
        k, j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        if not best or ratio[k, j] > best["ratio"]:
            best = {
                "quantity": name,
                "ratio": float(ratio[k, j]),
                "packet": int(k),
                "joint": int(j),
                "value": float(series[name][k, j]),
                "limit": float(limit[k, j]),
            }
    return best


def _preceding(trace: Mapping[str, np.ndarray], until: int) -> tuple[str, ...]:
    """What the flight recorder shows in the PRECEDING_PACKETS before packet `until` (inclusive)."""
    lo = max(0, until - PRECEDING_PACKETS)
    flags = np.asarray(trace["flags"], dtype=int)[lo : until + 1]
    ticks = np.asarray(trace["tick"], dtype=np.int64)[lo : until + 1]
    found = []
    skipped = int(np.sum(np.maximum(np.diff(ticks) - 1, 0))) if len(ticks) > 1 else 0
    if skipped:
        found.append(f"{skipped} robot cycle(s) without a state or command of ours (lost or late packets)")
    counts = {
        _LATE: "late command(s) the robot continued for",
        _LATE_READ: "late read(s) after a preemption",
        _HELD: "packet(s) without a controller sample (the hardware thread extrapolated, then braked)",
        _LIMITED: "limiter activation(s): the controller's command exceeded the robot's limits",
        _RESYNCED: "resync(s) to the robot's echo",
        _DISTURBED: "packet(s) carrying a test disturbance (AsyncInterface.inject_disturbance)",
    }
    for bit, what in counts.items():
        n = int(np.count_nonzero(flags & bit))
        if n:
            found.append(f"{n} {what}")
    return tuple(found)


def _in_window(trace: Mapping[str, np.ndarray], context: Sequence[tuple[int, str]]) -> tuple[str, ...]:
    """The context entries within the flight recorder's span, with how long before its last packet."""
    if not context or "read_ns" not in trace or len(trace["read_ns"]) == 0:
        return ()
    first_ns, last_ns = int(trace["read_ns"][0]), int(trace["read_ns"][-1])
    return tuple(
        f"{what} {(last_ns - ns) * 1e-6:.0f} ms before the last packet"
        for ns, what in sorted(context)
        if first_ns <= ns <= last_ns
    )


def _silence(trace: Mapping[str, np.ndarray], detected_ns: int | None) -> tuple[str, ...]:
    """The link's silence after the last packet, when it is longer than a few robot cycles."""
    if detected_ns is None or "read_ns" not in trace or len(trace["read_ns"]) == 0:
        return ()
    silent_ms = (int(detected_ns) - int(trace["read_ns"][-1])) * 1e-6
    if silent_ms < SILENT_MS:
        return ()
    return (
        f"no state from the robot for {silent_ms:.0f} ms after the last packet (until the fault was seen)",
    )


def _advice(quantity: str | None, preceded_by: Sequence[str], joint_name: str | None) -> str:
    """What the user can change, for the cause the evidence points to (the first that applies)."""
    text = " ".join(preceded_by)
    if "test disturbance" in text:
        return "A test disturbance was added to the command on purpose: nothing to change"
    if quantity == "link" or "lost or late" in text or "late command" in text or "no state" in text:
        return (
            "Commands did not reach the robot in time: check the machine and the link with "
            "`jtac doctor --robot-ip <ip>` (real-time kernel, SCHED_FIFO, a dedicated NIC without "
            "interrupt coalescing or power saving)"
        )
    if "without a controller sample" in text:
        return (
            "The controller thread fell behind (no sample for the hardware thread): give it a core and "
            "SCHED_FIFO (`realtime_priority`, `cpu_affinity`), and check `jtac doctor`"
        )
    if quantity == "position":
        return f"The command left {joint_name}'s range: check the goal's positions or the custom law's output"
    if "limiter activation" in text:
        return (
            "The command asked for more than the robot allows and the limiter had to cut it: slow the "
            "trajectory (time_scale, longer durations), lower stop_accelerations, or smooth the "
            "stream's input"
        )
    if quantity == "measured":
        return (
            "A contact, a collision threshold or a payload the robot does not know: check "
            "collision_behavior, the end effector's mass, and what the arm touched"
        )
    return "The command itself stepped within a cycle: please report it with the saved trace"


def explain(
    message: str,
    trace: Mapping[str, np.ndarray],
    robot: str = "fr3",
    trace_path: str | None = None,
    detected_ns: int | None = None,
    context: Sequence[tuple[int, str]] = (),
) -> Explanation:
    """The plain statement of a reflex: libfranka's `message` and the flight recorder `trace` (the
    columns of ``packet_trace()``: at least tick, flags and q_cmd; a controller recording's time and
    q_cmd work too, without flags). detected_ns: the host steady clock when the fault was seen [ns]
    (time.monotonic_ns()): how long the link was silent after the last packet. context: what the
    controller did, (host steady clock [ns], what) — law switches, a stream's last input — of which
    those within the trace are named with how long before the last packet they were."""
    names = reflex_names(message)
    known = [REFLEX_QUANTITIES[n] for n in names if n in REFLEX_QUANTITIES]
    if not known and _LINK_MESSAGE.search(message or ""):
        known = ["link"]  # libfranka's own timeout or network error: no reflex, the link went silent
    # A reflex on the command explains one on the measured motion it caused, named beside it.
    quantity = next((q for q in known if q in _UNITS), known[0] if known else None)
    spec = robots.robot_spec(robot)
    trace = _as_trace(trace)
    if len(trace["q_cmd"]) == 0:
        return Explanation(names, quantity, advice="The flight recorder is empty", trace_path=trace_path)
    worst = _worst(trace, quantity, spec) if quantity not in ("link", "measured") else {}
    if worst and quantity is None and worst["ratio"] <= 1.0:
        worst = {}  # no reflex named and no command past a limit: nothing of the command to blame
    last = len(trace["q_cmd"]) - 1
    preceded = _preceding(trace, worst.get("packet", last)) + _silence(trace, detected_ns)
    preceded += _in_window(trace, context)
    joint_name = spec.joint_names[worst["joint"]] if worst else None
    found_quantity = worst.get("quantity", quantity) if quantity is None else quantity
    return Explanation(
        reflexes=names,
        quantity=found_quantity,
        joint=worst.get("joint"),
        joint_name=joint_name,
        value=worst.get("value"),
        limit=worst.get("limit"),
        packet_offset=worst["packet"] - last if worst else None,
        preceded_by=preceded,
        advice=_advice(found_quantity, preceded, joint_name),
        trace_path=trace_path,
    )


def _as_trace(data: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A packet trace as is; a controller recording (time [s], q_cmd) as one: ticks from its times at
    1 ms, no flags."""
    if "tick" in data and "flags" in data:
        return {k: np.asarray(v) for k, v in data.items()}
    t = np.asarray(data["time"], dtype=float)
    return {
        "tick": np.round(t / 0.001).astype(np.int64),
        "flags": np.zeros(len(t), dtype=np.uint8),
        "q_cmd": np.asarray(data["q_cmd"], dtype=float),
    }


def fault_dir() -> Path:
    """Where save_trace() writes by default (FAULT_DIR_ENV, else the XDG state directory)."""
    if os.environ.get(FAULT_DIR_ENV):
        return Path(os.environ[FAULT_DIR_ENV])
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "jtac" / "faults"


def save_trace(
    trace: Mapping[str, np.ndarray],
    message: str,
    robot: str,
    directory: str | Path | None = None,
    detected_ns: int | None = None,
) -> Path:
    """Writes the flight recorder and the fault's message, robot and detection time as
    ``fault-<UTC time>.npz`` (its ``meta``: JSON); returns the path."""
    folder = Path(directory) if directory is not None else fault_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"{time.time() % 1:.6f}"[1:]
    path = folder / f"fault-{stamp}.npz"
    meta = json.dumps(
        {"message": message, "robot": robot, "detected_ns": detected_ns, "saved_unix_s": time.time()}
    )
    np.savez(path, meta=np.array(meta), **{k: np.asarray(v) for k, v in trace.items()})
    return path


def load_trace(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(columns, meta) of a saved trace; a controller recording gives ({its columns}, {})."""
    with np.load(Path(path), allow_pickle=False) as archive:
        columns = {k: archive[k] for k in archive.files if k != "meta"}
        meta = json.loads(str(archive["meta"])) if "meta" in archive.files else {}
    return columns, meta
