"""jtac on franka-sim: the paper's Table 1, Figures 2 and 6, and Python stalls against aiofranka.

franka-sim 1.1.7 (test/franka: the FR3 wire protocol over MuJoCo, enforcement ON: 20 lost cycles in a
row abort with communication_constraints_violation, velocity/acceleration/jerk discontinuities abort
with a reflex) runs on a loopback address of this run (test/franka/sim_server.py, started here the way
test/franka/conftest.py starts it, stopped at the end); every robot-facing client talks to it through
pylibfranka 0.21.3 exactly as it would talk to an FR3.

1. Table 1 of the fer-ros2 paper (the asynchronous Franka ROS 2 stack) on franka-sim. dEXT = state
   received -> command sent (readOnce returned -> writeOnce returned) [µs]: median / p99 over the
   last 1024 packets, max over the window;
   unserved cycles = robot ticks without a new command [%], counted two ways: from gaps in the robot
   time of the states the client read (libfranka's time is the state's message_id: a gap is a state
   the client never saw), and as 1 - control_command_success_rate (franka-sim's count of commands
   that did not answer their state before the next one went out, sampled every 100 cycles). Three
   configurations, a fresh connection each, about 4 s each (the first 0.2 s not measured):
   (a) a bare pylibfranka Python loop: readOnce -> writeOnce of the held position;
   (b) the synchronous baseline: the same loop with the JTAC controller inline
       (jtac_py.config.make_controller, activated: readOnce -> core.update -> writeOnce), a quintic
       goal there and back;
   (c) jtac's asynchronous interface: Controller(FrankaArm(ip)) with the same goal; dEXT from
       controller.timing()["dext"] / ["hardware"], unserved from ["loop"]["unserved_cycles"], and the
       FrankaDevice's command_success_rate sampled every 100 ms.
2. Figure 2: the read-to-read interval per configuration: (a), (b) from the loop's own timestamps;
   (c) from a recording's interval_us, i.e. the CONTROLLER thread's interval (the hardware thread
   keeps no per-packet history: its largest write-to-write interval is drawn as a line).
3. Figure 6: a 125 Hz source (a smooth joint-1 motion sampled at 125 Hz on the host clock, as a policy
   would): the staircase a naive loop would send (the newest sample held at every robot tick;
   computed, never sent: on enforced franka-sim it aborts, franka_hw/README.md) against jtac's
   rate-matched 1 kHz command (Controller.stream(); q_cmd / dq_cmd of a recording at the controller,
   before the hardware thread's limiter, and the arm's measured q / dq).
4. Python stalls: the largest gap between two commands [ms] while Python idles / blocks an event loop
   300 ms / runs a thread that holds the GIL 300 ms, and the robot ticks the client skipped meanwhile,
   for jtac's native loop (a goal running; AsyncInterface.reset_peaks() and
   counters()["max_write_interval_s"]), aiofranka 0.9.0's native loop
   (aiofranka.Controller(aiofranka.Robot(ip)) holding the arm in its default impedance mode, in its
   own venv .venv-aiofranka made by scripts/setup_aiofranka.sh, run as a subprocess; gaps from
   record()'s wall_time + busy; the event loop blocked is aiofranka's own, which runs its watcher),
   and the synchronous baseline (b) in a Python thread. The full run repeats each 3 times and shows
   the worst. The GIL-holding thread runs at normal priority in both variants.

Every part runs twice: "fifo" (franka-sim under `chrt -f 50`, every client process under
`chrt -f 80`; jtac's threads and aiofranka's loop at their default SCHED_FIFO 80 / 70) and "normal"
(everything at normal priority, jtac realtime_priority=0, aiofranka realtime_priority = 0). SCHED_FIFO
needs root or an rtprio limit; without it the "fifo" variant says "not measured". libfranka's Robot()
sets the thread that constructs it to SCHED_FIFO 99 whenever it may (RealtimeConfig.kIgnore too), and
threads started from it inherit that: every worker puts the thread back to its variant's policy right
after connecting (_restore_policy), and records what libfranka had set.

franka-sim is a Python process on the same 2 cores: it publishes at 0.8-1.0 kHz and late whenever it is
starved, so a wall-clock gap between two commands includes the server's own lateness. The robot
ticks skipped (cycle space) separate the two.

A benchmark, not a test: exit code 0 always. Tables on stdout; figures, summary.json, raw data and
logs in build/bench/franka_sim/.

    .venv/bin/python bench/bench_franka_sim.py [--quick] [--variants fifo,normal] [--no-aiofranka]

The same file is each client process (--worker PART): the parent starts franka-sim, then one worker
per part, so that a hang or a reflex stays in its process. The aiofranka worker runs in .venv-aiofranka
(which has no jtac): top-level imports are the standard library and numpy only.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import gc
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_common import fifo_priorities

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "test" / "franka"
SIM_PYTHON = Path(os.environ.get("JTAC_VENV_SIM", ROOT / ".venv-sim")) / "bin" / "python"
SIM_SERVER = HARNESS / "sim_server.py"
SIM_MODEL = HARNESS / "fr3_nomesh.xml"
AIOFRANKA_PYTHON = ROOT / ".venv-aiofranka" / "bin" / "python"
OUT_DIR = ROOT / "build" / "bench" / "franka_sim"
FCI_PORT = 1337
READY_TIMEOUT_S = 30.0

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


def _profile(quick: bool) -> dict[str, float]:
    if quick:
        return {"table_s": 2.0, "stream_s": 2.0, "idle_s": 0.3, "block_s": 0.3, "gil_s": 0.3, "repeats": 1}
    return {"table_s": 4.0, "stream_s": 5.0, "idle_s": 1.0, "block_s": 0.3, "gil_s": 0.3, "repeats": 3}


# ================================================================================ helpers (any venv)


def _dump(path: Path, scalars: dict[str, Any], arrays: dict[str, np.ndarray] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".json").write_text(json.dumps(scalars, indent=1, default=float))
    if arrays:
        np.savez(path.with_suffix(".npz"), **arrays)


def _established_to(ip: str, port: int = FCI_PORT) -> int:
    """TCP connections to ip:port in state ESTABLISHED (/proc/net/tcp), as test/franka/conftest.py."""
    want = f"{int(ipaddress.IPv4Address(ip)).to_bytes(4, 'big')[::-1].hex().upper()}:{port:04X}"
    with open("/proc/net/tcp") as table:
        next(table)
        return sum(1 for line in table if line.split()[1] == want and line.split()[3] == "01")


def _wait_no_clients(ip: str, timeout_s: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while _established_to(ip):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _cycle_space(stamps: np.ndarray, robot_ms: np.ndarray, success: np.ndarray, t0: float, t1: float) -> dict:
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


def _policy() -> str:
    try:
        if os.sched_getscheduler(0) == os.SCHED_FIFO:
            return f"SCHED_FIFO {os.sched_getparam(0).sched_priority}"
    except (OSError, AttributeError):
        return "unknown"
    return "normal"


def _restore_policy(variant: str) -> str:
    """Puts the calling thread back to the variant's scheduling; returns what it was.

    libfranka's Robot() (RealtimeConfig.kIgnore too) sets the thread that constructs it to SCHED_FIFO 99
    whenever it may (root, or an rtprio limit of 99), and every thread started from that thread later
    inherits it (jtac's with realtime_priority 0, aiofranka's, a GIL hog). Each worker calls this right
    after a Robot is constructed, so that the variants are what they say.
    """
    was = _policy()
    client = VARIANTS[variant][2]
    if client:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(client))
    else:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    return was


def _recover(ip: str, variant: str) -> str:
    """Connects once, clears a reflex left by an earlier client (automatic_error_recovery), disconnects."""
    import pylibfranka as plf

    robot = plf.Robot(ip, plf.RealtimeConfig.kIgnore)
    libfranka_set = _restore_policy(variant)
    mode = robot.read_once().robot_mode
    note = ""
    if mode == plf.RobotMode.Reflex:
        robot.automatic_error_recovery()
        note = "recovered from Reflex"
    del robot
    gc.collect()
    _wait_no_clients(ip)
    return f"{note}; libfranka's Robot() set the thread to {libfranka_set}".lstrip("; ")


def _gil_hog_size(target_s: float, n: int = 200_000) -> int:
    """How many ints make sorted() of a random list take about target_s (the parent calibrates)."""
    for _ in range(6):
        took = _hog(_gil_hog_list(n))
        if abs(took - target_s) < 0.05 * target_s:
            break
        n = max(10_000, int(n * target_s / max(took, 1e-4)))
    return n


def _gil_hog_list(n: int) -> list[int]:
    """sorted() of this list is one C call that holds the GIL throughout."""
    return np.random.default_rng(7).integers(0, 2**30, n).tolist()


def _hog(data: list[int]) -> float:
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


def _block_event_loop(seconds: float) -> float:
    """asyncio.run() of a coroutine that blocks its loop with time.sleep (the mistake being measured)."""

    async def blocking() -> float:
        await asyncio.sleep(0)
        t0 = time.perf_counter()
        time.sleep(seconds)
        return time.perf_counter() - t0

    return asyncio.run(blocking())


def _max_gap(stamps_s: np.ndarray, t0: float, t1: float) -> float:
    """Largest interval between consecutive stamps that overlaps [t0, t1] [s] (nan without stamps)."""
    if len(stamps_s) < 2:
        return float("nan")
    i0 = max(int(np.searchsorted(stamps_s, t0)) - 1, 0)
    i1 = min(int(np.searchsorted(stamps_s, t1)) + 1, len(stamps_s))
    window = stamps_s[i0:i1]
    return float(np.diff(window).max()) if len(window) > 1 else float("nan")


# ================================================================================ workers: Table 1


def _leg_s(args: argparse.Namespace, stall: bool = False) -> float:
    """Duration of each half of the there-and-back goal [s]: the same for (b) and (c); it ends ~0.1 s
    before their windows do. For the stall runs it outlasts the phases (a GIL hold can take 3x its
    nominal time on this VM)."""
    if stall:
        return (args.idle_s + args.block_s + 3 * args.gil_s + 1.5) / 2
    return (args.seconds - 0.3) / 2


def _there_and_back(q0: np.ndarray, leg_s: float) -> Any:
    from jtac_py.controller import Trajectory

    there = Trajectory.quintic(q0, q0 + DELTA_RAD, leg_s)
    back = Trajectory.quintic(q0 + DELTA_RAD, q0, leg_s)
    return Trajectory(
        times_s=np.concatenate([there.times_s, np.asarray(back.times_s) + leg_s]),
        positions_rad=np.vstack([there.positions_rad, back.positions_rad]),
        velocities_rad_s=np.vstack([there.velocities_rad_s, back.velocities_rad_s]),
        accelerations_rad_s2=np.vstack([there.accelerations_rad_s2, back.accelerations_rad_s2]),
    )


def _summarise_python_loop(
    read_ns: np.ndarray, write_ns: np.ndarray, robot_ms: np.ndarray, success: np.ndarray
) -> dict[str, Any]:
    dext_us = (write_ns - read_ns) * 1e-3
    last = dext_us[-LATENCY_WINDOW:]
    deltas = np.diff(robot_ms)
    ticks = int(robot_ms[-1] - robot_ms[0])
    unserved = int(np.clip(deltas - 1, 0, None).sum())
    rates = success[::SUCCESS_WINDOW]  # non-overlapping windows of 100 cycles
    r2r_ms = np.diff(read_ns) * 1e-6
    return {
        "median": float(np.median(last)),
        "p99": float(np.percentile(last, 99)),
        "max": float(dext_us.max()),
        "unserved": 100.0 * unserved / max(ticks, 1),
        "unserved_ticks": unserved,
        "ticks": ticks,
        "unserved_rate": 100.0 * (1.0 - float(np.mean(rates))),
        "success_min": float(success.min()),
        "r2r_median_ms": float(np.median(r2r_ms)),
        "r2r_p99_ms": float(np.percentile(r2r_ms, 99)),
        "r2r_max_ms": float(r2r_ms.max()),
        "packets": len(read_ns),
    }


def work_python_loop(args: argparse.Namespace, with_controller: bool) -> None:
    """(a) the bare pylibfranka loop holding the position, or (b) the synchronous JTAC baseline.

    Everything that can be prepared is prepared before the motion starts (the goal, the core); the
    first WARMUP packets are not measured, as (c) starts measuring 0.2 s after its goal.
    """
    import pylibfranka as plf

    out: dict[str, Any] = {"fifo": _policy(), "recovery": _recover(args.ip, args.variant)}
    robot = plf.Robot(args.ip, plf.RealtimeConfig.kIgnore)
    out["libfranka_set"] = _restore_policy(args.variant)
    core = goal = None
    if with_controller:
        from jtac_py import _native
        from jtac_py import config as jtac_config

        values = jtac_config.resolve(
            robot="fr3", ft_sensor_name="", update_rate=1000, default_path_tolerance=0.2,
            default_goal_time_tolerance=1.0,
        )  # fmt: skip
        core = jtac_config.make_controller(values)
        q_rest = np.asarray(robot.read_once().q)
        goal = _native.JtacGoal(_there_and_back(q_rest, _leg_s(args)).to_goal(core.joint_names))
    n = int(args.seconds * 1000)
    read_ns = np.zeros(n, np.int64)
    write_ns = np.zeros(n, np.int64)
    robot_ms = np.zeros(n, np.int64)
    success = np.zeros(n)
    perf = time.perf_counter_ns
    control = robot.start_joint_position_control(plf.ControllerMode.JointImpedance)
    error = goal_result = ""
    k = 0
    try:
        state, _ = control.readOnce()
        command = plf.JointPositions(list(state.q_d))  # (a) holds the robot's desired position
        control.writeOnce(command)
        t_prev = state.time.to_sec()
        if core is not None:  # within the cycle's slack, before the next state
            core.activate()
            submitted = core.submit_goal(goal, t_prev)
            if submitted.code != _native.ResultCode.SUCCESSFUL:
                raise RuntimeError(f"goal refused: {submitted.code.name}: {submitted.message}")
        gc.disable()  # no collection mid-measurement (the loop allocates little)
        for i in range(-WARMUP, n):
            state, _ = control.readOnce()
            t_read = perf()
            if core is not None:
                t = state.time.to_sec()
                o = core.update(t, t - t_prev, np.asarray(state.q), np.asarray(state.dq))
                t_prev = t
                command = plf.JointPositions(o.command_position_rad.tolist())
            control.writeOnce(command)
            if i >= 0:
                write_ns[i] = perf()
                read_ns[i] = t_read
                robot_ms[i] = round(state.time.to_sec() * 1000.0)
                success[i] = state.control_command_success_rate
                k = i + 1
        gc.enable()
        if core is not None:
            for event in core.poll_events():
                if event.type == _native.EventType.GOAL_SUCCEEDED:
                    goal_result = "goal ok"
                elif event.type in (_native.EventType.GOAL_ABORTED, _native.EventType.GOAL_CANCELED):
                    goal_result = f"goal {event.code.name}: {event.message}"
            goal_result = goal_result or "goal not finished"
        state, _ = control.readOnce()
        final = plf.JointPositions(list(state.q_d))
        final.motion_finished = True
        control.writeOnce(final)
    except Exception as exc:  # a reflex (libfranka's ControlException) is a result
        gc.enable()
        error = f"{type(exc).__name__}: {exc}"
    finally:
        del control
        del robot
        gc.collect()
    if k > 10:
        out.update(_summarise_python_loop(read_ns[:k], write_ns[:k], robot_ms[:k], success[:k]))
    out["error"] = error
    out["goal"] = goal_result
    _dump(args.result, out, {"r2r_ms": np.diff(read_ns[:k]) * 1e-6})


def _jtac_controller(args: argparse.Namespace, **overrides: Any) -> tuple[Any, Any]:
    from jtac_py.controller import Controller
    from jtac_py.hardware import FrankaArm

    # franka-sim reports zero external wrench estimates: no sensor, a plain trajectory controller.
    arm = FrankaArm(args.ip, use_estimated_wrench=False, late_commands="applied")  # franka-sim's semantics
    _restore_policy(args.variant)  # before start(): jtac's threads would inherit libfranka's FIFO 99
    params: dict[str, Any] = {"default_path_tolerance": 0.2, "default_goal_time_tolerance": 1.0}
    if args.variant == "normal":
        params["realtime_priority"] = 0
    params.update(overrides)
    return arm, Controller(arm, **params).start()


def _reflex(arm: Any, controller: Any) -> str:
    if controller.hardware_error is not None:
        return controller.hardware_error
    if arm.device is not None and arm.device.has_error:
        return arm.device.last_error or "device error"
    return ""


def work_jtac(args: argparse.Namespace) -> None:
    """(c) jtac's asynchronous interface: Controller(FrankaArm(ip)) with the goal of (b) running."""
    out: dict[str, Any] = {"fifo": _policy(), "recovery": _recover(args.ip, args.variant)}
    arrays: dict[str, np.ndarray] = {}
    arm, c = _jtac_controller(args)
    try:
        out["threads"] = _fifo_threads()
        q0 = np.asarray(c.state.q_cmd)
        with c.record(["time", "tick", "interval_us", "cycle_duration_us"]) as rec:
            handle = c.follow(_there_and_back(q0, _leg_s(args)), wait=False)
            time.sleep(0.2)
            c._interface.reset_peaks()
            t0 = c.timing()
            tick0 = c.state.tick
            rates = []
            t1, tick1 = t0, tick0
            end = time.monotonic() + args.seconds - 0.4
            while time.monotonic() < end:
                time.sleep(0.1)
                if _reflex(arm, c):  # keep the figures of the last sample before it
                    out["reflex_after_s"] = args.seconds - 0.4 - (end - time.monotonic())
                    break
                rates.append(arm.device.command_success_rate)
                t1, tick1 = c.timing(), c.state.tick
        data = rec.data()
        result = handle.result(timeout=5.0)
        unserved = t1["loop"]["unserved_cycles"] - t0["loop"]["unserved_cycles"]
        ticks = int(tick1 - tick0)
        out.update(
            median=t1["dext"]["median_s"] * 1e6,
            p99=t1["dext"]["p99_s"] * 1e6,
            max=t1["hardware"]["max_latency_s"] * 1e6,
            dext_samples=t1["dext"]["samples"],
            unserved=100.0 * unserved / max(ticks, 1),
            unserved_ticks=int(unserved),
            ticks=ticks,
            unserved_rate=100.0 * (1.0 - float(np.mean(rates))) if rates else float("nan"),
            success_min=float(np.min(rates)) if rates else float("nan"),
            hw_max_write_interval_ms=t1["hardware"]["max_write_interval_s"] * 1e3,
            hw_largest_command_gap=t1["hardware"]["largest_command_gap"],
            hw_anomalous_ticks=c.timing()["hardware"]["anomalous_ticks"],
            hw_limiter_activations=t1["hardware"]["limiter_activations"],
            loop_overruns=t1["loop"]["overruns"],
            goal="goal ok" if result.ok else f"goal {result.code.name}: {result.message}",
            dropped_records=rec.dropped,
        )
        interval_ms = np.asarray(data["interval_us"], float)[1:] * 1e-3
        arrays = {"r2r_ms": interval_ms, "tick_gaps": np.diff(np.asarray(data["tick"], float))}
        out.update(
            r2r_median_ms=float(np.median(interval_ms)),
            r2r_p99_ms=float(np.percentile(interval_ms, 99)),
            r2r_max_ms=float(interval_ms.max()),
        )
    except Exception as exc:
        out["exception"] = f"{type(exc).__name__}: {exc}"
    finally:
        out["error"] = _reflex(arm, c)
        c.stop()
        arm.close()
    _dump(args.result, out, arrays)


