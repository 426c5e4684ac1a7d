"""Network faults between the robot and its client: a bare pylibfranka loop against jtac, on franka-sim.

franka-sim 1.1.7 (tools/franka_sim/sim_server.py, enforcement ON: 20 lost cycles in a row abort with
communication_constraints_violation, discontinuities with a reflex) runs with the harness's seeded
fault injector on its UDP link and its robot-side probe, a fresh server for every run (the timed
faults count from the run's first command; the probe holds that run alone). Cases:

    0  no fault (the reference)
    a  every datagram delayed 0.3 ms ± 0.2 ms (uniform), both ways, order kept
    b  1 % random loss, each way
    c  5 consecutive states lost once a second
    d  one 30 ms outage (nothing either way), 2 s after the first command
    e  the link gone for good 2 s after the first command (repaired once the client has given up, so
       that recovery can be measured)

Clients, each in a process of its own (a reflex or a hang stays there):

    bare    a pylibfranka loop, joint position control along the same quintic as jtac's goal, timed by
            libfranka's Duration (the sum of the robot's periods) as libfranka's example loops are
    goal    jtac: FrankaArm(ip, use_estimated_wrench=False, late_commands="applied") +
            Controller(arm, update_rate=1000) following Trajectory.quintic(q0, q0 + Δ, 4 s)
    stream  jtac with the same quintic sampled at 125 Hz on the host clock into Controller.stream()
    chunks  jtac following a policy of the same quintic: every 100 ms an observation, 50–150 ms later
            a chunk of 16 points 20 ms apart from it on, sent with its observation time
            (Stream.send_chunk(observed_at_s=...)); the limiter's activations show whether the command
            arrived smooth
    stream-mid, chunks-mid
            the same opened on the target already moving (1 s into the quintic) and closed while it
            still moves (3 s in): the hand-overs at both ends (a catch-up from rest and a brake to
            rest, both within stop_accelerations); the single targets' lag (target_delay_s) at
            mid-run and at the end

Per run: franka-sim's abort reason (the probe's motion_end), the client's outcome (goal result or
libfranka's exception), the peak tracking error |reference − measured q| (bare: the quintic at the robot
time; goal and stream: the controller's q_ref), the cycles the robot counted lost (probe, the
definition of sim_server.commands_lost) with the longest run of them, Move accepted → first command,
jtac's counters (Controller.timing()), and after an error: when the client knew (for (e): after the
link died, against libfranka's 1 s UDP timeout + 50 ms), then recovery on the same connection
(automatic_error_recovery() and a new motion / Controller) and, where that fails, on a new one.

Limiter: `--limiter ruckig` runs jtac's clients with the hardware thread's RuckigLimiter instead of its
MotionLimiter (franka_hw/README.md, "MotionLimiter or Ruckig"); the limiter activations of every run are
in the raw results and printed per run.

Scheduling: franka-sim at SCHED_FIFO 50 (as the tests), each client process under `chrt -f 80` (jtac's
threads at their default FIFO 80 / 70), where allowed; libfranka's Robot() raises the connecting thread
to FIFO 99 and every worker puts it back. A benchmark, not a test: exit code 0 always.

    .venv/bin/python bench/bench_franka_faults.py [--runs 2] [--cases 0,a,b,c,d,e]
        [--clients bare,goal,stream] [--seed 1] [--limiter motion|ruckig] [--write-readme]

Raw results (one JSON per run, the probe's JSON lines, logs) in build/bench/franka_faults/.

The clients are in bench_franka_faults_workers.py; this script starts franka-sim for each run (through
tools/franka_sim/franka_sim_harness.py), runs itself as the client (--worker CLIENT) and builds the
table.
"""

from __future__ import annotations

import argparse
import datetime
import faulthandler
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "franka_sim"))
from bench_common import cpu_model  # noqa: E402
from bench_franka_faults_workers import (  # noqa: E402
    CLIENT_FIFO,
    RESULT_MARGIN_S,
    UDP_TIMEOUT_S,
    WORKERS,
)
from franka_sim_harness import SIM_PYTHON, FrankaSim, start_server  # noqa: E402
from sim_server import commands_lost, move_to_first_command_ms, read_probe  # noqa: E402

