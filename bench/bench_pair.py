"""Two FR3s in one process (ArmGroup) on two enforced franka-sim servers: start skew, both arms
running, one arm's link dropped, and the thread layout on this machine's cores.

Each arm has a franka-sim server of its own on a loopback address (enforcement on, the robot-side
probe on), its own libfranka connection (FrankaArm), hardware thread and controller thread; a run
starts a fresh pair of servers. Per thread layout (realtime_priority, cpu_affinity = [hardware CPU,
controller CPU] per arm) and repeat:

    (a) start skew, robot side: both arms hold, a 14-joint group goal starts, the group is braked
        30 ms later; each arm's first moving command (its flight recorder) is found in its server's
        probe, and the two arrival times are compared;
    (b) both running: the group goal (GOAL_S) on both arms: per arm the largest gap between
        commands (host clock) and in packets, late commands / late reads / anomalous ticks, limiter
        activations (Controller.timing()), the cycles its server counted lost, reflexes (expected
        none); the two arms' trajectory times at equal group times (the group's recording).

Then, default layout: (c) the same goal while the left arm's link dies 1 s into its motion
(dead@1s), with on_fault="brake" and "continue": how each arm's goal ends, when the right arm
braked after the link died, its peak deceleration and its robot side.

    .venv/bin/python bench/bench_pair.py [--quick] [--repeats 3] [--goal-s 6]

Loopback only (127.<88..95 + 16k>.x.y). About 2 minutes (--quick: 1). Raw results (JSON, the probes,
the servers' logs) in build/bench/pair/. A benchmark, not a test: exit code 0 unless a run failed
to run.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "franka_sim"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_pair_workers import (  # noqa: E402
    close_arms,
    connect_arms,
    dead_link,
    goal,
    make_group,
    recover_arms,
    start_pair,
    start_skew,
    stop_pair,
)
from franka_sim_harness import SIM_PYTHON  # noqa: E402

OUT_DIR = ROOT / "build" / "bench" / "pair"
# franka-sim's addresses: second octets 88..95 in turn, two per run (apart from the tests' 10..31 and
# the other benchmarks' 40, 56, 72, 104), so that a just-stopped pair's TIME_WAIT never moves the next.
_OCTETS = itertools.cycle(range(88, 96))
# The thread layouts: realtime_priority (hardware thread; the controller thread 10 below) and
# cpu_affinity per arm ([] = not pinned; [hardware CPU, controller CPU]; one CPU: both threads on it).
LAYOUTS: dict[str, dict[str, Any]] = {
    "default": {"realtime_priority": 80, "cpu_affinity": {"left": [], "right": []}},
    "arm per core": {"realtime_priority": 80, "cpu_affinity": {"left": [0], "right": [1]}},
    "hw CPU 0 + ctrl CPU 1": {"realtime_priority": 80, "cpu_affinity": {"left": [0, 1], "right": [0, 1]}},
    "normal priority": {"realtime_priority": 0, "cpu_affinity": {"left": [], "right": []}},
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1 repeat per layout, 3 s goals")
    p.add_argument("--repeats", type=int, default=None, help="runs per layout (default 3)")
    p.add_argument("--goal-s", type=float, default=None, help="the group goal's duration [s] (default 6)")
    p.add_argument("--layouts", default=",".join(LAYOUTS), help="comma-separated subset of the layouts")
    args = p.parse_args(argv)
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.goal_s = args.goal_s or (3.0 if args.quick else 6.0)
    return args


def _octets() -> tuple[int, int]:
    return next(_OCTETS), next(_OCTETS)


def layout_run(name: str, run: int, goal_s: float) -> dict[str, Any]:
    """(a) and (b) for one layout on a fresh pair of servers."""
    sims = start_pair(OUT_DIR, f"{name.replace(' ', '_').replace('+', '')}_{run}", _octets())
    try:
        arms = connect_arms(sims)
        try:
            skew = start_skew(make_group(arms, LAYOUTS[name]), sims, goal_s)
            recover_arms(arms)
            both = goal(make_group(arms, LAYOUTS[name]), sims, goal_s)
        finally:
            close_arms(arms)
    finally:
        stop_pair(sims)
    return {"layout": name, "run": run, "skew": skew, "goal": both}


def dead_link_run(on_fault: str, goal_s: float) -> dict[str, Any]:
    """(c): the goal while the left arm's link dies 1 s into its motion."""
    sims = start_pair(OUT_DIR, f"dead_{on_fault}", _octets(), left_faults="dead@1s")
    try:
        arms = connect_arms(sims)
        try:
            return dead_link(make_group(arms, LAYOUTS["default"], on_fault=on_fault), sims, goal_s)
        finally:
            close_arms(arms)
    finally:
        stop_pair(sims)


