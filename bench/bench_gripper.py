"""The Franka Hand on franka-sim: jtac's Gripper against a plain pylibfranka.Gripper, and the arm beside it.

franka-sim 1.1.7 serves the hand on TCP 1338 of the robot's address (tools/franka_sim/sim_server.py
--gripper --gripper-physics: the hand is in its MuJoCo model and its servo moves the fingers at 1 kHz;
a virtual 0.03 m object between the fingers, so that a grasp succeeds). The launcher's probe stamps, in
the server process, when the hand's server starts each command, every state datagram it sends, and
when the fingers start, stop or reverse (read after every physics step). Each client runs in a
process of its own and stamps its calls on the same clock (CLOCK_MONOTONIC).

    (a) command → fingers moving: the caller issues a move or grasp → the fingers move (robot side)
    (b) preemption: a move (0.08 → 0.04 m) replaced 30 ms after it was issued by a move back to
        0.08 m → the fingers reverse (robot side)
    (c) state freshness: the age of the state the caller reads (pylibfranka: read_once(), its
        datagram's send time from the probe; jtac: Gripper.state, its age_s and its datagram)
    (d) how long the caller is blocked per call, and how long another Python thread that wants to run
        every 1 ms (a ticker) waits meanwhile
    (e) the arm untouched: jtac's 10 s joint goal on franka-sim without and with the gripper's traffic
        (grasp, release, every 0.5 s, through Controller.gripper): the largest gap between command
        datagrams and the lost cycles as franka-sim counts them (probe), the limiter's activations;
        and the same with the traffic from another process (a pylibfranka.Gripper, the arm without a
        hand), which loads franka-sim alike and leaves the arm's client alone: what changes with it
        is franka-sim's side (its gripper server shares the simulator's process)

Baselines in the same run: (a)–(d) pylibfranka.Gripper as its documentation uses it (blocking
move/grasp/stop, read_once; a replacement from a second thread); (e) the goals without traffic.
franka-sim's own gripper server runs one command to its end before it reads the next and opens the
hand fully on Stop, so (b) measures that server as it is (the real hand aborts on Stop).

    .venv/bin/python bench/bench_gripper.py [--quick] [--seed 1] [--repeats 10] [--write-figures]

Loopback only (127.<104 + 16k>.x.y); a run takes about 2 minutes (--quick: 1 minute). Raw results (the
clients' JSON, the probe, the log) in build/bench/gripper/; --write-figures writes the table to
docs/gripper_figures.md. A benchmark, not a test: exit code 0 unless a client failed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import itertools
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "franka_sim"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gripper_workers import OBJECT_M, TICK_S, run_worker  # noqa: E402
from franka_sim_harness import start_server  # noqa: E402
from sim_server import ProbeEvent, commands_lost  # noqa: E402

OUT_DIR = ROOT / "build" / "bench" / "gripper"
FIGURES = ROOT / "docs" / "gripper_figures.md"
# franka-sim's addresses: 127.<104 + 16k>.<pid-derived> (franka_sim_harness.candidate_ips), apart from
# the tests' 127.10-21, bench_franka_sim.py's 127.40 and bench_franka_faults.py's 127.72.
SECOND_OCTET = 104
WORKER_TIMEOUT_S = 120.0
CLIENT_LEFT_TIMEOUT_S = 5.0
CLIENTS = ("plf", "jtac")  # (a)-(d); the arm workers run (e)
TRAFFIC = {
    None: "none (baseline)",
    "jtac": "jtac's Gripper on this arm, grasp/release every 0.5 s",
    "process": "another process's pylibfranka.Gripper, grasp/release every 0.5 s",
}


# ================================================================================ running


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="3 repeats, 1 s of reads, 2 goals")
    p.add_argument("--seed", type=int, default=1, help="the pauses' seed (their phase to the broadcast)")
    p.add_argument("--repeats", type=int, default=None, help="timed commands of each kind (default 10)")
    p.add_argument("--read-s", type=float, default=None, help="how long (c) reads state [s] (default 3)")
    p.add_argument("--write-figures", action="store_true", help=f"write the table to {FIGURES}")
    p.add_argument("--worker", choices=("plf", "jtac", "arm", "arm-process"), help=argparse.SUPPRESS)
    p.add_argument("--ip", help=argparse.SUPPRESS)
    p.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.repeats is None:
        args.repeats = 3 if args.quick else 10
    if args.read_s is None:
        args.read_s = 1.0 if args.quick else 3.0
    return args


def run_client(args: argparse.Namespace, name: str, sim: Any) -> tuple[dict[str, Any] | None, str]:
    """Runs one client in a process of its own; its JSON, or None and why not."""
    out = OUT_DIR / f"{name}.json"
    out.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        name,
        "--ip",
        sim.ip,
        "--out",
        str(out),
        "--seed",
        str(args.seed),
        "--repeats",
        str(args.repeats),
        "--read-s",
        str(args.read_s),
    ]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(OUT_DIR / f"{name}.log", "w") as log:
        try:
            done = subprocess.run(
                cmd, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=WORKER_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            return None, f"{name}: timed out after {WORKER_TIMEOUT_S:.0f} s (log {log.name})"
    sim.wait_no_clients(CLIENT_LEFT_TIMEOUT_S)
    deadline = time.monotonic() + CLIENT_LEFT_TIMEOUT_S
    while sim.gripper_clients() and time.monotonic() < deadline:
        time.sleep(0.01)
    if done.returncode != 0 or not out.exists():
        return None, f"{name}: exit {done.returncode} (log {OUT_DIR / (name + '.log')})"
    return json.loads(out.read_text()), ""


# ================================================================================ analysis helpers


def stats_ms(values_ns: list[float]) -> dict[str, float]:
    """Median, p90 and max [ms] of durations [ns] (nan when there are none)."""
    if not values_ns:
        return {"median": float("nan"), "p90": float("nan"), "max": float("nan"), "n": 0}
    ms = np.asarray(values_ns, dtype=float) / 1e6
    return {
        "median": float(np.median(ms)),
        "p90": float(np.percentile(ms, 90)),
        "max": float(ms.max()),
        "n": len(ms),
    }


def first_after(events: list[ProbeEvent], t_ns: int, predicate: Any) -> ProbeEvent | None:
    return next((e for e in events if e.t_ns >= t_ns and predicate(e)), None)


def largest_tick_gap_ns(ticks_ns: np.ndarray, t0: int, t1: int, inside: bool = False) -> float:
    """The ticker's largest interval between wake-ups that overlaps [t0, t1] [ns]; `inside`: only the
    intervals within it (a quiet window must not inherit the wait of the command before it)."""
    i0 = int(np.searchsorted(ticks_ns, t0))
    i1 = int(np.searchsorted(ticks_ns, t1))
    if not inside:
        i0, i1 = max(i0 - 1, 0), min(i1 + 1, len(ticks_ns))
    window = ticks_ns[i0:i1]
    return float(np.diff(window).max()) if len(window) > 1 else float("nan")


def window(events: list[ProbeEvent], t0: int, t1: int) -> list[ProbeEvent]:
    return [e for e in events if t0 <= e.t_ns <= t1]


# ================================================================================ (a)–(d)


def command_latencies(run: dict[str, Any], events: list[ProbeEvent]) -> dict[str, list[float]]:
    """(a) and (d) per timed command [ns]: issue → the server starts it, → the fingers move; the
    caller's blocked time and the ticker's largest gap while the command ran."""
    motion = [e for e in events if e.event == "finger_motion"]
    started = [e for e in events if e.event == "gripper_command"]
    ticks = np.asarray(run["ticks_ns"], dtype=np.int64)
    out: dict[str, list[float]] = {
        "to_server": [],
        "to_moving": [],
        "blocked": [],
        "tick_gap": [],
        "stops": [],
    }
    for c in run["commands"]:
        server = first_after(
            started, c["t_issue_ns"], lambda e, kind=c["command"]: e.fields["command"] == kind
        )
        moving = first_after(motion, c["t_issue_ns"], lambda e: e.fields["direction"] != "rest")
        if server is not None:
            out["to_server"].append(server.t_ns - c["t_issue_ns"])
            # a Stop the client sent ahead of it (jtac preempts that way on the real hand)
            out["stops"].append(
                sum(1 for e in window(started, c["t_issue_ns"], server.t_ns) if e.fields["command"] == "stop")
            )
        if moving is not None and moving.t_ns < c["t_done_ns"]:
            out["to_moving"].append(moving.t_ns - c["t_issue_ns"])
        out["blocked"].append(c["t_return_ns"] - c["t_issue_ns"])
        out["tick_gap"].append(largest_tick_gap_ns(ticks, c["t_issue_ns"], c["t_done_ns"]))
    return out


def preemptions(run: dict[str, Any], events: list[ProbeEvent]) -> dict[str, Any]:
    """(b): the replacement's intended time → the fingers open again (robot side)."""
    motion = [e for e in events if e.event == "finger_motion"]
    started = [e for e in events if e.event == "gripper_command"]
    reverse, widths, sent, codes, stops = [], [], [], [], 0
    for r in run["replacements"]:
        closing = first_after(motion, r["t_issue_ns"], lambda e: e.fields["direction"] == "closing")
        if closing is None:
            continue
        opening = first_after(motion, closing.t_ns, lambda e: e.fields["direction"] == "opening")
        if opening is None:
            continue
        reverse.append(opening.t_ns - r["t_intent_ns"])
        stops += sum(
            1 for e in window(started, r["t_intent_ns"], opening.t_ns) if e.fields["command"] == "stop"
        )
        widths.append(opening.fields["width"])
        sent.append(r["t_replace_ns"] - r["t_intent_ns"])
        codes.append(r.get("first_code", ""))
    return {
        "reverse": reverse,
        "width_at_reverse_m": widths,
        "replace_sent": sent,
        "first_codes": codes,
        "stops": stops,
    }