def _fifo_threads() -> str:
    """The SCHED_FIFO priorities of this process's threads (Linux), for the record."""
    fifo = fifo_priorities()
    if fifo is None:
        return "unknown"
    if not fifo:
        return "none SCHED_FIFO"
    return f"{len(fifo)} SCHED_FIFO threads ({sorted(set(fifo), reverse=True)})"


# ================================================================================ worker: Figure 6


def work_stream(args: argparse.Namespace) -> None:
    """A 125 Hz source through Controller.stream(); a recording of the 1 kHz command at the controller.

    The source samples its motion on the host clock (a policy's clock), as a real one would; each
    sample's time on the robot clock comes from a straight-line fit of the robot time against the
    host time at the sends (franka-sim runs at 0.9-1.0x real time, so the two clocks drift apart).
    """
    out: dict[str, Any] = {"fifo": _policy(), "recovery": _recover(args.ip, args.variant)}
    arrays: dict[str, np.ndarray] = {}
    arm, c = _jtac_controller(args)
    try:
        q0 = np.asarray(c.state.q_cmd)
        host, robot_t, sample_q = [], [], []
        fields = ["time", "q", "dq", "q_cmd", "dq_cmd"]
        t0 = c.timing()["hardware"]
        with c.record(fields) as rec, c.stream() as stream:
            period = 1.0 / STREAM_HZ
            next_send = time.monotonic()
            start = next_send + 0.1  # the source starts at rest, 0.1 s after the stream
            deadline = start + args.seconds
            while next_send < deadline and not _reflex(arm, c):
                s = max(0.0, next_send - start)
                target = q0.copy()
                target[0] += STREAM_AMPLITUDE_RAD * (1.0 - np.cos(STREAM_OMEGA_RAD_S * s))
                stream.send(target)
                host.append(time.monotonic())
                robot_t.append(c.controller_time())
                sample_q.append(target[0])
                next_send += period
                time.sleep(max(0.0, next_send - time.monotonic()))
            out["targets_taken"] = stream.targets_taken
            time.sleep(0.1)
        t1 = c.timing()["hardware"]
        data = rec.data()
        rate, offset = np.polyfit(np.asarray(host), np.asarray(robot_t), 1)
        arrays = {
            "time": np.asarray(data["time"]),
            "q": np.asarray(data["q"])[:, 0],
            "dq": np.asarray(data["dq"])[:, 0],
            "q_cmd": np.asarray(data["q_cmd"])[:, 0],
            "dq_cmd": np.asarray(data["dq_cmd"])[:, 0],
            "sample_t": rate * np.asarray(host) + offset,
            "sample_q": np.asarray(sample_q),
            "t_start": np.asarray([rate * start + offset]),
            "rate": np.asarray([rate]),
            "q0": np.asarray([q0[0]]),
        }
        out.update(
            robot_clock_rate=float(rate),
            hw_limiter_activations=t1["limiter_activations"] - t0["limiter_activations"],
            hw_packets=t1["packets"] - t0["packets"],
            hw_anomalous_ticks=t1["anomalous_ticks"] - t0["anomalous_ticks"],
            samples=len(host),
        )
    except Exception as exc:
        out["exception"] = f"{type(exc).__name__}: {exc}"
    finally:
        out["error"] = _reflex(arm, c)
        c.stop()
        arm.close()
    _dump(args.result, out, arrays)