OUT_DIR = ROOT / "build" / "bench" / "franka_faults"
README = ROOT / "bench" / "README.md"
README_SECTION = "## Network faults: a bare libfranka loop against jtac (bench_franka_faults.py)"
README_BEGIN = "<!-- bench_franka_faults.py --write-readme: from here -->"
README_END = "<!-- bench_franka_faults.py --write-readme: to here -->"
# franka-sim's addresses: 127.<72 + 16k>.<pid-derived> (franka_sim_harness.candidate_ips), apart from
# the tests' 127.10-21 and bench_franka_sim.py's 127.40.
SECOND_OCTET = 72
SERVER_FIFO = 50
WORKER_TIMEOUT_S = 60.0

CASES = {
    "0": ("no fault", ""),
    "a": ("delay 0.3 ± 0.2 ms each way", "delay=0.3ms±0.2ms"),
    "b": ("1 % loss each way", "loss=1%"),
    "c": ("5 states lost once a second", "burst=5states@1s"),
    "d": ("one 30 ms outage at 2 s", "outage=30ms@2s"),
    "e": ("link dead from 2 s on", "dead@2s"),
}
CLIENTS = {
    "bare": "bare pylibfranka loop",
    "goal": "jtac, goal at 1 kHz",
    "stream": "jtac, 125 Hz stream",
    "chunks": "jtac, 10 Hz action chunks",
    "stream-mid": "jtac, 125 Hz stream opened and closed mid-motion",
    "chunks-mid": "jtac, 10 Hz chunks opened and closed mid-motion",
}


# ================================================================================ the parent