def state_ages(run: dict[str, Any], events: list[ProbeEvent], t0: int, t1: int) -> dict[str, list[float]]:
    """(c): each read's age [ns] from the probe (the datagram's send time), the client's own age_s
    (jtac), and how long the read call took."""
    states = window([e for e in events if e.event == "gripper_state"], t0, t1)
    sent_by_id = {e.message_id: e.t_ns for e in states}  # ids start at 1 per connection
    sent_t = np.asarray([e.t_ns for e in states], dtype=np.int64)
    out: dict[str, list[float]] = {"age_probe": [], "age_client": [], "call": []}
    for r in run["reads"]:
        out["call"].append(r["t_return_ns"] - r["t_call_ns"])
        if "message_id" in r:
            t_sent = sent_by_id.get(r["message_id"])
        else:
            out["age_client"].append(r["age_s"] * 1e9)
            # jtac's snapshot: the newest datagram sent before the client stamped it (time_s on
            # time.monotonic() before a Controller owns the hand)
            t_sent = None
            if np.isfinite(r["time_s"]):
                i = int(np.searchsorted(sent_t, int(r["time_s"] * 1e9), side="right")) - 1
                t_sent = int(sent_t[i]) if i >= 0 else None
        if t_sent is not None:
            out["age_probe"].append(r["t_return_ns"] - t_sent)
    return out