# ================================================================================ workers: stalls


def _stall_phases(args: argparse.Namespace, hog_data: list[int], clock: Any, hooks: dict[str, Any]) -> dict:
    """Runs idle / event loop blocked / GIL held; hooks: begin() and end(t0, t1) -> dict per phase."""
    results = {}
    for case, _label in STALL_CASES:
        hooks["begin"]()
        t0 = clock()
        if case == "idle":
            time.sleep(args.idle_s)
            extra = {}
        elif case == "event_loop":
            extra = {"blocked_ms": hooks["block"](args.block_s) * 1e3}
        else:
            extra = {"held_ms": _hog(hog_data) * 1e3}
        t1 = clock()
        time.sleep(0.05)  # the command that a stall delayed has gone out
        extra.update(hooks["end"](t0, t1))
        results[case] = extra
    return results


def work_stall_jtac(args: argparse.Namespace) -> None:
    """jtac's native loop, a goal running, under the three Python stalls."""
    out: dict[str, Any] = {"fifo": _policy(), "recovery": _recover(args.ip, args.variant)}
    hog_data = _gil_hog_list(args.hog_n)
    arm, c = _jtac_controller(args)
    try:
        out["threads"] = _fifo_threads()
        q0 = np.asarray(c.state.q_cmd)
        handle = c.follow(_there_and_back(q0, _leg_s(args, stall=True)), wait=False)
        time.sleep(0.2)
        interface = c._interface  # private on purpose: the benchmark reads its peaks

        unserved = [0]

        def begin() -> None:
            interface.reset_peaks()
            unserved[0] = c.timing()["loop"]["unserved_cycles"]

        def end(_t0: float, _t1: float) -> dict[str, Any]:
            counters = interface.counters()
            phase = {
                "gap_ms": counters["max_write_interval_s"] * 1e3,
                "command_gap_packets": counters["largest_command_gap"],
                "unserved_ticks": c.timing()["loop"]["unserved_cycles"] - unserved[0],
                "success_rate": arm.device.command_success_rate,
                "anomalous_ticks": counters["anomalous_ticks"],
            }
            if _reflex(arm, c):  # the hardware thread has stopped: its peaks mean nothing
                phase.update(gap_ms=float("nan"), aborted=_reflex(arm, c))
            return phase

        out["phases"] = _stall_phases(
            args, hog_data, time.monotonic, {"begin": begin, "end": end, "block": _block_event_loop}
        )
        result = handle.result(timeout=10.0)
        out["goal"] = "goal ok" if result.ok else f"goal {result.code.name}: {result.message}"
    except Exception as exc:
        out["exception"] = f"{type(exc).__name__}: {exc}"
    finally:
        out["error"] = _reflex(arm, c)
        out["hw_anomalous_ticks"] = c.timing()["hardware"]["anomalous_ticks"]
        c.stop()
        arm.close()
    _dump(args.result, out)


