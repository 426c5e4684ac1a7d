"""The timing lines: a Python thread's wake-up lateness at 1 kHz, and jtac's own hardware thread serving
the simulated FR3 in real time."""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jtac_py.doctor.report import Check, Verdict
from jtac_py.doctor.scheduling import FIFO_PRIORITY

DEFAULT_SECONDS = 10.0
PERIOD_NS = 1_000_000  # the robot's 1 kHz cycle
JITTER_OK_P99_US = 100.0
JITTER_WARN_P99_US = 500.0
# franka-sim aborts a motion (communication_constraints_violation) after 20 cycles without a command; a
# real FCI may be stricter, so anything near this is a failure.
LOST_CYCLES_ABORT = 20
MISSED_FAIL_FRACTION = 0.01


@dataclass(frozen=True)
class JitterStats:
    """Wake-up lateness (actual wake − deadline) over a run of 1 ms periods."""

    periods: int
    median_us: float
    p99_us: float
    max_us: float
    late_periods: int  # periods woken more than one period late: cycles a 1 kHz loop would miss


def jitter_stats(lateness_ns: Sequence[int], period_ns: int = PERIOD_NS) -> JitterStats:
    """Median, p99 (nearest rank) and max of the lateness [µs], and the periods later than one period."""
    if not lateness_ns:
        raise ValueError("no periods measured")
    ordered = sorted(lateness_ns)
    n = len(ordered)
    mid = n // 2
    median_ns = ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    p99_ns = ordered[max(0, math.ceil(0.99 * n) - 1)]
    return JitterStats(
        periods=n,
        median_us=median_ns / 1e3,
        p99_us=p99_ns / 1e3,
        max_us=ordered[-1] / 1e3,
        late_periods=sum(1 for x in ordered if x > period_ns),
    )


def jitter_verdict(stats: JitterStats) -> Verdict:
    """p99 < 100 µs ok, < 500 µs warn, else fail; a wake-up more than a period late is at least a warn."""
    if stats.p99_us >= JITTER_WARN_P99_US:
        return "fail"
    if stats.p99_us >= JITTER_OK_P99_US or stats.late_periods > 0:
        return "warn"
    return "ok"


def _measure_lateness(seconds: float, priority: int) -> tuple[list[int], bool]:
    """Lateness [ns] of each 1 ms deadline on a fresh thread; True if it ran at SCHED_FIFO."""
    periods = max(1, round(seconds * 1e9 / PERIOD_NS))
    lateness_ns = [0] * periods  # preallocated: the loop itself allocates nothing the GC would track
    fifo = {"granted": False}

    def loop() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
            fifo["granted"] = True
        except OSError:
            pass
        try:
            start_ns = time.monotonic_ns() + PERIOD_NS
            for k in range(periods):
                deadline_ns = start_ns + k * PERIOD_NS
                now_ns = time.monotonic_ns()
                if deadline_ns > now_ns:
                    # Since Python 3.11 time.sleep is clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)
                    # to now + timeout: the deadline, give or take the few hundred ns of this line.
                    time.sleep((deadline_ns - now_ns) * 1e-9)
                lateness_ns[k] = time.monotonic_ns() - deadline_ns
        finally:
            if fifo["granted"]:
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))

    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collection in the middle would be counted as the machine's lateness
    try:
        thread = threading.Thread(target=loop, name="jtac-doctor-jitter")
        thread.start()
        thread.join()
    finally:
        if gc_was_enabled:
            gc.enable()
    return lateness_ns, fifo["granted"]


