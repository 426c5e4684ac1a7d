"""bench_franka_sim.py's constants and the helpers every part uses: profiles, results, scheduling,
recovery from a reflex, the GIL hog and the gap measures.

Imported by the parent and by every worker process, the aiofranka worker included (it runs in
.venv-aiofranka, which has no jtac): standard library, numpy and the franka-sim harness only.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "franka_sim"))
from franka_sim_harness import clear_reflex, wait_no_clients  # noqa: E402

AIOFRANKA_PYTHON = ROOT / ".venv-aiofranka" / "bin" / "python"
OUT_DIR = ROOT / "build" / "bench" / "franka_sim"
# franka-sim's addresses: 127.<40 + 16k>.<pid-derived> (franka_sim_harness.candidate_ips), apart from
# the tests' 127.10-21, bench_franka_faults.py's 127.72 and 127.0.0.1.
SECOND_OCTET = 40
# How long a part waits for the previous part's client to leave franka-sim [s]; then it restarts it.
CLIENT_LEFT_TIMEOUT_S = 3.0

# Variants: (key, label, chrt priority of the server, of the clients)
VARIANTS = {
    "fifo": ("SCHED_FIFO (server chrt -f 50, clients chrt -f 80)", 50, 80),
    "normal": ("normal priority (no chrt, jtac/aiofranka realtime_priority 0)", 0, 0),
}
# The motion of (b), (c) and the stall runs: there and back (rad), as in test_jtac_on_franka_sim.py.
DELTA_RAD = np.array([0.2, -0.15, 0.15, 0.2, -0.2, 0.15, 0.3])
# Figure 6's source: joint 1 (index 0) moves q0 + A(1 - cos wt) on the robot clock, sampled at 125 Hz.
STREAM_HZ = 125
STREAM_AMPLITUDE_RAD = 0.3
STREAM_OMEGA_RAD_S = 2.5
LATENCY_WINDOW = 1024  # packets: AsyncInterface.latency() covers the last 1024
SUCCESS_WINDOW = 100  # control_command_success_rate: the last 100 commands
WARMUP = 200  # packets of (a) and (b) not measured: (c) starts measuring 0.2 s after its goal
# Table 1 of the fer-ros2 paper: LF (bare libfranka), RS (synchronous ROS 2), RA (asynchronous ROS 2)
PAPER = {
    "median": (12.0, 65.0, 13.0),
    "p99": (40.0, 137.0, 48.0),
    "max": (87.0, 2174.0, 141.0),
    "unserved": (0.18, 5.91, 0.41),
}
AIOFRANKA_DOC_MS = (1.2, 1.3, 1.2)  # aiofranka's documentation, native loop, its fake robot
STALL_CASES = (
    ("idle", "Python idles"),
    ("event_loop", "an event loop blocked 300 ms"),
    ("gil", "a thread holds the GIL 300 ms"),
)


def profile(quick: bool) -> dict[str, float]:
    if quick:
        return {"table_s": 2.0, "stream_s": 2.0, "idle_s": 0.3, "block_s": 0.3, "gil_s": 0.3, "repeats": 1}
    return {"table_s": 4.0, "stream_s": 5.0, "idle_s": 1.0, "block_s": 0.3, "gil_s": 0.3, "repeats": 3}


# ================================================================================ helpers (any venv)


def dump_result(path: Path, scalars: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".json").write_text(json.dumps(scalars, indent=1, default=float))
    if arrays:
        np.savez(path.with_suffix(".npz"), **arrays)


def cycle_space(stamps: np.ndarray, robot_ms: np.ndarray, success: np.ndarray, t0: float, t1: float) -> dict:
    """Robot ticks the client skipped (gaps in the robot time it read) between t0 and t1 (+ the command
    a stall delayed), and the lowest control_command_success_rate until 0.1 s after t1."""
    i0 = max(int(np.searchsorted(stamps, t0)) - 1, 0)
    i1 = min(int(np.searchsorted(stamps, t1)) + 1, len(stamps))
    deltas = np.diff(robot_ms[i0:i1])
    i2 = min(int(np.searchsorted(stamps, t1 + 0.1)) + 1, len(stamps))
    rates = success[i0:i2]
    return {
        "unserved_ticks": int(np.clip(deltas - 1, 0, None).sum()),
        "success_rate": float(np.nanmin(rates)) if len(rates) else float("nan"),
    }


def current_policy() -> str:
    try:
        if os.sched_getscheduler(0) == os.SCHED_FIFO:
            return f"SCHED_FIFO {os.sched_getparam(0).sched_priority}"
    except (OSError, AttributeError):
        return "unknown"
    return "normal"


def restore_policy(variant: str) -> str:
    """Puts the calling thread back to the variant's scheduling; returns what it was.

    libfranka's Robot() (RealtimeConfig.kIgnore too) sets the thread that constructs it to SCHED_FIFO 99
    whenever it may (root, or an rtprio limit of 99), and every thread started from that thread later
    inherits it (jtac's with realtime_priority 0, aiofranka's, a GIL hog). Each worker calls this right
    after a Robot is constructed, so that the variants are what they say.
    """
    was = current_policy()
    client = VARIANTS[variant][2]
    if client:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(client))
    else:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return was


def recover(ip: str, variant: str) -> str:
    """Connects once, clears a reflex left by an earlier client (automatic_error_recovery), disconnects."""
    import pylibfranka as plf

    robot = plf.Robot(ip, plf.RealtimeConfig.kIgnore)
    libfranka_set = restore_policy(variant)
    note = "recovered from Reflex" if clear_reflex(plf, robot) else ""
    del robot
    gc.collect()
    wait_no_clients(ip, CLIENT_LEFT_TIMEOUT_S)
    return f"{note}; libfranka's Robot() set the thread to {libfranka_set}".lstrip("; ")


def gil_hog_size(target_s: float, n: int = 200_000) -> int:
    """How many ints make sorted() of a random list take about target_s (the parent calibrates)."""
    for _ in range(6):
        took = run_gil_hog(gil_hog_list(n))
        if abs(took - target_s) < 0.05 * target_s:
            break
        n = max(10_000, int(n * target_s / max(took, 1e-4)))
    return n


def gil_hog_list(n: int) -> list[int]:
    """sorted() of this list is one C call that holds the GIL throughout."""
    return np.random.default_rng(7).integers(0, 2**30, n).tolist()


def run_gil_hog(data: list[int]) -> float:
    """Runs sorted(data) in a thread of its own; returns how long it held the GIL [s]."""
    took: list[float] = []

    def run() -> None:
        # Normal priority in both variants: what is measured is a thread that holds the GIL, not a
        # CPU-bound SCHED_FIFO 80 thread (inherited from `chrt -f 80`) starving franka-sim at 50.
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        t0 = time.perf_counter()
        sorted(data)
        took.append(time.perf_counter() - t0)

    thread = threading.Thread(target=run, name="gil-hog")
    thread.start()
    thread.join()
    return took[0]


def block_event_loop(seconds: float) -> float:
    """asyncio.run() of a coroutine that blocks its loop with time.sleep (the mistake being measured)."""

    async def blocking() -> float:
        await asyncio.sleep(0)
        t0 = time.perf_counter()
        time.sleep(seconds)
        return time.perf_counter() - t0

    return asyncio.run(blocking())


def max_gap(stamps_s: np.ndarray, t0: float, t1: float) -> float:
    """Largest interval between consecutive stamps that overlaps [t0, t1] [s] (nan without stamps)."""
    if len(stamps_s) < 2:
        return float("nan")
    i0 = max(int(np.searchsorted(stamps_s, t0)) - 1, 0)
    i1 = min(int(np.searchsorted(stamps_s, t1)) + 1, len(stamps_s))
    window = stamps_s[i0:i1]
    return float(np.diff(window).max()) if len(window) > 1 else float("nan")