def work_stall_sync(args: argparse.Namespace) -> None:
    """The synchronous baseline (b) in a Python thread, under the same stalls."""
    import pylibfranka as plf

    from jtac_py import _native
    from jtac_py import config as jtac_config

    out: dict[str, Any] = {"fifo": _policy(), "recovery": _recover(args.ip, args.variant)}
    hog_data = _gil_hog_list(args.hog_n)
    values = jtac_config.resolve(
        robot="fr3", ft_sensor_name="", update_rate=1000, default_path_tolerance=0.2,
        default_goal_time_tolerance=1.0,
    )  # fmt: skip
    core = jtac_config.make_controller(values)
    robot = plf.Robot(args.ip, plf.RealtimeConfig.kIgnore)
    out["libfranka_set"] = _restore_policy(args.variant)  # the loop thread below inherits this
    control = robot.start_joint_position_control(plf.ControllerMode.JointImpedance)
    writes: list[float] = []
    robot_ms: list[int] = []
    success: list[float] = []
    stop = threading.Event()
    failure: list[str] = []
    started = threading.Event()

    def loop() -> None:
        try:
            state, _ = control.readOnce()
            core.activate()
            t_prev = state.time.to_sec()
            core.update(t_prev, 0.001, np.asarray(state.q), np.asarray(state.dq))
            goal = _there_and_back(np.asarray(state.q_d), _leg_s(args, stall=True)).to_goal(core.joint_names)
            core.submit_goal(_native.JtacGoal(goal), t_prev)
            command = plf.JointPositions(list(state.q_d))
            control.writeOnce(command)
            started.set()
            while not stop.is_set():
                state, _ = control.readOnce()
                t = state.time.to_sec()
                o = core.update(t, t - t_prev, np.asarray(state.q), np.asarray(state.dq))
                t_prev = t
                control.writeOnce(plf.JointPositions(o.command_position_rad.tolist()))
                writes.append(time.monotonic())
                robot_ms.append(round(t * 1000.0))
                success.append(state.control_command_success_rate)
            state, _ = control.readOnce()
            final = plf.JointPositions(list(state.q_d))
            final.motion_finished = True
            control.writeOnce(final)
        except Exception as exc:  # a reflex ends the loop; the phases still run and report it
            failure.append(f"{type(exc).__name__}: {exc}")
        finally:
            started.set()

    thread = threading.Thread(target=loop, name="sync-baseline")
    thread.start()
    started.wait(5.0)
    time.sleep(0.2)

    def end(t0: float, t1: float) -> dict[str, Any]:
        n = len(writes)  # the loop thread appends; read a consistent prefix
        stamps = np.asarray(writes[:n])
        gap = _max_gap(stamps, t0, t1)
        phase = _cycle_space(stamps, np.asarray(robot_ms[:n]), np.asarray(success[:n]), t0, t1)
        if failure and (len(stamps) == 0 or stamps[-1] < t0):  # ended before this phase
            return {"gap_ms": float("nan"), "aborted": f"before this phase: {failure[0]}"}
        if failure and stamps[-1] < t1:  # ended in this phase: the gap lasts at least until its end
            gap = max(gap if np.isfinite(gap) else 0.0, t1 - stamps[-1])
            return {"gap_ms": gap * 1e3, "aborted": failure[0], **phase}
        return {"gap_ms": gap * 1e3, **phase}

    try:
        out["phases"] = _stall_phases(
            args, hog_data, time.monotonic, {"begin": lambda: None, "end": end, "block": _block_event_loop}
        )
    finally:
        stop.set()
        thread.join(10.0)
        control = robot = None  # libfranka disconnects with its Robot
        gc.collect()
    out["error"] = failure[0] if failure else ""
    _dump(args.result, out)