# ================================================================================ (e)


def motion_events(events: list[ProbeEvent], t_ns: int) -> list[ProbeEvent]:
    """The events of the motion under way at t_ns: from its Move's acceptance (the Controller's start)
    to its end (the Controller's stop)."""
    starts = [i for i, e in enumerate(events) if e.event == "move_accepted" and e.t_ns <= t_ns]
    if not starts:
        return []
    first = starts[-1]
    motion = events[first].motion
    end = next(
        (
            i
            for i in range(first + 1, len(events))
            if events[i].event == "motion_end" and events[i].motion == motion
        ),
        len(events) - 1,
    )
    return events[first : end + 1]


def goal_figures(goal: dict[str, Any], events: list[ProbeEvent], ticks_ns: np.ndarray) -> dict[str, Any]:
    """(e) per goal: franka-sim's view of the motion (largest gap between command datagrams, lost cycles)
    and jtac's counters."""
    span = window(events, goal["t_start_ns"], goal["t_end_ns"])
    commands = np.asarray([e.t_ns for e in span if e.event == "command"], dtype=np.int64)
    states = np.asarray([e.t_ns for e in span if e.event == "state"], dtype=np.int64)
    cycles = commands_lost(motion_events(events, goal["t_start_ns"]))
    blocked = [c["t_return_ns"] - c["t_issue_ns"] for c in goal["gripper_calls"]]
    return {
        "traffic": goal["traffic"],
        "goal": goal["goal"] + (f" ({goal['hardware_error']})" if goal.get("hardware_error") else ""),
        "gap_ms": float(np.diff(commands).max()) / 1e6 if len(commands) > 1 else float("nan"),
        "state_gap_ms": float(np.diff(states).max()) / 1e6 if len(states) > 1 else float("nan"),
        "lost": sum(c.lost for c in cycles),
        "max_consecutive_lost": max((c.max_consecutive_lost for c in cycles), default=0),
        "motion_ends": [c.end for c in cycles],
        "limiter_activations": goal["timing"]["limiter_activations"],
        "jtac_gap_packets": goal["timing"]["largest_command_gap"],
        "late_commands": goal["timing"]["late_commands"],
        "tick_wait_ms": largest_tick_gap_ns(ticks_ns, goal["t_start_ns"], goal["t_end_ns"], inside=True)
        / 1e6,
        "gripper_calls": len(blocked),
        "gripper_blocked_max_ms": max(blocked) / 1e6 if blocked else float("nan"),
        "gripper_codes": sorted(set(goal["gripper_codes"])),
    }