def _fifo_allowed() -> bool:
    try:
        done = subprocess.run(["chrt", "-f", str(CLIENT_FIFO), "true"], capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


def _robot_side(probe_path: Path) -> dict[str, Any]:
    """What the robot saw, from the probe: per motion its start, lost cycles and end; the faults."""
    events = read_probe(probe_path)
    starts = move_to_first_command_ms(events)
    cycles = commands_lost(events)
    faults = {e.fields["kind"]: e for e in events if e.event == "fault"}
    dropped = sum(1 for e in events if e.event == "dropped")
    delays = [e.t_ns - e.fields["wire_t_ns"] for e in events if e.event == "delayed"]
    return {
        "motions": [
            {
                "move_to_first_command_ms": s.ms,
                "states_between": s.states_between,
                "cycles": m.cycles,
                "lost": m.lost,
                "lost_franka_sim": m.lost_franka_sim,
                "max_consecutive_lost": m.max_consecutive_lost,
                "end": m.end,
                "errors": list(m.errors),
            }
            for s, m in zip(starts, cycles, strict=True)
        ],
        "dead_t_ns": faults["dead"].t_ns if "dead" in faults else None,
        "dropped": dropped,
        "delay_p50_ms": float(np.median(delays)) / 1e6 if delays else None,
    }


def run_once(
    case: str, client: str, run: int, seed: int, raw: Path, fifo: bool, limiter: str = "motion"
) -> dict[str, Any]:
    name = f"{case}_{client}_{run + 1}"
    spec = CASES[case][1]
    faults = f"{spec} seed={seed}" if spec else ""
    probe = raw / f"{name}.jsonl"
    log = raw / f"{name}_franka_sim.log"
    result = raw / f"{name}.json"
    for path in (probe, log, result):
        path.unlink(missing_ok=True)
    server: FrankaSim | None = None
    out: dict[str, Any] = {"case": case, "client": client, "run": run + 1, "faults": faults}
    t0 = time.monotonic()
    try:
        server = start_server(
            log, SECOND_OCTET, probe_path=probe, faults=faults, fifo_priority=SERVER_FIFO if fifo else 0
        )
        prefix = ["chrt", "-f", str(CLIENT_FIFO)] if fifo else []
        cmd = [
            *prefix, sys.executable, str(Path(__file__).resolve()), "--worker", client, "--ip", server.ip,
            "--case", case, "--server-pid", str(server.process.pid), "--result", str(result),
            "--limiter", limiter, "--seed", str(seed),
        ]  # fmt: skip
        env = dict(os.environ, JTAC_BENCH_FIFO="1" if fifo else "0")
        with open(raw / f"{name}_worker.log", "wb") as f:
            try:
                done = subprocess.run(
                    cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=env, timeout=WORKER_TIMEOUT_S
                )
                rc: Any = done.returncode
            except subprocess.TimeoutExpired:
                rc = f"timeout ({WORKER_TIMEOUT_S:.0f} s)"
        time.sleep(0.05)  # the probe's writer flushes every 10 ms
    finally:
        if server is not None:
            server.stop()
    out["wall_s"] = time.monotonic() - t0
    if result.exists():
        out.update(json.loads(result.read_text()))
    else:
        tail = (raw / f"{name}_worker.log").read_text(errors="replace").strip().splitlines()[-3:]
        out["not_measured"] = f"worker exited with {rc}: {' | '.join(tail)[-300:]}"
    out["robot"] = _robot_side(probe) if probe.exists() else {"motions": []}
    dead = out["robot"].get("dead_t_ns")
    if dead is not None and out.get("error_t_ns"):
        out["knew_after_dead_ms"] = (out["error_t_ns"] - dead) / 1e6
    return out


# ================================================================================ the table


def _cell_runs(values: list[str]) -> str:
    """'x' when every run says x, else the runs' values in order, 'x; y'."""
    return values[0] if len(set(values)) == 1 else "; ".join(values)


def _short(text: str | None) -> str:
    """The gist of a client's message: the reflexes it names, libfranka's network error, or its start."""
    if not text:
        return "-"
    reflexes = [
        name for group in re.findall(r"\[([^\]]*)\]", text) for name in re.findall(r'"([a-z_]+)"', group)
    ]
    if reflexes:
        return ", ".join(dict.fromkeys(reflexes))
    network = re.search(r"UDP receive: Timeout|TCP [a-z ]+: [A-Za-z/ ]+", text)
    return network.group(0) if network else text[:60]


def _or_dash(value: Any) -> str:
    return "-" if value is None else str(value)


def _row(case: str, client: str, runs: list[dict[str, Any]]) -> list[str]:
    measured = [r for r in runs if "not_measured" not in r]
    if not measured:
        return [CASES[case][0], CLIENTS[client], "not measured: " + runs[0]["not_measured"][:80]] + ["-"] * 8
    main = [r["robot"]["motions"][0] if r["robot"]["motions"] else {} for r in measured]
    reflex = [", ".join(m.get("errors") or []) or "none" for m in main]
    outcome = [
        "ok"
        if not r.get("error") and (client != "goal" or r.get("goal_ok"))
        else _short(r.get("outcome") or r.get("error"))
        for r in measured
    ]
    peak = [r.get("peak_tracking_mrad") for r in measured]
    lost = [f"{m.get('lost', '-')} ({m.get('max_consecutive_lost', '-')})" for m in main]
    first = [m.get("move_to_first_command_ms") for m in main]
    anomalous = gap = "-"
    if client != "bare":
        t = [r.get("timing") or {} for r in measured]
        anomalous = " / ".join(
            f"{x.get('anomalous_ticks', '-')}, {_or_dash(x.get('echo_resyncs'))}" for x in t
        )
        gap = " / ".join(
            f"{x['max_write_interval_ms']:.1f}" if "max_write_interval_ms" in x else "-" for x in t
        )
    knew = [r.get("knew_after_dead_ms") for r in measured]
    knew_cell = "-"
    if any(k is not None for k in knew):
        knew_cell = " / ".join("-" if k is None else f"{k:.0f}" for k in knew)
    recovery = []
    for r in measured:
        if "recovery_same" not in r:
            recovery.append("-")
            continue
        same = r["recovery_same"]
        text = f"same: ok {same['s']:.1f} s" if same["ok"] else f"same: {_short(same['error'])}"
        if "recovery_new" in r:
            new = r["recovery_new"]
            text += f", new: ok {new['s']:.1f} s" if new["ok"] else f", new: {_short(new['error'])}"
        recovery.append(text)
    return [
        CASES[case][0],
        CLIENTS[client],
        _cell_runs(reflex),
        _cell_runs(outcome),
        " / ".join("-" if p is None else f"{p:.1f}" for p in peak),
        " / ".join(lost),
        " / ".join("-" if f is None else f"{f:.1f}" for f in first),
        anomalous,
        gap,
        knew_cell,
        _cell_runs(recovery),
    ]


HEADER = [
    "case",
    "client",
    "reflex (franka-sim)",
    "client's outcome",
    "peak tracking error [mrad]",
    "cycles lost, robot (longest run)",
    "Move → 1st command [ms]",
    "jtac: anomalous ticks, echo resyncs",
    "jtac: largest command gap [ms]",
    "error known after link died [ms]",
    "recovery",
]


def table(results: dict[tuple[str, str], list[dict[str, Any]]]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    for (case, client), runs in results.items():
        lines.append("| " + " | ".join(_row(case, client, runs)) + " |")
    return "\n".join(lines)


def verdicts(results: dict[tuple[str, str], list[dict[str, Any]]]) -> list[str]:
    """The spec's expectations, checked: no reflex for jtac where the bare loop trips none; a dead link
    ends every pending goal within libfranka's timeout + 50 ms; recovery succeeds."""
    lines = []
    for case in dict.fromkeys(c for c, _ in results):
        bare = results.get((case, "bare"), [])
        bare_reflex = any(r["robot"]["motions"] and r["robot"]["motions"][0].get("errors") for r in bare)
        for client in ("goal", "stream", "chunks"):
            runs = [r for r in results.get((case, client), []) if "not_measured" not in r]
            if not runs:
                continue
            reflexes = [r for r in runs if r["robot"]["motions"] and r["robot"]["motions"][0].get("errors")]
            if not bare_reflex:
                verdict = (
                    "holds" if not reflexes else f"FAILS ({len(reflexes)} of {len(runs)} runs with a reflex)"
                )
                lines.append(
                    f"- ({case}) {CLIENTS[client]}: no reflex where the bare loop trips none: {verdict}"
                )
            if case == "e":
                late = [r.get("knew_after_dead_ms") for r in runs]
                limit_ms = (UDP_TIMEOUT_S + RESULT_MARGIN_S) * 1e3
                ok = all(k is not None and k <= limit_ms for k in late)
                what = "the goal's result" if client == "goal" else "the hardware error"
                measured = ", ".join("-" if k is None else f"{k:.0f} ms" for k in late)
                lines.append(
                    f"- (e) {CLIENTS[client]}: {what} within {limit_ms:.0f} ms of the link dying: "
                    f"{'holds' if ok else 'FAILS'} ({measured})"
                )
            recovered = [r for r in runs if "recovery_same" in r]
            if recovered:
                same = sum(r["recovery_same"]["ok"] for r in recovered)
                new = sum(r.get("recovery_new", {}).get("ok", False) for r in recovered)
                lines.append(
                    f"- ({case}) {CLIENTS[client]}: automatic_error_recovery() + a new Controller on the "
                    f"same arm: {same} of {len(recovered)}; where not, a new FrankaArm + Controller: "
                    f"{new} of {len(recovered) - same}"
                )
    return lines


def _write_readme(text: str) -> None:
    """Replaces the measured part of the README's section (between its markers), keeping the prose."""
    content = README.read_text()
    begin, end = content.find(README_BEGIN), content.find(README_END)
    if begin < 0 or end < begin:
        content = f"{content.rstrip()}\n\n{README_SECTION}\n\n{README_BEGIN}\n{README_END}\n"
        begin, end = content.find(README_BEGIN), content.find(README_END)
    content = content[: begin + len(README_BEGIN)] + "\n" + text + content[end:]
    README.write_text(content)


# ================================================================================ main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=2, help="runs per case and client (default 2)")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated, of " + ",".join(CASES))
    p.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated, of " + ",".join(CLIENTS))
    p.add_argument("--seed", type=int, default=1, help="run k of a case uses seed + k - 1")
    p.add_argument("--normal", action="store_true", help="no SCHED_FIFO even where it is allowed")
    p.add_argument("--out", type=Path, default=OUT_DIR, help="raw results")
    p.add_argument("--write-readme", action="store_true", help="put the table into bench/README.md")
    p.add_argument(
        "--limiter",
        choices=("motion", "ruckig"),
        default="motion",
        help="jtac's hardware limiter (default motion)",
    )
    # worker options (the parent passes them)
    p.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    p.add_argument("--ip", help=argparse.SUPPRESS)
    p.add_argument("--case", help=argparse.SUPPRESS)
    p.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    p.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        faulthandler.dump_traceback_later(WORKER_TIMEOUT_S - 5, exit=True)  # libfranka can wait for ever
        out = WORKERS[args.worker](args)
        args.result.write_text(json.dumps(out, default=str))
        return 0
    if not SIM_PYTHON.exists():
        print(f"not measured: {SIM_PYTHON} is missing: run scripts/setup_franka_sim.sh")
        return 0
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    raw = args.out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    fifo = not args.normal and _fifo_allowed()
    print(
        f"bench_franka_faults: cases {','.join(cases)} x clients {','.join(clients)} x {args.runs} runs, "
        f"limiter {args.limiter}; "
        f"{'franka-sim SCHED_FIFO 50, clients chrt -f 80' if fifo else 'normal priority'}"
    )
    t_all = time.monotonic()
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for case in cases:
        for client in clients:
            runs = []
            for run in range(args.runs):
                r = run_once(case, client, run, args.seed + run, raw, fifo, args.limiter)
                runs.append(r)
                motions = r["robot"]["motions"]
                reflex = ", ".join(motions[0].get("errors") or []) if motions else "?"
                activations = (r.get("timing") or {}).get("limiter_activations", "-")
                lag = ""
                if r.get("target_delay_end_ms") is not None:
                    lag = f", lag {r['target_delay_mid_ms']:.1f} → {r['target_delay_end_ms']:.1f} ms"
                print(
                    f"  ({case}) {client:6s} run {run + 1}: {r['wall_s']:4.1f} s, reflex {reflex or 'none'}, "
                    f"{_short(r.get('outcome') or r.get('not_measured'))}, limiter activations {activations}"
                    f"{lag}"
                )
            results[(case, client)] = runs
    (args.out / "summary.json").write_text(
        json.dumps({f"{c}_{k}": v for (c, k), v in results.items()}, indent=1, default=str)
    )
    uname = " ".join(platform.uname()[i] for i in (0, 2, 4))
    when = datetime.date.today().isoformat()
    cpus = f"{os.cpu_count()} × {cpu_model()}"
    body = table(results)
    checks = "\n".join(verdicts(results))
    text = (
        f"Measured {when} on {cpus} cores (`uname -srm`: {uname}), "
        f"{'franka-sim at SCHED_FIFO 50, clients under chrt -f 80' if fifo else 'normal priority'}, "
        f"{args.runs} runs per cell (seeds {args.seed}..{args.seed + args.runs - 1}; cells list the runs in "
        f"order), {time.monotonic() - t_all:.0f} s in all. "
        "`.venv/bin/python bench/bench_franka_faults.py` (see its docstring) measures it again.\n\n"
        f"{body}\n\nThe spec's expectations, checked:\n\n{checks}\n"
    )
    print()
    print(text)
    if args.write_readme:
        _write_readme(text)
        print(f"written to {README.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
