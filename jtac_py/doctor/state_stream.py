"""The "state stream" line (``--robot-ip``): the robot's 1 kHz state stream as this machine receives it,
read-only.

pylibfranka's ``Robot(ip).read_once()`` in a loop for ``seconds``: no ``control()``, no motion, no
setting is changed. Each state carries the robot's own clock (``RobotState.time``, 1 ms steps): a step
of more than 1 ms between two states read one after the other is a state this machine did not get (lost
on the link, or superseded while this loop was late: libfranka hands over the newest). The intervals
between the states' arrivals on this machine's clock, less the robot clock's step between them (so that
a lost state is not counted as jitter too), give the jitter.
"""

from __future__ import annotations

import itertools
import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from jtac_py.doctor.report import Check, Verdict

PERIOD_MS = 1
JITTER_WARN_P99_US = 500.0  # |arrival interval - robot clock step| at p99
LOST_FAIL_FRACTION = 0.01
LONGEST_GAP_FAIL_MS = 20  # franka-sim aborts a motion after 20 cycles without a command
VERIFIED_STREAM = (
    "verified on franka-sim over loopback (test/franka/test_doctor_on_franka_sim.py: no Move reaches the "
    "server, the robot stays Idle); a real FR3 over a real NIC is unverified"
)


@dataclass(frozen=True)
class StreamStats:
    """What one read-only run of the state stream measured."""

    states: int
    lost_states: int  # robot-clock steps beyond 1 ms, added up
    longest_gap_ms: int  # the largest step of the robot's clock between two states read
    interval_median_us: float  # between two arrivals on this machine's clock
    jitter_p99_us: float  # p99 of |arrival interval - the robot clock's step| (a lost state is no jitter)
    interval_max_us: float
    robot_mode_before: str
    robot_mode_after: str
    first_robot_time_ms: int  # the robot's clock at the first and the last state read
    last_robot_time_ms: int


def _p99(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def stream_stats(
    robot_times_ms: Sequence[int], arrivals_ns: Sequence[int], mode_before: str, mode_after: str
) -> StreamStats:
    """Lost states from the robot's clock, jitter from the arrivals (ValueError for fewer than 2 states)."""
    if len(robot_times_ms) < 2 or len(arrivals_ns) != len(robot_times_ms):
        raise ValueError("at least two states, each with its arrival time, are needed")
    steps_ms = [b - a for a, b in itertools.pairwise(robot_times_ms)]
    intervals_us = [(b - a) / 1e3 for a, b in itertools.pairwise(arrivals_ns)]
    ordered = sorted(intervals_us)
    return StreamStats(
        states=len(robot_times_ms),
        lost_states=sum(max(0, s - PERIOD_MS) for s in steps_ms),
        longest_gap_ms=max(steps_ms),
        interval_median_us=statistics.median(ordered),
        jitter_p99_us=_p99([abs(i - s * 1e3) for i, s in zip(intervals_us, steps_ms, strict=True)]),
        interval_max_us=ordered[-1],
        robot_mode_before=mode_before,
        robot_mode_after=mode_after,
        first_robot_time_ms=robot_times_ms[0],
        last_robot_time_ms=robot_times_ms[-1],
    )


def stream_verdict(stats: StreamStats) -> Verdict:
    """fail: more than 1 % lost or a gap of 20 ms; warn: any lost or jitter p99 >= 500 µs; else ok."""
    expected = stats.states + stats.lost_states
    if stats.lost_states > LOST_FAIL_FRACTION * expected or stats.longest_gap_ms >= LONGEST_GAP_FAIL_MS:
        return "fail"
    if stats.lost_states or stats.jitter_p99_us >= JITTER_WARN_P99_US:
        return "warn"
    return "ok"


def _mode_name(mode: Any) -> str:
    return str(mode).rsplit(".", 1)[-1]


def read_state_stream(robot_ip: str, seconds: float) -> StreamStats:
    """Connects with pylibfranka and reads states for `seconds`; never starts a motion."""
    import pylibfranka

    robot = pylibfranka.Robot(robot_ip, pylibfranka.RealtimeConfig.kIgnore)
    try:
        first = robot.read_once()
        times_ms = [round(first.time.to_sec() * 1e3)]
        arrivals_ns = [time.monotonic_ns()]
        end_ns = arrivals_ns[0] + int(seconds * 1e9)
        state = first
        while arrivals_ns[-1] < end_ns:
            state = robot.read_once()
            arrivals_ns.append(time.monotonic_ns())
            times_ms.append(round(state.time.to_sec() * 1e3))
    finally:
        del robot  # closes the connection
    return stream_stats(times_ms, arrivals_ns, _mode_name(first.robot_mode), _mode_name(state.robot_mode))


def stream_text(stats: StreamStats, seconds: float) -> str:
    return (
        f"{stats.states} states in {seconds:g} s, {stats.lost_states} lost (longest step of the robot's "
        f"clock {stats.longest_gap_ms} ms); arrival interval median {stats.interval_median_us:.0f} µs, max "
        f"{stats.interval_max_us:.0f} µs, jitter p99 {stats.jitter_p99_us:.0f} µs; robot mode "
        f"{stats.robot_mode_before} before, {stats.robot_mode_after} after; read_once only (no motion)"
    )


def check_state_stream(robot_ip: str | None, seconds: float, reachable: bool = True) -> Check:
    """reachable: False when the compatibility line's handshake got no answer (libfranka would wait)."""
    name = "state stream"
    if robot_ip is None:
        return Check(name, "not measured: no robot address given", "skip", "jtac doctor --robot-ip <address>")
    if seconds <= 0:
        return Check(
            name, "not measured (--seconds 0)", "skip", "jtac doctor --robot-ip <address> --seconds 10"
        )
    if not reachable:
        value = "not measured: the robot did not answer the handshake (see the compatibility line)"
        return Check(name, value, "skip", "fix the compatibility line first")
    try:
        stats = read_state_stream(robot_ip, seconds)
    except ImportError as exc:
        return Check(
            name, f"not measured: pylibfranka does not import ({exc})", "skip", "pip install pylibfranka"
        )
    except (RuntimeError, ValueError, OSError) as exc:  # libfranka's NetworkException is a RuntimeError
        value = f"no state stream from {robot_ip} ({type(exc).__name__}: {exc})"
        fix = (
            "check the robot route line, that FCI is active in Desk, and that no firewall drops UDP from "
            "the robot"
        )
        return Check(name, value, "fail", fix, {"verified": VERIFIED_STREAM})
    verdict = stream_verdict(stats)
    data = asdict(stats) | {"seconds": seconds, "verified": VERIFIED_STREAM}
    fix = (
        ""
        if verdict == "ok"
        else (
            "see the robot route, NIC interrupts, NIC coalescing and C-states lines; use a direct cable to a "
            "dedicated port; keep other traffic off that interface"
        )
    )
    return Check(name, stream_text(stats, seconds), verdict, fix, data)