# ================================================================================ the table


def fmt(value: float, digits: int = 2) -> str:
    return "-" if value is None or not np.isfinite(value) else f"{value:.{digits}f}"


def ratio(a: float, b: float) -> str:
    return "-" if not (np.isfinite(a) and np.isfinite(b)) or b == 0 else f"{a / b:.2f}"


def trio(s: dict[str, float], digits: int = 2) -> str:
    return f"{fmt(s['median'], digits)} / {fmt(s['p90'], digits)} / {fmt(s['max'], digits)}"


def side_by_side(figures: dict[str, dict[str, Any]]) -> list[list[str]]:
    """Rows of (a)–(d): what, pylibfranka, jtac, ratio jtac / pylibfranka (of the medians)."""
    rows = []

    def row(what: str, key: str, digits: int = 2) -> None:
        plf, jtac = figures.get("plf", {}).get(key), figures.get("jtac", {}).get(key)
        cells = [trio(s, digits) if s else "-" for s in (plf, jtac)]
        r = ratio(jtac["median"], plf["median"]) if plf and jtac else "-"
        rows.append([what, *cells, r])

    row("(a) issue → franka-sim's server starts the command [ms]", "to_server")
    row("(a) issue → the fingers move (robot side) [ms]", "to_moving")
    row("(b) replacement wanted → the fingers reverse (robot side) [ms]", "reverse")
    row("(b) replacement wanted → it is sent [ms]", "replace_sent", 3)
    row("(c) age of the state read (its datagram's send time, probe) [ms]", "age_probe")
    row("(c) the read call [ms]", "read_call", 3)
    row("(d) caller blocked per command [ms]", "blocked", 3)
    row("(d) a 1 ms ticker thread's largest wait while a command runs [ms]", "tick_gap")
    row("(d) the same ticker between commands (its baseline) [ms]", "tick_idle")
    return rows


def idle_tick_gaps(run: dict[str, Any]) -> list[float]:
    """The ticker's largest gap per window while no command ran [ns]: the pauses between two timed
    commands (40–80 ms) and the quiet start cut into windows as long as a median command. The
    machine's (and the client's own threads') share of the ticker's waits."""
    ticks = np.asarray(run["ticks_ns"], dtype=np.int64)
    commands = run["commands"]
    length = int(np.median([c["t_done_ns"] - c["t_issue_ns"] for c in commands]))
    t0, t1 = run["idle_ns"]
    windows = [(t, t + length) for t in range(t0, t1 - length, length)]
    windows += [(a["t_done_ns"], b["t_issue_ns"]) for a, b in itertools.pairwise(commands)]
    return [largest_tick_gap_ns(ticks, a, b, inside=True) for a, b in windows]