def _guarded(what: str, run: Any) -> dict[str, Any]:
    """run(), or {'failed': the error} (printed)."""
    try:
        return run()
    except Exception as exc:
        traceback.print_exc()
        return {"failed": f"{what}: {type(exc).__name__}: {exc}"}


# ================================================================================ report


def _fmt(values: list[float], digits: int = 2) -> str:
    """'min–max' of the values (one: the value)."""
    if not values:
        return "–"
    lo, hi = min(values), max(values)
    return f"{lo:.{digits}f}" if lo == hi else f"{lo:.{digits}f}–{hi:.{digits}f}"


def _count(values: list[int]) -> str:
    return _fmt([float(v) for v in values], 0)


def layout_rows(runs: list[dict[str, Any]]) -> list[str]:
    """One Markdown row per layout: ranges over its runs (both arms)."""
    rows = [
        "| layout | runs ok | start skew, robot side [ms] | first moving command after the start "
        "instant [ms] | largest command gap [ms] | largest gap [packets] | late commands / late reads / "
        "anomalous ticks | limiter activations | lost cycles (robot) | reflexes while running | reflexes at "
        "a stop | τ = 0, left − right [ms] | τ gap off its line (median) [ms] |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for name in LAYOUTS:
        mine = [r for r in runs if r.get("layout") == name and "failed" not in r]
        if not mine:
            continue
        skews = [r["skew"]["skew_ms"] for r in mine if r["skew"].get("skew_ms") is not None]
        after = [
            v for r in mine if r["skew"].get("after_start_ms") for v in r["skew"]["after_start_ms"].values()
        ]
        arms = [a for r in mine for a in r["goal"]["arms"].values()]
        late = [f"{a['late_commands']}/{a['late_reads']}/{a['anomalous_ticks']}" for a in arms]
        refl = sorted(
            {x for a in arms for x in a["reflexes"]}
            | {x for r in mine for v in r["skew"].get("reflexes", {}).values() for x in v}
        )
        at_stop = [x for a in arms for x in a["reflexes_at_stop"]]
        at_stop += [x for r in mine for v in r["skew"].get("reflexes_at_stop", {}).values() for x in v]
        rows.append(
            f"| {name} | {sum(r['goal']['ok'] for r in mine)}/{len(mine)} | {_fmt(skews)} | {_fmt(after)} "
            f"| {_fmt([a['max_write_interval_ms'] for a in arms])} "
            f"| {_count([a['largest_command_gap'] for a in arms])} "
            f"| {', '.join(sorted(set(late)))} | {_count([a['limiter_activations'] for a in arms])} "
            f"| {_count([a['robot_lost_cycles'] for a in arms])} | {', '.join(refl) or 'none'} "
            f"| {len(at_stop)} of {4 * len(mine)} "
            f"| {_fmt([r['goal']['tau_start_offset_ms'] for r in mine])} "
            f"| {_fmt([r['goal']['tau_gap_off_line_median_ms'] for r in mine])} |"
        )
    return rows


def clock_rows(runs: list[dict[str, Any]]) -> list[str]:
    """The two franka-sim clocks against the host's and what their difference does to the arms'
    trajectory times (every layout's runs together)."""
    done = [r for r in runs if "failed" not in r]
    rates = [100.0 * (1.0 - a["robot_clock_rate"]) for r in done for a in r["goal"]["arms"].values()]
    drift = [abs(r["goal"]["tau_gap_drift_ms_per_s"]) for r in done]
    largest = [r["goal"]["tau_gap_max_ms"] for r in done]
    own = [r["goal"]["group_start_skew_ms"] for r in done if r["goal"]["group_start_skew_ms"] is not None]
    return [
        f"franka-sim's clock (states sent) runs {_fmt(rates)} % slow against the host's; the two arms' "
        f"trajectory times drift apart by {_fmt(drift)} ms per s of goal; largest gap {_fmt(largest, 1)} ms "
        f"({len(done)} goals).",
        f"GroupResult.start_skew_s of those goals (the starts placed at submission): {_fmt(own)} ms.",
    ]


def dead_rows(dead: list[dict[str, Any]]) -> list[str]:
    rows = [
        "| on_fault | left arm's goal | right arm's goal | link dead → right brakes [ms] | brake [ms] "
        "| peak deceleration [rad/s²] | right: speed at its result [rad/s] | right: lost cycles / reflexes |",
        "| --- | --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for d in dead:
        if "failed" in d:
            rows.append(f"| {d['failed']} |")
            continue
        nan = float("nan")
        rows.append(
            f"| {d['on_fault']} | {d['left']}: {d['left_hardware_error']} | {d['right']} "
            f"| {d.get('link_dead_to_brake_ms', nan):.0f} | {d.get('brake_s', nan) * 1e3:.0f} "
            f"| {d.get('peak_deceleration_rad_s2', nan):.2f} | {d['right_speed_at_result_rad_s']:.3g} "
            f"| {d['right_robot_lost_cycles']} / {', '.join(d['right_reflexes']) or 'none'} "
            f"(at the stop: {', '.join(d['right_reflexes_at_stop']) or 'none'}) |"
        )
    return rows


def header(args: argparse.Namespace) -> str:
    return (
        f"{datetime.date.today().isoformat()}, {platform.node() or 'host'}: {os.cpu_count()} CPUs, "
        f"{platform.platform()}, Python {platform.python_version()}; {args.repeats} run(s) per layout, "
        f"{args.goal_s:.0f} s group goals; `.venv/bin/python bench/bench_pair.py"
        f"{' --quick' if args.quick else ''}`"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not SIM_PYTHON.exists():
        print("franka-sim is not installed (.venv-sim is missing): run scripts/setup_franka_sim.sh")
        return 1
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    runs = []
    for name in [n.strip() for n in args.layouts.split(",") if n.strip()]:
        for run in range(args.repeats):
            print(f"layout {name!r}, run {run + 1}/{args.repeats} ...", flush=True)
            runs.append(
                _guarded(f"{name} run {run}", lambda name=name, run=run: layout_run(name, run, args.goal_s))
            )
    dead = [
        _guarded(f"dead link, {p}", lambda p=p: dead_link_run(p, args.goal_s)) for p in ("brake", "continue")
    ]
    took_s = time.monotonic() - t0
    (OUT_DIR / "results.json").write_text(
        json.dumps({"runs": runs, "dead_link": dead}, indent=1, default=str)
    )
    print("\n" + header(args) + f"; took {took_s:.0f} s\n")
    print("\n".join(layout_rows(runs)) + "\n")
    print("\n".join(clock_rows(runs)) + "\n")
    print("\n".join(dead_rows(dead)))
    print(f"\nraw: {OUT_DIR.relative_to(ROOT)}/results.json")
    failed = [r["failed"] for r in [*runs, *dead] if "failed" in r]
    for why in failed:
        print(f"FAILED TO RUN: {why}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