def work_stall_aiofranka(args: argparse.Namespace) -> None:
    """aiofranka 0.9.0's native loop (runs in .venv-aiofranka): holds the arm in its impedance mode
    (the default after start()) under the three stalls; the event loop blocked is aiofranka's own."""
    import aiofranka

    out: dict[str, Any] = {
        "fifo": _policy(),
        "recovery": _recover(args.ip, args.variant),
        "aiofranka": aiofranka.__version__,
    }
    hog_data = _gil_hog_list(args.hog_n)
    robot = aiofranka.Robot(args.ip, read_tool=False)  # no Desk on franka-sim
    out["libfranka_set"] = _restore_policy(args.variant)  # its event loop thread inherits this
    controller = aiofranka.Controller(robot)
    if args.variant == "normal":
        controller.realtime_priority = 0
    fields = ["cycle", "time", "wall_time", "busy", "control_command_success_rate"]
    recording = None
    try:
        controller.start()
        out["threads"] = _fifo_threads()
        recording = controller.record(fields)
        time.sleep(0.2)

        def block(seconds: float) -> float:
            async def blocking() -> float:
                t0 = time.perf_counter()
                time.sleep(seconds)  # on aiofranka's event loop, which runs its watcher
                return time.perf_counter() - t0

            return asyncio.run_coroutine_threadsafe(blocking(), controller._events).result(10.0)

        phases = _stall_phases(
            args, hog_data, time.time,
            {"begin": lambda: controller.loop_stats(reset=True), "end": lambda t0, t1: {"t0": t0, "t1": t1},
             "block": block},
        )  # fmt: skip
        stats = controller.loop_stats()
        recording.stop()
        rows = recording.data()
        command_s = np.asarray(rows["wall_time"], float) + np.asarray(rows["busy"], float)
        robot_ms = np.round(np.asarray(rows["time"], float) * 1000.0)
        success = np.asarray(rows["control_command_success_rate"], float)
        for phase in phases.values():
            t0, t1 = phase.pop("t0"), phase.pop("t1")
            phase["gap_ms"] = _max_gap(command_s, t0, t1) * 1e3
            phase.update(_cycle_space(command_s, robot_ms, success, t0, t1))
        deltas = np.diff(robot_ms)
        out.update(
            rows=len(command_s),
            dropped=int(recording.dropped),
            unserved_ticks=int(np.clip(deltas - 1, 0, None).sum()),
            ticks=int(robot_ms[-1] - robot_ms[0]) if len(robot_ms) else 0,
            success_min=float(np.nanmin(rows["control_command_success_rate"])),
            busy_median_us=float(np.median(rows["busy"]) * 1e6),
            busy_max_us=float(np.max(rows["busy"]) * 1e6),
            loop_stats_max_ms=float(stats.get("max", float("nan"))) * 1e3,
        )
        out["phases"] = phases
    except Exception as exc:
        out["exception"] = f"{type(exc).__name__}: {exc}"
    finally:
        out["error"] = controller.error or ""
        try:
            controller.stop()
        finally:
            robot.close()
    _dump(args.result, out)


WORKERS = {
    "bare": lambda a: work_python_loop(a, with_controller=False),
    "sync": lambda a: work_python_loop(a, with_controller=True),
    "jtac": work_jtac,
    "stream": work_stream,
    "stall_jtac": work_stall_jtac,
    "stall_aiofranka": work_stall_aiofranka,
    "stall_sync": work_stall_sync,  # last: its loop aborts under the GIL hold (the next worker recovers)
}


# ================================================================================ the parent: franka-sim


class Server:
    """franka-sim on a loopback address of this run (test/franka/sim_server.py, enforcement ON)."""

    def __init__(self, log_path: Path, chrt: int) -> None:
        self.log_path = log_path
        self.chrt = chrt
        self.process: subprocess.Popen | None = None
        self.ip = ""

    def start(self) -> None:
        env = dict(os.environ, FR3_MJCF=str(SIM_MODEL), PYTHONUNBUFFERED="1")
        for name in ("FRANKA_SIM_ENFORCE_COMM_CONSTRAINTS", "FRANKA_SIM_ENFORCE_MOTION_LIMITS", "PYTHONPATH"):
            env.pop(name, None)
        pid = os.getpid()
        failures = []
        # 127.<40+16k>.<pid-derived>: apart from the test harness's 127.<10+...> and from 127.0.0.1.
        for attempt in range(8):
            n = pid + attempt * 7919
            ip = f"127.{40 + 16 * attempt}.{(n // 254) % 256}.{n % 254 + 1}"
            if not _port_free(ip):
                failures.append(f"{ip} in use")
                continue
            prefix = ["chrt", "-f", str(self.chrt)] if self.chrt else []
            cmd = [*prefix, str(SIM_PYTHON), str(SIM_SERVER), "--host", ip, "--parent-pid", str(pid)]
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                    start_new_session=True,
                )  # fmt: skip
            t0 = time.monotonic()
            while True:
                text = self.log_path.read_text(errors="replace")
                if f"READY {ip}:" in text:
                    self.ip = ip
                    return
                if self.process.poll() is not None:
                    if "already in use" in text:
                        failures.append(f"{ip} taken while starting")
                        break
                    raise RuntimeError(f"franka-sim exited with {self.process.returncode}; {self.log_path}")
                if time.monotonic() - t0 > READY_TIMEOUT_S:
                    self.stop()
                    raise RuntimeError(f"franka-sim not READY within {READY_TIMEOUT_S} s; {self.log_path}")
                time.sleep(0.02)
        raise RuntimeError(f"no free loopback address for franka-sim: {'; '.join(failures)}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self) -> None:
        self.stop()
        self.start()


def _port_free(ip: str) -> bool:
    import socket

    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind((ip, FCI_PORT))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _fifo_allowed(priority: int) -> str:
    """'' if `chrt -f priority` works here, else why not."""
    if shutil.which("chrt") is None:
        return "chrt is not installed"
    done = subprocess.run(["chrt", "-f", str(priority), "true"], capture_output=True, text=True)
    return "" if done.returncode == 0 else f"chrt -f {priority} refused: {done.stderr.strip()}"


def run_worker(
    part: str, variant: str, server: Server, prof: dict[str, Any], raw: Path, run: int = 0
) -> dict[str, Any]:
    """One client process; its JSON result (or {'not_measured': why})."""
    python = AIOFRANKA_PYTHON if part == "stall_aiofranka" else Path(sys.executable)
    if not python.exists():
        return {"not_measured": f"{python.relative_to(ROOT)} is missing: run scripts/setup_aiofranka.sh"}
    if not _wait_no_clients(server.ip):
        print(f"  [{variant}] a client of an earlier part is still connected: restarting franka-sim")
        server.restart()
    result = raw / (f"{variant}_{part}" + (f"_{run + 1}" if run else ""))
    for suffix in (".json", ".npz"):
        result.with_suffix(suffix).unlink(missing_ok=True)
    seconds = prof["stream_s"] if part == "stream" else prof["table_s"]
    _label, _server_prio, client_prio = VARIANTS[variant]
    prefix = ["chrt", "-f", str(client_prio)] if client_prio else []
    cmd = [
        *prefix, str(python), str(Path(__file__).resolve()), "--worker", part, "--ip", server.ip,
        "--variant", variant, "--result", str(result), "--seconds", str(seconds),
        "--idle-s", str(prof["idle_s"]), "--block-s", str(prof["block_s"]), "--gil-s", str(prof["gil_s"]),
        "--hog-n", str(prof["hog_n"]),
    ]  # fmt: skip
    env = dict(os.environ)
    if part == "stall_aiofranka":
        for name in ("PYTHONPATH", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "AMENT_PREFIX_PATH"):
            env.pop(name, None)
    log = result.with_suffix(".log")
    t0 = time.monotonic()
    try:
        with open(log, "wb") as f:
            done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=ROOT, timeout=120)
        rc = done.returncode
    except subprocess.TimeoutExpired:
        rc = "timeout (120 s)"
    took = time.monotonic() - t0
    if not result.with_suffix(".json").exists():
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        return {"not_measured": f"worker {part} exited with {rc}: {' | '.join(tail)[-300:]}"}
    out = json.loads(result.with_suffix(".json").read_text())
    out["wall_s"] = took
    if result.with_suffix(".npz").exists():
        with np.load(result.with_suffix(".npz")) as z:
            out["arrays"] = {k: z[k] for k in z.files}
    return out


