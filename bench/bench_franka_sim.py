"""jtac on franka-sim: the paper's Table 1, Figures 2 and 6, and Python stalls against aiofranka.

franka-sim 1.1.7 (test/franka: the FR3 wire protocol over MuJoCo, enforcement ON: 20 lost cycles in a
row abort with communication_constraints_violation, velocity/acceleration/jerk discontinuities abort
with a reflex) runs on a loopback address of this run (tools/franka_sim/sim_server.py, started and
stopped by tools/franka_sim/franka_sim_harness.py, the harness test/franka's fixtures use too); every
robot-facing client talks to it through pylibfranka 0.21.3 exactly as it would talk to an FR3.

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
after connecting (restore_policy), and records what libfranka had set.

franka-sim is a Python process on the same 2 cores: it publishes at 0.8-1.0 kHz and late whenever it is
starved, so a wall-clock gap between two commands includes the server's own lateness. The robot
ticks skipped (cycle space) separate the two.

A benchmark, not a test: exit code 0 always. Tables on stdout; figures, summary.json, raw data and
logs in build/bench/franka_sim/.

    .venv/bin/python bench/bench_franka_sim.py [--quick] [--variants fifo,normal] [--no-aiofranka]

The same script is each client process (--worker PART): the parent starts franka-sim, then one worker
per part, so that a hang or a reflex stays in its process. The aiofranka worker runs in .venv-aiofranka
(which has no jtac): top-level imports, here and in the modules below, are the standard library, numpy
and the harness only. The parts: bench_franka_sim_common.py (constants, scheduling, recovery, the GIL
hog), bench_franka_sim_workers.py (Table 1 and Figure 6), bench_franka_sim_stalls.py (the stalls),
bench_franka_sim_report.py (tables and figures); this file is the parent and the worker dispatch.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_franka_sim_common import (
    AIOFRANKA_PYTHON,
    CLIENT_LEFT_TIMEOUT_S,
    OUT_DIR,
    ROOT,
    SECOND_OCTET,
    STALL_CASES,
    VARIANTS,
    gil_hog_size,
    profile,
)
from bench_franka_sim_report import (
    figure2,
    figure6,
    figure_stalls,
    status_cell,
    table1,
    table_stalls,
    table_stream,
)
from bench_franka_sim_stalls import work_stall_aiofranka, work_stall_jtac, work_stall_sync
from bench_franka_sim_workers import work_jtac, work_python_loop, work_stream
from franka_sim_harness import SIM_PYTHON, FrankaSim, FrankaSimError, start_server

WORKERS = {
    "bare": lambda a: work_python_loop(a, with_controller=False),
    "sync": lambda a: work_python_loop(a, with_controller=True),
    "jtac": work_jtac,
    "stream": work_stream,
    "stall_jtac": work_stall_jtac,
    "stall_aiofranka": work_stall_aiofranka,
    "stall_sync": work_stall_sync,  # last: its loop aborts under the GIL hold (the next worker recovers)
}


class Server:
    """franka-sim for one variant (enforcement ON), restarted when a client of an earlier part stays."""

    def __init__(self, log_path: Path, fifo_priority: int) -> None:
        self.log_path = log_path
        self.fifo_priority = fifo_priority  # 0: normal priority
        self.sim: FrankaSim | None = None

    @property
    def ip(self) -> str:
        return self.sim.ip if self.sim is not None else ""

    def start(self) -> None:
        self.sim = start_server(self.log_path, SECOND_OCTET, fifo_priority=self.fifo_priority)
        if self.fifo_priority and not self.sim.fifo_priority:
            self.stop()
            raise FrankaSimError(f"franka-sim: SCHED_FIFO {self.fifo_priority} refused; {self.log_path}")

    def stop(self) -> None:
        if self.sim is not None:
            self.sim.stop()

    def restart(self) -> None:
        self.stop()
        self.start()


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
    if not server.sim.wait_no_clients(CLIENT_LEFT_TIMEOUT_S):
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
    prof: dict[str, Any] = profile(args.quick)
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
            prof["hog_n"] = gil_hog_size(prof["gil_s"], prof.get("hog_n", 200_000))
            print(f"\n== {label}: franka-sim on {server.ip} (enforcement on)")
            for part in parts:
                repeats = prof["repeats"] if part.startswith("stall_") else 1
                runs = [run_worker(part, variant, server, prof, raw, k) for k in range(repeats)]
                results[part] = runs[0] if repeats == 1 else _merge_runs(runs)
                wall = sum(r.get("wall_s", 0.0) for r in runs)
                print(f"  {part:16s} {wall:5.1f} s  {status_cell(results[part])}")
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