def analyse_client(run: dict[str, Any], events: list[ProbeEvent], t0: int, t1: int) -> dict[str, Any]:
    span = window(events, t0, t1)
    lat = command_latencies(run, span)
    pre = preemptions(run, span)
    ages = state_ages(run, span, t0, t1)
    idle = idle_tick_gaps(run)
    return {
        "to_server": stats_ms(lat["to_server"]),
        "to_moving": stats_ms(lat["to_moving"]),
        "blocked": stats_ms(lat["blocked"]),
        "tick_gap": stats_ms(lat["tick_gap"]),
        "tick_idle": stats_ms(idle),
        "reverse": stats_ms(pre["reverse"]),
        "replace_sent": stats_ms(pre["replace_sent"]),
        "age_probe": stats_ms(ages["age_probe"]),
        "age_client": stats_ms(ages["age_client"]),
        "read_call": stats_ms(ages["call"]),
        "stops_before": int(sum(lat["stops"])),
        "stops_replacing": pre["stops"],
        "width_at_reverse_mm": [round(w * 1e3, 1) for w in pre["width_at_reverse_m"]],
        "first_codes": sorted(set(pre["first_codes"])),
        "codes": sorted({c["code"] for c in run["commands"]}),
    }


def markdown(figures: dict[str, Any], goals: list[dict[str, Any]], notes: list[str], header: str) -> str:
    lines = [
        header,
        "",
        "| what | pylibfranka.Gripper (baseline) | jtac Gripper | ratio jtac / baseline |",
        "| --- | --- | --- | --- |",
    ]
    if figures:
        lines += ["| " + " | ".join(r) + " |" for r in side_by_side(figures)]
    lines += [
        "",
        "Cells: median / p90 / max over the repeats.",
        "",
        "(e) the arm, jtac's 10 s joint goal on franka-sim:",
        "",
        "| goal | gripper traffic | result | largest gap between command datagrams [ms] | franka-sim's "
        "largest gap between its state datagrams [ms] | lost cycles "
        "(longest run) | jtac: commands it sent late | limiter activations | jtac: most packets between "
        "two controller samples | "
        "gripper calls (longest in the caller) [ms] | a 1 ms ticker thread's largest wait [ms] |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for k, g in enumerate(goals):
        traffic = TRAFFIC[g["traffic"]]
        calls = (
            f"{g['gripper_calls']} ({fmt(g['gripper_blocked_max_ms'], 3)})" if g["traffic"] == "jtac" else "-"
        )
        lost = f"{g['lost']} ({g['max_consecutive_lost']})"
        cells = [str(k + 1), traffic, g["goal"], fmt(g["gap_ms"]), fmt(g["state_gap_ms"]), lost]
        cells += [str(g["late_commands"]), str(g["limiter_activations"])]
        cells += [str(g["jtac_gap_packets"]), calls, fmt(g["tick_wait_ms"])]
        lines.append("| " + " | ".join(cells) + " |")
    base = [g for g in goals if not g["traffic"]]
    for source in ("jtac", "process"):
        lines += traffic_summary(base, [g for g in goals if g["traffic"] == source], TRAFFIC[source])
    lines += ["", *notes]
    return "\n".join(lines) + "\n"


def traffic_summary(base: list[dict[str, Any]], loaded: list[dict[str, Any]], label: str) -> list[str]:
    """One line: the goals with this traffic against those without, in the same run."""
    lines: list[str] = []
    if base and loaded:
        gap_b, gap_l = (max(g["gap_ms"] for g in gs) for gs in (base, loaded))
        run_b, run_l = (max(g["max_consecutive_lost"] for g in gs) for gs in (base, loaded))
        lost_b, lost_l = (float(np.median([g["lost"] for g in gs])) for gs in (base, loaded))
        late_b, late_l = (float(np.median([g["late_commands"] for g in gs])) for gs in (base, loaded))
        lines += [
            "",
            f"With {label} / without: largest command gap {gap_l:.2f} / {gap_b:.2f} ms = "
            f"{ratio(gap_l, gap_b)}; lost cycles per goal (median) {lost_l:g} / {lost_b:g}; commands jtac "
            f"sent late per goal (median) {late_l:g} / {late_b:g}; longest run of lost cycles {run_l} / "
            f"{run_b} (20 abort). A command gap that franka-sim's own state gap matches is franka-sim "
            "pausing, not the client.",
        ]
    return lines


def machine() -> str:
    cpus = os.cpu_count()
    model = ""
    with contextlib.suppress(OSError, StopIteration), open("/proc/cpuinfo") as info:
        model = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    python = platform.python_version()
    return f"{platform.system()} {platform.release()}, {cpus} CPUs ({model}), Python {python}"


# ================================================================================ main


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        result = run_worker(args)
        args.out.write_text(json.dumps(result, default=float))
        return 0
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    probe = OUT_DIR / "probe.jsonl"
    probe.unlink(missing_ok=True)
    t_run = time.monotonic()
    sim = start_server(
        OUT_DIR / "franka_sim.log",
        SECOND_OCTET,
        probe_path=probe,
        gripper=True,
        gripper_physics=True,
        gripper_object_width=OBJECT_M,
    )
    policy = f"SCHED_FIFO {sim.fifo_priority}" if sim.fifo_priority else "normal priority"
    print(f"franka-sim on {sim.ip} (gripper on 1338, physics hand, object {OBJECT_M} m), {policy}")
    runs: dict[str, tuple[dict[str, Any], int, int]] = {}
    failures = []
    try:
        for name in ("plf", "jtac", "arm", "arm-process"):
            t0 = time.monotonic_ns()
            result, why = run_client(args, name, sim)
            t1 = time.monotonic_ns()
            print(f"  {name}: {'ok' if result else why} ({(t1 - t0) / 1e9:.1f} s)", flush=True)
            if result is None:
                failures.append(why)
            else:
                runs[name] = (result, t0, t1)
        events = sim.probe_events()
    finally:
        sim.stop()
    figures = {
        name: analyse_client(run, events, t0, t1) for name, (run, t0, t1) in runs.items() if name in CLIENTS
    }
    goals = []
    for name in ("arm", "arm-process"):
        if name in runs:
            ticks = np.asarray(runs[name][0]["ticks_ns"], dtype=np.int64)
            goals += [goal_figures(g, events, ticks) for g in runs[name][0]["goals"]]
    notes = run_notes(figures, failures)
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    header = (
        f"Measured {stamp}, {machine()}; franka-sim 1.1.7 (physics hand), seed {args.seed}, "
        f"{args.repeats} repeats, {time.monotonic() - t_run:.0f} s, load average {load} at the end."
    )
    table = markdown(figures, goals, notes, header)
    print()
    print(table)
    (OUT_DIR / "figures.json").write_text(
        json.dumps({"figures": figures, "goals": goals}, indent=1, default=float)
    )
    if args.write_figures:
        write_figures(table)
    return 1 if failures else 0


def run_notes(figures: dict[str, Any], failures: list[str]) -> list[str]:
    notes = [f"Client failed: {why}" for why in failures]
    for name, f in figures.items():
        label = "pylibfranka" if name == "plf" else "jtac"
        notes.append(
            f"{label}: results {', '.join(f['codes'])}; replaced moves ended "
            f"{', '.join(f['first_codes']) or '-'}; width when the fingers reversed "
            f"{f['width_at_reverse_mm']} mm; Stops sent ahead of a timed command {f['stops_before']}, "
            f"ahead of a replacing move {f['stops_replacing']}."
        )
    if "jtac" in figures:
        notes.append(f"jtac's own age_s of the states read: {trio(figures['jtac']['age_client'])} ms.")
    notes.append(
        f"Ticker: a thread sleeping {TICK_S * 1e3:.0f} ms per loop; its largest wait counts the GIL "
        "held by the caller and this machine's scheduling."
    )
    return notes


FIGURES_INTRO = """# The Franka Hand: measured figures

`make bench-gripper` (`bench/bench_gripper.py --write-figures`) on franka-sim's gripper server; what
each row measures and how is in the script's docstring and in bench/README.md ("The Franka Hand on
franka-sim"). The table below is the last run written here.

"""


def write_figures(table: str) -> None:
    FIGURES.write_text(FIGURES_INTRO + table)
    print(f"wrote {FIGURES.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