def _merge_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Repeated stall runs as one: per phase the worst gap, every outcome counted."""
    done = [r for r in runs if "not_measured" not in r]
    if not done:
        return runs[0]
    merged = dict(done[-1])
    merged["runs"] = len(runs)
    phases: dict[str, Any] = {}
    for case, _label in STALL_CASES:
        ps = [r["phases"][case] for r in done if case in r.get("phases", {})]
        if not ps:
            continue
        gaps = [float(x["gap_ms"]) for x in ps if np.isfinite(x.get("gap_ms", np.nan))]
        phase: dict[str, Any] = {
            "gap_ms": max(gaps) if gaps else float("nan"),
            "gap_ms_runs": [x.get("gap_ms") for x in ps],
            "unserved_ticks": max(int(x.get("unserved_ticks", 0)) for x in ps),
        }
        for key in ("held_ms", "blocked_ms"):
            values = [x[key] for x in ps if key in x]
            if values:
                phase[f"{key}_runs"] = values
        aborted = [x["aborted"] for x in ps if x.get("aborted")]
        if aborted:
            phase["aborted"] = f"{len(aborted)}/{len(ps)} runs: {aborted[0]}"
        phases[case] = phase
    merged["phases"] = phases
    merged["hw_anomalous_ticks"] = sum(int(r.get("hw_anomalous_ticks", 0)) for r in done)
    for key in ("error", "exception"):
        found = [r[key] for r in done if r.get(key)]
        merged[key] = f"{len(found)} of {len(runs)} runs: {found[0]}" if found else ""
    goals = [r.get("goal", "") for r in done if r.get("goal")]
    if goals:
        ok = sum(g == "goal ok" for g in goals)
        bad = [g for g in goals if g != "goal ok"]
        merged["goal"] = f"goal ok in {ok} of {len(goals)} runs" + (f"; {bad[0]}" if bad else "")
    missing = [r["not_measured"] for r in runs if "not_measured" in r]
    if missing:
        merged["exception"] = (merged["exception"] + "; " if merged["exception"] else "") + (
            f"{len(missing)} of {len(runs)} runs not measured: {missing[0]}"
        )
    return merged


# ================================================================================ the parent: tables


def _f(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "-"
    return f"{value:.{digits}f}"


def _ratio(num: Any, den: Any) -> str:
    try:
        if num is None or den is None or not (np.isfinite(num) and np.isfinite(den)) or den <= 0:
            return "-"
        return f"{num / den:.1f}"
    except TypeError:
        return "-"


def _table(title: str, header: list[str], rows: list[list[str]]) -> str:
    lines = [
        f"| {title} | " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] * (len(header) + 1)) + " |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _status(r: dict[str, Any]) -> str:
    if "not_measured" in r:
        return f"not measured: {r['not_measured']}"
    goal = r.get("goal", "")
    parts = [goal.split(" (the hardware thread stopped")[0]] if goal else []
    if r.get("error"):
        error = r["error"].replace("the hardware thread stopped: DEVICE_ERROR: readOnce: libfranka: ", "")
        parts.append(f"REFLEX/ERROR: {error}")
        if r.get("hw_anomalous_ticks"):
            parts.append(f"{r['hw_anomalous_ticks']} anomalous robot tick(s) seen by the hardware thread")
    if r.get("exception"):
        parts.append(f"exception: {r['exception']}")
    return "; ".join(parts) or "ok"


def table1(results: dict[str, dict[str, Any]], label: str) -> str:
    a, b, c = results["bare"], results["sync"], results["jtac"]
    metrics = (
        ("dEXT median [µs]", "median", 1, "median"),
        ("dEXT p99 [µs]", "p99", 1, "p99"),
        ("dEXT max [µs]", "max", 1, "max"),
        ("unserved cycles, robot-time gaps [%]", "unserved", 2, "unserved"),
        ("unserved cycles, 1 - success rate [%]", "unserved_rate", 2, "unserved"),
        ("lowest control_command_success_rate", "success_min", 2, None),
        ("read-to-read p99 [ms]", "r2r_p99_ms", 2, None),
        ("read-to-read max [ms]", "r2r_max_ms", 2, None),
    )
    rows = []
    for name, key, digits, paper in metrics:
        va, vb, vc = (r.get(key) for r in (a, b, c))
        anchor = " / ".join(_f(x, 2 if paper == "unserved" else 0) for x in PAPER[paper]) if paper else "-"
        rows.append([name, _f(va, digits), _f(vb, digits), _f(vc, digits), _ratio(vb, vc), anchor])
    rows.append(["outcome", _status(a), _status(b), _status(c), "", ""])
    header = ["(a) bare pylibfranka loop", "(b) synchronous JTAC (baseline)", "(c) jtac async",
              "ratio (b)/(c)", "paper LF / RS / RA"]  # fmt: skip
    return _table(f"Table 1, {label}", header, rows)


def table_stalls(results: dict[str, dict[str, Any]], label: str) -> str:
    j, aio, s = results["stall_jtac"], results["stall_aiofranka"], results["stall_sync"]
    rows = []
    for i, (case, name) in enumerate(STALL_CASES):
        gj, ga, gs = (r.get("phases", {}).get(case, {}).get("gap_ms") for r in (j, aio, s))
        if case in ("gil", "event_loop"):
            key = "held_ms" if case == "gil" else "blocked_ms"
            held: list[float] = []
            for r in (j, aio, s):
                phase = r.get("phases", {}).get(case, {})
                held += phase.get(f"{key}_runs", [phase[key]] if key in phase else [])
            if held:
                name += f" ({'held' if case == 'gil' else 'blocked'} {min(held):.0f}–{max(held):.0f} ms)"
        cell_j = _gap_cell(j, case)
        cell_a = f"not measured: {aio['not_measured']}" if "not_measured" in aio else _gap_cell(aio, case)
        cell_s = _gap_cell(s, case)
        doc = _f(AIOFRANKA_DOC_MS[i], 1)
        rows.append([name, cell_j, cell_a, _ratio(ga, gj), cell_s, _ratio(gs, gj), doc])
    rows.append(["outcome", _status(j), _status(aio), "", _status(s), "", ""])
    header = ["jtac native [ms] (ticks skipped)", "aiofranka native [ms] (ticks skipped)",
              "ratio aiofranka/jtac", "synchronous (b) [ms] (ticks skipped)", "ratio (b)/jtac",
              "aiofranka doc [ms]"]  # fmt: skip
    return _table(f"Largest gap between two commands, {label}", header, rows)


def _gap_cell(r: dict[str, Any], case: str) -> str:
    phase = r.get("phases", {}).get(case)
    if not phase:
        return "-"
    ticks = phase.get("unserved_ticks")
    cell = _f(phase.get("gap_ms"), 2) + (f" ({ticks})" if ticks is not None else "")
    return cell + (" ABORTED" if phase.get("aborted") else "")


def table_stream(r: dict[str, Any], label: str) -> tuple[str, dict[str, float]]:
    if "arrays" not in r or "time" not in r["arrays"]:
        return f"Figure 6, {label}: {_status(r)}", {}
    z = r["arrays"]
    t = z["time"]
    stair_q = _staircase(z)
    stair_v = np.diff(stair_q) / 0.001
    _, ref_v = _source(z, t)
    cmd_acc = np.abs(np.diff(z["dq_cmd"]) / 0.001)
    stair_acc = np.abs(np.diff(stair_v) / 0.001)
    lag_ms = _lag_ms(z)
    m = {
        "ref_peak": float(np.abs(ref_v).max()),
        "stair_peak_v": float(np.abs(stair_v).max()),
        "cmd_peak_v": float(np.abs(z["dq_cmd"]).max()),
        "meas_peak_v": float(np.abs(z["dq"]).max()),
        "stair_peak_a": float(stair_acc.max()),
        "cmd_peak_a": float(cmd_acc.max()),
        "cmd_p99_a": float(np.percentile(cmd_acc, 99)),
        "lag_ms": lag_ms,
        "robot_clock_rate": float(z["rate"][0]),
    }
    limiter = f"{r.get('hw_limiter_activations', '-')} of {r.get('hw_packets', '-')} packets"
    rows = [
        ["peak commanded velocity, joint 1 [rad/s]", _f(m["stair_peak_v"], 2), _f(m["cmd_peak_v"], 2),
         _ratio(m["stair_peak_v"], m["cmd_peak_v"]), f"source {m['ref_peak']:.2f}"],
        ["commanded acceleration, max [rad/s²]", _f(m["stair_peak_a"], 0), _f(m["cmd_peak_a"], 0),
         _ratio(m["stair_peak_a"], m["cmd_peak_a"]), "FR3 limit 10 (jtac's limiter: 8)"],
        ["commanded acceleration, p99 [rad/s²]", "-", _f(m["cmd_p99_a"], 0), "",
         f"hardware limiter active in {limiter}"],
        ["peak measured velocity [rad/s]", "not sent", _f(m["meas_peak_v"], 2), "", ""],
        ["delay of the command behind the source [ms]", "0–8", _f(lag_ms, 1), "", "one sample interval: 8"],
        ["outcome", "would abort (notes/franka.md: 95.8 rad/s, 101 rad/s²)", _status(r), "",
         f"{r.get('targets_taken', '-')} targets taken"],
    ]  # fmt: skip
    header = [
        "staircase (hold last sample)",
        "jtac rate-matched (controller's q_cmd / dq_cmd, before the hardware thread's limiter)",
        "ratio",
        "reference",
    ]
    return _table(f"Figure 6, 125 Hz source, {label}", header, rows), m


def _source(z: dict[str, np.ndarray], t_robot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The source's position [rad] and velocity [rad per robot second] at robot times t_robot."""
    rate = z["rate"][0]
    s = np.clip((t_robot - z["t_start"][0]) / rate, 0.0, None)  # host seconds since the source started
    q = z["q0"][0] + STREAM_AMPLITUDE_RAD * (1.0 - np.cos(STREAM_OMEGA_RAD_S * s))
    v = STREAM_AMPLITUDE_RAD * STREAM_OMEGA_RAD_S * np.sin(STREAM_OMEGA_RAD_S * s) / rate
    return q, v