def check_wakeup_jitter(seconds: float, realtime_fix: str) -> Check:
    name = "wake-up jitter"
    if seconds <= 0:
        return Check(name, "not measured (--seconds 0)", "skip", f"jtac doctor --seconds {DEFAULT_SECONDS:g}")
    lateness_ns, fifo = _measure_lateness(seconds, FIFO_PRIORITY)
    stats = jitter_stats(lateness_ns)
    verdict = jitter_verdict(stats)
    priority = f"SCHED_FIFO {FIFO_PRIORITY}" if fifo else "normal priority (SCHED_FIFO refused)"
    value = (
        f"lateness median {stats.median_us:.1f} µs, p99 {stats.p99_us:.1f} µs, max {stats.max_us:.1f} µs "
        f"of a 1000 µs budget; {stats.late_periods} of {stats.periods} periods over 1 ms late; "
        f"Python thread at {priority} over {seconds:g} s (Python-level: an upper bound on a native thread)"
    )
    data = dataclasses.asdict(stats) | {"fifo": fifo, "seconds": seconds}
    return Check(name, value, verdict, "" if verdict == "ok" else realtime_fix, data)


def _native_loop(seconds: float, priority: int) -> dict[str, Any]:
    """Runs jtac's hardware thread over the simulated FR3 on its real-time clock for `seconds`."""
    from jtac_py import _native, robots

    device = _native.MujocoDevice(robots.mjcf_xml("fr3"), name_prefix="fr3", clock="realtime")
    interface = _native.AsyncInterface(device, fifo_priority=priority, late_commands="applied")
    started_s = time.monotonic()
    interface.start()
    try:
        time.sleep(seconds)
    finally:
        interface.stop()
    elapsed_s = time.monotonic() - started_s
    counters = interface.counters()
    ticks = interface.packet_trace()["tick"]
    # The device steps one tick per period of its own clock: ticks beyond the packets served are
    # cycles the thread did not answer.
    last_tick = int(ticks[-1]) if len(ticks) else int(counters["packets"])
    return {
        "packets": int(counters["packets"]),
        "missed_cycles": max(0, last_tick - int(counters["packets"])),
        "max_command_interval_ms": float(counters["max_write_interval_s"]) * 1e3,
        "device_errors": int(counters["device_errors"]),
        "exit_status": str(interface.exit_status).rsplit(".", 1)[-1],
        "elapsed_s": elapsed_s,
    }


def check_native_loop(seconds: float, fifo_granted: bool, realtime_fix: str) -> Check:
    name = "native loop"
    if seconds <= 0:
        return Check(name, "not measured (--seconds 0)", "skip", f"jtac doctor --seconds {DEFAULT_SECONDS:g}")
    priority = FIFO_PRIORITY if fifo_granted else 0  # 0: no refusal warning from the thread on stderr
    try:
        result = _native_loop(seconds, priority)
    except ImportError as exc:
        return Check(
            name, f"not measured: jtac_py._native does not import ({exc})", "skip", "scripts/setup.sh"
        )
    except (RuntimeError, ValueError, KeyError, AttributeError, TypeError) as exc:
        return Check(
            name,
            f"not measured: the simulated arm did not run ({type(exc).__name__}: {exc})",
            "warn",
            "check the build: scripts/setup.sh, then make test",
        )
    cycles = result["packets"] + result["missed_cycles"]
    at = f"SCHED_FIFO {FIFO_PRIORITY}" if priority else "normal priority (SCHED_FIFO refused)"
    value = (
        f"{result['packets']} packets, {result['missed_cycles']} cycles missed, largest interval between "
        f"commands {result['max_command_interval_ms']:.2f} ms; jtac's hardware thread at {at} serving the "
        f"simulated FR3 in real time for {result['elapsed_s']:.1f} s"
    )
    data = dict(result)
    if result["exit_status"] != "OK" or result["device_errors"]:
        value += f"; ended {result['exit_status']} with {result['device_errors']} device errors"
        return Check(name, value, "warn", "check the build: scripts/setup.sh, then make test", data)
    missed = result["missed_cycles"]
    if missed == 0:
        return Check(name, value, "ok", "", data)
    gap_cycles = result["max_command_interval_ms"] / (PERIOD_NS / 1e6)
    if missed > MISSED_FAIL_FRACTION * cycles or gap_cycles >= LOST_CYCLES_ABORT:
        return Check(name, value, "fail", realtime_fix, data)
    return Check(name, value, "warn", realtime_fix, data)