def _staircase(z: dict[str, np.ndarray]) -> np.ndarray:
    """What a naive 1 kHz loop sends: at every robot tick the newest 125 Hz sample, held."""
    idx = np.searchsorted(z["sample_t"], z["time"], side="right") - 1
    return np.where(idx >= 0, z["sample_q"][np.clip(idx, 0, None)], z["q0"][0])


def _lag_ms(z: dict[str, np.ndarray]) -> float:
    """Delay of q_cmd behind the continuous source, by least squares over 0–30 ms [ms]."""
    t = z["time"]
    moving = t > z["t_start"][0] + 0.2
    if moving.sum() < 100:  # the stream ended (a reflex) before it moved
        return float("nan")
    errors = [
        float(np.mean((_source(z, t[moving] - lag)[0] - z["q_cmd"][moving]) ** 2))
        for lag in np.arange(0.0, 0.030, 0.0005)
    ]
    return float(np.argmin(errors)) * 0.5


# ================================================================================ the parent: figures


def figure2(results: dict[str, dict[str, Any]], label: str, path: Path) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 7.0), dpi=120, layout="constrained")
    axes = fig.subplots(3, 1, sharex=True)
    bins = np.arange(0.0, 5.05, 0.05)
    names = {
        "bare": "(a) bare pylibfranka loop (Python, readOnce to readOnce)",
        "sync": "(b) synchronous JTAC in the Python loop (readOnce to readOnce)",
        "jtac": "(c) jtac async: controller thread interval (recording interval_us)",
    }
    for ax, key in zip(axes, ("bare", "sync", "jtac"), strict=True):
        r = results[key]
        ax.set_title(names[key], fontsize=9)
        ax.set_yscale("log")
        ax.set_ylabel("share of intervals")
        z = r.get("arrays", {})
        if "r2r_ms" not in z or len(z["r2r_ms"]) == 0:
            ax.text(0.5, 0.5, _status(r), transform=ax.transAxes, ha="center", fontsize=8)
            continue
        x = z["r2r_ms"]
        over = int((x > bins[-1]).sum())
        weights = np.full(len(x), 1.0 / len(x))
        ax.hist(np.clip(x, 0, bins[-1] - 1e-9), bins=bins, weights=weights, color="C0", alpha=0.8)
        for k in (1, 2, 3):
            ax.axvline(k, color="0.6", lw=0.6, ls=":")
        text = f"n = {len(x)}, max {x.max():.2f} ms" + (f", {over} beyond 5 ms (last bin)" if over else "")
        if key == "jtac" and r.get("hw_max_write_interval_ms") is not None:
            hw = r["hw_max_write_interval_ms"]
            ax.axvline(
                min(hw, bins[-1]), color="C3", lw=1.2, ls="--", label=f"hardware thread max {hw:.2f} ms"
            )
            ax.legend(fontsize=8, loc="upper right")
        ax.text(0.99, 0.55, text, transform=ax.transAxes, ha="right", fontsize=8)
    axes[-1].set_xlabel("read-to-read interval [ms] (franka-sim, enforcement on)")
    fig.suptitle(f"Figure 2 on franka-sim: read-to-read interval, {label}", fontsize=10)
    fig.savefig(path)
    return path


def figure6(r: dict[str, Any], label: str, path: Path) -> Path | None:
    from matplotlib.figure import Figure

    if "arrays" not in r or "time" not in r["arrays"]:
        return None
    z = r["arrays"]
    t0 = z["t_start"][0]
    t = z["time"] - t0
    stair_q = _staircase(z)
    stair_v = np.concatenate([[0.0], np.diff(stair_q) / 0.001])
    tt = np.linspace(t[0], t[-1], 4000)
    ref_q, ref_v = _source(z, tt + t0)
    fig = Figure(figsize=(9.0, 8.0), dpi=120, layout="constrained")
    ax_q, ax_v, ax_d = fig.subplots(3, 1)
    ax_q.plot(tt, ref_q, color="0.5", lw=2.5, alpha=0.5, label="source (continuous)")
    ax_q.step(t, stair_q, where="post", color="C1", lw=0.9, label="staircase: 125 Hz sample held (not sent)")
    ax_q.plot(t, z["q_cmd"], color="C0", lw=1.0, label="jtac q_cmd (rate-matched, 1 kHz)")
    ax_q.plot(t, z["q"], color="C2", lw=0.8, ls="--", label="measured q (franka-sim)")
    ax_q.set_ylabel("joint 1 position [rad]")
    ax_q.legend(fontsize=7, loc="upper left")
    ax_v.plot(t, stair_v, color="C1", lw=0.6, label="staircase Δq / 1 ms")
    ax_v.plot(t, z["dq_cmd"], color="C0", lw=1.0, label="jtac dq_cmd")
    ax_v.plot(t, z["dq"], color="C2", lw=0.8, ls="--", label="measured dq")
    ax_v.plot(tt, ref_v, color="0.5", lw=2.5, alpha=0.5, label="source velocity")
    ax_v.set_ylabel("joint 1 velocity [rad/s]")
    ax_v.legend(fontsize=7, loc="upper left")
    # Detail: 40 ms around the peak velocity of the source.
    peak = np.pi / 2 / STREAM_OMEGA_RAD_S * z["rate"][0]
    sel = (t > peak - 0.02) & (t < peak + 0.02)
    ax_d.step(t[sel], stair_v[sel], where="post", color="C1", lw=0.9, label="staircase Δq / 1 ms")
    ax_d.plot(t[sel], z["dq_cmd"][sel], "o-", color="C0", ms=2.5, lw=1.0, label="jtac dq_cmd, every 1 ms")
    ax_d.plot(t[sel], z["dq"][sel], color="C2", lw=0.8, ls="--", label="measured dq")
    ax_d.set_xlabel("robot time since the source started [s]")
    ax_d.set_ylabel("velocity [rad/s], detail")
    ax_d.legend(fontsize=7, loc="upper left")
    fig.suptitle(
        f"Figure 6 on franka-sim: a 125 Hz source, staircase vs rate-matched ({label})\n"
        "the staircase is computed from the same samples; sent to enforced franka-sim it aborts "
        "(franka_hw/README.md)",
        fontsize=9,
    )
    fig.savefig(path)
    return path


def figure_stalls(all_results: dict[str, dict[str, dict[str, Any]]], path: Path) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 4.5), dpi=120, layout="constrained")
    axes = fig.subplots(1, len(all_results), sharey=True, squeeze=False)[0]
    designs = (("stall_jtac", "jtac native", "C0"), ("stall_aiofranka", "aiofranka native", "C1"),
               ("stall_sync", "synchronous (b)", "C3"))  # fmt: skip
    for ax, (variant, results) in zip(axes, all_results.items(), strict=True):
        x = np.arange(len(STALL_CASES))
        for i, (key, name, color) in enumerate(designs):
            phases = results[key].get("phases", {})
            gaps = [phases.get(case, {}).get("gap_ms", np.nan) for case, _ in STALL_CASES]
            ax.bar(x + (i - 1) * 0.27, gaps, width=0.27, color=color, label=name)
            for k, (case, _) in enumerate(STALL_CASES):
                if phases.get(case, {}).get("aborted"):
                    y = gaps[k] if np.isfinite(gaps[k]) else 1.3
                    ax.text(x[k] + (i - 1) * 0.27, y * 1.1, "abort", ha="center", fontsize=7, rotation=90)
        ax.set_yscale("log")
        ax.axhline(1.3, color="0.4", lw=0.8, ls="--", label="target 1.3 ms")
        ax.set_xticks(x, ["idle", "event loop\nblocked 300 ms", "GIL held\n300 ms"], fontsize=8)
        ax.set_title(VARIANTS[variant][0], fontsize=8)
    axes[0].set_ylabel("largest gap between two commands [ms]")
    axes[0].legend(fontsize=7)
    fig.suptitle(
        "Python stalls on franka-sim: jtac vs aiofranka vs a synchronous Python loop (worst of the runs)",
        fontsize=10,
    )
    fig.savefig(path)
    return path


# ================================================================================ main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="short phases, < 60 s in all (smoke run)")
    p.add_argument("--variants", default="fifo,normal", help="comma-separated: fifo, normal")
    p.add_argument("--no-aiofranka", action="store_true", help="skip aiofranka's native loop")
    p.add_argument("--out", type=Path, default=OUT_DIR, help="figures and raw data")
    # worker options (the parent passes them)
    p.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    p.add_argument("--ip", help=argparse.SUPPRESS)
    p.add_argument("--variant", default="normal", help=argparse.SUPPRESS)
    p.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--seconds", type=float, default=4.0, help=argparse.SUPPRESS)
    p.add_argument("--idle-s", type=float, default=1.0, help=argparse.SUPPRESS)
    p.add_argument("--block-s", type=float, default=0.3, help=argparse.SUPPRESS)
    p.add_argument("--gil-s", type=float, default=0.3, help=argparse.SUPPRESS)
    p.add_argument("--hog-n", type=int, default=3_000_000, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        faulthandler.dump_traceback_later(100.0, exit=True)  # never hang (libfranka waits for ever)
        WORKERS[args.worker](args)
        return 0
    t_all = time.monotonic()
    prof: dict[str, Any] = _profile(args.quick)
    raw = args.out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    print(f"bench_franka_sim: {'quick' if args.quick else 'full'} run, figures in {args.out}")
    if not SIM_PYTHON.exists():
        print(f"not measured: {SIM_PYTHON} is missing: run scripts/setup_franka_sim.sh")
        return 0
    parts = list(WORKERS)
    if args.no_aiofranka:
        parts.remove("stall_aiofranka")
    all_results: dict[str, dict[str, dict[str, Any]]] = {}
    summary: dict[str, Any] = {"quick": args.quick, "variants": {}}
    for variant in [v.strip() for v in args.variants.split(",") if v.strip()]:
        label, server_prio, client_prio = VARIANTS[variant]
        why = _fifo_allowed(client_prio) if client_prio else ""
        if why:
            print(f"\n== {label}: not measured: {why}")
            continue
        server = Server(raw / f"franka_sim_{variant}.log", server_prio)
        server.log_path.unlink(missing_ok=True)
        results: dict[str, dict[str, Any]] = {}
        try:
            server.start()
            # With franka-sim running (it takes most of a core): a hold of about gil_s under load.
            prof["hog_n"] = _gil_hog_size(prof["gil_s"], prof.get("hog_n", 200_000))
            print(f"\n== {label}: franka-sim on {server.ip} (enforcement on)")
            for part in parts:
                repeats = prof["repeats"] if part.startswith("stall_") else 1
                runs = [run_worker(part, variant, server, prof, raw, k) for k in range(repeats)]
                results[part] = runs[0] if repeats == 1 else _merge_runs(runs)
                wall = sum(r.get("wall_s", 0.0) for r in runs)
                print(f"  {part:16s} {wall:5.1f} s  {_status(results[part])}")
        finally:
            server.stop()
        if "stall_aiofranka" not in results:
            results["stall_aiofranka"] = {"not_measured": "--no-aiofranka"}
        all_results[variant] = results
        print()
        print(table1(results, label))
        print()
        text, stream_metrics = table_stream(results["stream"], label)
        print(text)
        print()
        print(table_stalls(results, label))
        set_by = sorted({r.get("libfranka_set", "") for r in results.values()} - {""})
        threads = {
            k: results[k].get("threads") for k in ("jtac", "stall_aiofranka") if results[k].get("threads")
        }
        print(
            f"\nscheduling: client processes {results['bare'].get('fifo', '?')}; threads with SCHED_FIFO: "
            + "; ".join(f"{k}: {v}" for k, v in threads.items())
            + f". libfranka's Robot() had set the connecting thread to {', '.join(set_by) or '?'} "
            "(put back to the variant's policy in every worker)."
        )
        figures = [figure2(results, label, args.out / f"fig2_read_to_read_{variant}.png")]
        f6 = figure6(results["stream"], label, args.out / f"fig6_rate_matching_{variant}.png")
        figures += [f6] if f6 else []
        print("\nfigures: " + ", ".join(str(f.relative_to(ROOT)) for f in figures))
        summary["variants"][variant] = {
            part: {k: v for k, v in r.items() if k != "arrays"} for part, r in results.items()
        }
        summary["variants"][variant]["stream_metrics"] = stream_metrics
    if all_results:
        path = figure_stalls(all_results, args.out / "fig_stalls.png")
        print(f"figure: {path.relative_to(ROOT)}")
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print(f"\ntotal {time.monotonic() - t_all:.0f} s; raw data and logs in {raw.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
