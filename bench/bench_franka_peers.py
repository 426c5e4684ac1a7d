"""Side by side with every Franka stack: what the robot receives from jtac and from its peers, on franka-sim.

The peers, each in a venv of its own made by scripts/setup_peers.sh (none is a dependency of jtac):

    jtac        .venv            Controller goals, single-target stream, chunk stream
    bare        .venv            a bare pylibfranka 0.21.3 joint position loop with libfranka's limiter
    franky      .venv-franky     franky-control 2.0.0 (libfranka 0.21.2 inside; Ruckig motions)
    franka-rs   .venv-franka-rs  franka-rs 0.4.0 (`import franka`; its Rust 1 kHz loop)
    aiofranka   .venv-aiofranka  aiofranka 0.9.0 (its native 1 kHz torque loop)

Workloads, the same target motion for every peer (bench_franka_peers_workers.py: TARGET_DELTA_RAD from
the start pose by a 6 s quintic), each peer with its best documented API (the table's API column):

    goal        rest to rest in 6 s (a joint goal, motion or waypoint, whatever the peer offers)
    stream125   the target streamed as single targets at 125 Hz on the host clock
    stream30    the same at 30 Hz
    chunks      a 10 Hz policy: chunks of 16 points 50 ms apart from the observation on, answered
                50–150 ms after it (seeded), observation-stamped where the peer takes a stamp (jtac)

Faults (franka-sim's seeded injector on the UDP link, tools/franka_sim/sim_link.py): none, 1 % random
loss each way, 0.3 ± 0.2 ms delay each way; a fresh server per run (the probe holds that run alone).

Per run, from the robot's side (franka-sim's probe, and the tap of bench_peer_sim_tap.py on the joint
values of every datagram): the reflexes franka-sim raised; the cycles no command answered in time
(lost or late, sim_probe.commands_lost's count, with the longest run); peak and p99 jerk and the
largest acceleration step of the commanded joint positions q_c, one per robot tick (the command that
answered the tick's state, by message id; a tick without one extrapolated at constant acceleration,
as the robot does; peers that command torques give no positions: the measured q then, marked "q");
the peak tracking error of the measured q
against the true target motion; the lag of the command (measured q for torque peers) behind the
target, as the mean time shift over the first and the last 1.5 s of the target's motion; Move
accepted → first command (ms, and the robot's states in between); the client process's CPU time
(time.process_time() around its run, and of it the import of the peer's package, timed on its own).

    .venv/bin/python bench/bench_franka_peers.py [--quick] [--runs 5] [--peers jtac,franky,...]
        [--workloads goal,stream125,stream30,chunks] [--faults none,loss,delay] [--seed 1] [--out DIR]
    .venv/bin/python bench/bench_franka_peers.py --table-from DIR1/summary.json DIR2/summary.json
        (the table of runs measured in parts; the robot's figures again from the raw files)

`make bench-peers` sets up the venvs and runs it (BENCH_PEERS_ARGS pass through). A peer whose venv
is missing, or that cannot run against franka-sim, keeps its row with the reason. Raw results (one
JSON per run, the probe's lines, the tap, logs) in build/bench/franka_peers/. A benchmark, not a test:
exit code 0 always.
"""

from __future__ import annotations

import argparse
import datetime
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
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tools" / "franka_sim"))
sys.path.insert(0, str(HERE))
import franka_sim_harness  # noqa: E402
from bench_common import cpu_model  # noqa: E402
from bench_franka_peers_workers import (  # noqa: E402
    CLIENT_FIFO,
    MOVE_S,
    WORKLOADS,
    api_of,
    quintic,
    quintic_velocity,
)
from bench_peer_sim_tap import COMMAND, STATE, TAP_RECORD  # noqa: E402
from sim_server import commands_lost, move_to_first_command_ms, publication_ratio, read_probe  # noqa: E402

OUT_DIR = ROOT / "build" / "bench" / "franka_peers"
TAP_LAUNCHER = HERE / "bench_peer_sim_tap.py"
WORKER = HERE / "bench_franka_peers_workers.py"
# franka-sim's addresses: 127.<90 + 16k>.<pid-derived> (franka_sim_harness.candidate_ips), apart from the
# tests' 127.10-21 and the other benchmarks' 40 and 72.
SECOND_OCTET = 90
SERVER_FIFO = 50
WORKER_TIMEOUT_S = 60.0
DT_S = 1e-3  # the robot's cycle

PEERS = {
    "jtac": (ROOT / ".venv" / "bin" / "python", "jtac"),
    "bare": (ROOT / ".venv" / "bin" / "python", "bare pylibfranka loop"),
    "franky": (ROOT / ".venv-franky" / "bin" / "python", "franky"),
    "franka-rs": (ROOT / ".venv-franka-rs" / "bin" / "python", "franka-rs"),
    "aiofranka": (ROOT / ".venv-aiofranka" / "bin" / "python", "aiofranka"),
}
FAULTS = {
    "none": ("no fault", ""),
    "loss": ("1 % loss each way", "loss=1%"),
    "delay": ("0.3 ± 0.2 ms delay", "delay=0.3ms±0.2ms"),
}
# The lag windows as fractions of the target motion: 0.5-2 s and 4-5.5 s of the 6 s motion.
LAG_WINDOWS = ((1 / 12, 1 / 3), (2 / 3, 11 / 12))


# ================================================================================ robot side


def read_tap(path: Path) -> dict[str, np.ndarray]:
    """The tap's records: states (t_ns, message_id, q) and commands (t_ns, message_id, q_c, tau_J_d)."""
    data = path.read_bytes() if path.exists() else b""
    n = len(data) // TAP_RECORD.size
    rows = [TAP_RECORD.unpack_from(data, i * TAP_RECORD.size) for i in range(n)]
    out: dict[str, np.ndarray] = {}
    for kind, name in ((STATE, "state"), (COMMAND, "command")):
        mine = [r for r in rows if r[1] == kind]
        out[f"{name}_t_ns"] = np.array([r[0] for r in mine], np.int64)
        out[f"{name}_id"] = np.array([r[2] for r in mine], np.int64)
        out[f"{name}_a"] = np.array([r[3:10] for r in mine], float).reshape(-1, 7)
        out[f"{name}_b"] = np.array([r[10:17] for r in mine], float).reshape(-1, 7)
    return out


def per_cycle(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """What the robot was given each tick: the command that answered the tick's state (its message
    id; the last one sent where a client answered twice), from the first answered tick to the last. A
    tick no command answered is what the robot substitutes, libfranka's docs (system_requirements,
    "Packet Handling": "the robot takes the previous waypoints and performs a linear extrapolation
    (keep acceleration constant and integrate)"), as franka-sim does; before three ticks are known,
    the last held. By id, not by arrival: franka-sim's cycles stretch on a loaded host and under a
    delay, and a command that arrived in a later cycle's interval still answers its own state (late
    ones count in the lost/late column)."""
    if len(ids) == 0:
        return np.zeros((0, 7))
    first, last = int(ids.min()), int(ids.max())
    grid = np.full((last - first + 1, 7), np.nan)
    grid[ids - first] = values  # in arrival order: the last answer to a state wins
    for k in range(1, len(grid)):
        if np.isnan(grid[k, 0]):
            # constant acceleration: q_k = 3 q_k-1 - 3 q_k-2 + q_k-3
            grid[k] = 3 * grid[k - 1] - 3 * grid[k - 2] + grid[k - 3] if k >= 3 else grid[k - 1]
    return grid


def smoothness(q: np.ndarray) -> dict[str, float]:
    """Peak and p99 jerk [rad/s³] (the largest joint per cycle) and the largest acceleration step
    [rad/s²] between two cycles, of positions on the 1 ms grid."""
    if len(q) < 5:
        return {}
    jerk = np.abs(np.diff(q, n=3, axis=0)).max(axis=1) / DT_S**3
    return {
        "jerk_peak": float(jerk.max()),
        "jerk_p99": float(np.percentile(jerk, 99)),
        "acc_step": float(jerk.max() * DT_S),
    }


def lag_ms(
    t_s: np.ndarray, q: np.ndarray, q0: np.ndarray, window_s: tuple[float, float], move_s: float
) -> float | None:
    """The mean time shift τ [ms] of q behind the target in the window (least squares of
    q(t) − target(t) ≈ −τ·target'(t)); positive: q trails."""
    pick = (t_s >= window_s[0]) & (t_s <= window_s[1])
    if pick.sum() < 10:
        return None
    e = q[pick] - np.array([quintic(q0, t, move_s) for t in t_s[pick]])
    v = np.array([quintic_velocity(t, move_s) for t in t_s[pick]])
    return float(-(e * v).sum() / (v * v).sum() * 1e3)


def robot_side(probe: Path, tap: Path, client: dict[str, Any]) -> dict[str, Any]:
    events = read_probe(probe)
    starts = move_to_first_command_ms(events)
    cycles = commands_lost(events)
    out: dict[str, Any] = {
        "motions": len(cycles),
        "reflexes": sorted({e for m in cycles for e in m.errors}),
        "ends": [m.end for m in cycles],
        "lost": sum(m.lost for m in cycles),
        "lost_longest": max((m.max_consecutive_lost for m in cycles), default=0),
        "startup_ms": starts[0].ms if starts else None,
        # The robot's states between the Move and the first command: 2 for libfranka's own loop (its
        # startMotion returns on the state that shows the motion, its readOnce takes the next); the
        # milliseconds add where the state cycle happened to stand at the Move (0-1 ms).
        "startup_states": starts[0].states_between if starts and starts[0].ms is not None else None,
        "dropped": sum(1 for e in events if e.event == "dropped"),
        # franka-sim's states per ms of this machine's clock: below 1 it fell behind real time, and a
        # client timed by the robot's periods trails the host clock by as much.
        "publication_ratio": publication_ratio(events),
    }
    taps = read_tap(tap)
    if len(taps["command_id"]) == 0:
        return out
    positions = bool(np.abs(taps["command_a"]).max() > 0.0)  # a torque loop leaves q_c at zero
    out["signal"] = "q_c" if positions else "q"
    if positions:
        moving = np.abs(taps["command_a"]).max(axis=1) > 0.0
        t_ns, q_series = taps["command_t_ns"][moving], taps["command_a"][moving]
        grid = per_cycle(taps["command_id"][moving], q_series)
    else:
        # The measured q of the states sent while commands came in. float32 on the wire: one ulp near
        # 1 rad (6e-8 rad) is 60 rad/s³ of third difference at 1 ms, the floor of these figures.
        span = (taps["state_t_ns"] >= taps["command_t_ns"].min()) & (
            taps["state_t_ns"] <= taps["command_t_ns"].max()
        )
        t_ns, q_series = taps["state_t_ns"][span], taps["state_a"][span]
        grid = q_series
    out.update(smoothness(grid))
    if "t0_ns" in client and "q0" in client:
        q0 = np.asarray(client["q0"], float)
        move_s = float(client.get("move_s", MOVE_S))
        t_s = (t_ns - client["t0_ns"]) / 1e9
        for name, (a, b) in zip(("lag_start_ms", "lag_end_ms"), LAG_WINDOWS, strict=True):
            out[name] = lag_ms(t_s, q_series, q0, (a * move_s, b * move_s), move_s)
        ts = (taps["state_t_ns"] - client["t0_ns"]) / 1e9
        pick = (ts >= 0.0) & (ts <= move_s + 0.5)
        if pick.any():
            target = np.array([quintic(q0, t, move_s) for t in ts[pick]])
            out["tracking_mrad"] = float(np.abs(taps["state_a"][pick] - target).max() * 1e3)
    return out


# ================================================================================ runs


def _fifo_allowed() -> bool:
    try:
        return subprocess.run(["chrt", "-f", str(CLIENT_FIFO), "true"], capture_output=True).returncode == 0
    except OSError:
        return False


def run_once(
    peer: str, workload: str, fault: str, run: int, seed: int, raw: Path, fifo: bool, move_s: float = MOVE_S
) -> dict[str, Any]:
    """One run in a fresh franka-sim: the worker's JSON under "client", the robot's figures under
    "robot"; "not_measured" with the reason where nothing ran."""
    python = PEERS[peer][0]
    out: dict[str, Any] = {"peer": peer, "workload": workload, "fault": fault, "run": run + 1}
    if not python.exists():
        out["not_measured"] = f"{python.relative_to(ROOT)} is missing: run scripts/setup_peers.sh"
        return out
    name = f"{peer}_{workload}_{fault}_{run + 1}"
    probe, log, result = raw / f"{name}.jsonl", raw / f"{name}_franka_sim.log", raw / f"{name}.json"
    tap = Path(str(probe) + ".tap")
    for path in (probe, log, result, tap):
        path.unlink(missing_ok=True)
    spec = FAULTS[fault][1]
    faults = f"{spec} seed={seed}" if spec else ""
    franka_sim_harness.SIM_SERVER = TAP_LAUNCHER  # franka-sim's launcher with the tap
    server = None
    t0 = time.monotonic()
    try:
        server = franka_sim_harness.start_server(
            log, SECOND_OCTET, probe_path=probe, faults=faults, fifo_priority=SERVER_FIFO if fifo else 0
        )
        prefix = ["chrt", "-f", str(CLIENT_FIFO)] if fifo else []
        cmd = [
            *prefix,
            str(python),
            str(WORKER),
            peer,
            workload,
            server.ip,
            str(seed),
            str(result),
            repr(move_s),
        ]
        env = dict(os.environ, JTAC_BENCH_FIFO="1" if fifo else "0", FRANKA_REALTIME="ignore")
        if python.parent.parent.name != ".venv":
            for var in ("PYTHONPATH", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "AMENT_PREFIX_PATH"):
                env.pop(var, None)
        with open(raw / f"{name}_worker.log", "wb") as f:
            try:
                rc: Any = subprocess.run(
                    cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=env, timeout=WORKER_TIMEOUT_S
                ).returncode
            except subprocess.TimeoutExpired:
                rc = f"timeout ({WORKER_TIMEOUT_S:.0f} s)"
        time.sleep(0.05)  # the probe's and the tap's writers flush every 10 ms
    except franka_sim_harness.FrankaSimError as exc:
        out["not_measured"] = f"franka-sim: {str(exc)[:200]}"
        return out
    finally:
        if server is not None:
            server.stop()
    out["wall_s"] = time.monotonic() - t0
    if result.exists():
        out["client"] = json.loads(result.read_text())
    else:
        tail = (raw / f"{name}_worker.log").read_text(errors="replace").strip().splitlines()[-3:]
        out["client"] = {"error": f"worker exited with {rc}: {' | '.join(tail)[-300:]}"}
    out["robot"] = robot_side(probe, tap, out["client"]) if probe.exists() else {}
    return out


# ================================================================================ the table

HEADER = [
    "peer",
    "workload",
    "fault",
    "API",
    "reflexes",
    "lost/late cycles (longest)",
    "jerk peak / p99 [rad/s³]",
    "acc. step [rad/s²]",
    "tracking [mrad]",
    "lag start / end [ms] (franka-sim's rate)",
    "start-up [ms] (states)",
    "client CPU [s] (of it the import)",
]
# Figures compared with the best peer (lower is better; lag by its magnitude).
COMPARED = {
    "lost": "lost cycles",
    "jerk_peak": "peak jerk",
    "jerk_p99": "p99 jerk",
    "acc_step": "acceleration step",
    "tracking_mrad": "tracking",
    "lag": "lag",
    "startup_states": "start-up",
    "cpu_s": "CPU",
    "run_cpu_s": "CPU after the import",
}


def _median(runs: list[dict[str, Any]], key: str, where: str = "robot") -> float | None:
    values = [r.get(where, {}).get(key) for r in runs]
    values = [abs(v) if key.startswith("lag") else v for v in values if v is not None]
    return float(np.median(values)) if values else None


def _fmt(x: float | None, digits: int = 1) -> str:
    """digits after the point; three significant digits for the very large and the very small."""
    if x is None:
        return "-"
    if x != 0.0 and (abs(x) >= 1e4 or abs(x) < 10.0**-digits):
        return f"{x:.3g}"
    return f"{x:.{digits}f}"


def cell_figures(runs: list[dict[str, Any]]) -> dict[str, float | None]:
    measured = [r for r in runs if r.get("robot")]
    lag = [
        max(abs(r["robot"][k]) for k in ("lag_start_ms", "lag_end_ms") if r["robot"].get(k) is not None)
        for r in measured
        if any(r["robot"].get(k) is not None for k in ("lag_start_ms", "lag_end_ms"))
    ]
    figures = {
        k: _median(measured, k) for k in ("lost", "jerk_peak", "jerk_p99", "acc_step", "tracking_mrad")
    }
    figures["startup_ms"] = _median(measured, "startup_ms")
    figures["startup_states"] = _median(measured, "startup_states")
    figures["cpu_s"] = _median(measured, "cpu_s", "client")
    figures["import_cpu_s"] = _median(measured, "import_cpu_s", "client")
    clients = [r.get("client", {}) for r in measured]
    run_cpu = [c["cpu_s"] - c["import_cpu_s"] for c in clients if "import_cpu_s" in c]
    figures["run_cpu_s"] = float(np.median(run_cpu)) if run_cpu else None
    figures["lag"] = float(np.median(lag)) if lag else None
    signals = {r["robot"].get("signal") for r in measured}
    figures["signal"] = signals.pop() if len(signals) == 1 else None
    # A run that ended in a reflex or a client error is not a figure to beat (an aborted motion has no lag).
    figures["clean"] = bool(measured) and not any(
        r["robot"].get("reflexes") or r.get("client", {}).get("error") for r in measured
    )
    return figures


def row(peer: str, workload: str, fault: str, runs: list[dict[str, Any]], behind: list[str]) -> list[str]:
    base = [PEERS[peer][1], workload, FAULTS[fault][0], api_of(peer, workload)]
    missing = [r for r in runs if "not_measured" in r]
    if missing and len(missing) == len(runs):
        return base + ["not measured: " + missing[0]["not_measured"][:120]] + ["-"] * (len(HEADER) - 5)
    measured = [r for r in runs if r.get("robot")]
    errors = [r["client"].get("error") for r in runs if r.get("client", {}).get("error")]
    if not measured:
        why = errors[0] if errors else "no probe"
        return base + ["did not run: " + str(why)[:160]] + ["-"] * (len(HEADER) - 5)
    reflexes = [", ".join(r["robot"]["reflexes"]) or "none" for r in measured]
    reflex_cell = reflexes[0] if len(set(reflexes)) == 1 else "; ".join(reflexes)
    if errors and reflex_cell == "none":
        reflex_cell += f" (client: {errors[0][:80]})"
    lost = " / ".join(f"{r['robot']['lost']} ({r['robot']['lost_longest']})" for r in measured)
    signal = measured[0]["robot"].get("signal", "q_c")
    med = cell_figures(runs)
    mark = " q" if signal == "q" else ""
    lag_start = _median(measured, "lag_start_ms")
    lag_end = _median(measured, "lag_end_ms")
    signed = [r["robot"].get("lag_start_ms") for r in measured]
    sign = -1.0 if signed and signed[0] is not None and signed[0] < 0 else 1.0
    cells = [
        *base,
        reflex_cell,
        lost,
        f"{_fmt(med['jerk_peak'], 0)} / {_fmt(med['jerk_p99'], 0)}{mark}",
        f"{_fmt(med['acc_step'], 2)}{mark}",
        _fmt(med["tracking_mrad"], 2),
        f"{_fmt(None if lag_start is None else sign * lag_start)} / {_fmt(lag_end)}"
        + (f" (×{rate:.3f})" if (rate := _median(measured, "publication_ratio")) is not None else ""),
        f"{_fmt(med['startup_ms'])} ({_fmt(med['startup_states'], 0)})",
        _fmt(med["cpu_s"], 2) + ("" if med["import_cpu_s"] is None else f" ({_fmt(med['import_cpu_s'], 2)})"),
    ]
    if peer == "jtac" and behind:
        cells[3] += " — **not the best on: " + ", ".join(behind) + "**"
    return cells


def jtac_behind(
    results: dict[tuple[str, str, str], list[dict[str, Any]]],
) -> dict[tuple[str, str], list[str]]:
    """Per (workload, fault): the figures on which some peer beats jtac (medians over the runs)."""
    out: dict[tuple[str, str], list[str]] = {}
    for (peer, workload, fault), runs in results.items():
        if peer != "jtac":
            continue
        mine = cell_figures(runs)
        others = {
            p: cell_figures(r)
            for (p, w, f), r in results.items()
            if p != "jtac" and (w, f) == (workload, fault)
        }
        behind = []
        for key, label in COMPARED.items():
            if mine.get(key) is None:
                continue
            # jerk of commanded positions and of measured ones are not compared
            same_signal = key not in ("jerk_peak", "jerk_p99", "acc_step")
            better = [
                p
                for p, figs in others.items()
                if figs.get(key) is not None
                and figs["clean"]
                and figs[key] < mine[key] * 0.95 - 1e-9
                and (same_signal or figs.get("signal") == mine.get("signal"))
            ]
            if better:
                behind.append(f"{label} ({', '.join(PEERS[p][1] for p in better)})")
        out[(workload, fault)] = behind
    return out


def table(results: dict[tuple[str, str, str], list[dict[str, Any]]]) -> str:
    behind = jtac_behind(results)
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    for (peer, workload, fault), runs in results.items():
        lines.append(
            "| " + " | ".join(row(peer, workload, fault, runs, behind.get((workload, fault), []))) + " |"
        )
    return "\n".join(lines)


def _versions(results: dict[tuple[str, str, str], list[dict[str, Any]]]) -> str:
    seen: dict[str, str] = {}
    for (peer, _w, _f), runs in results.items():
        for r in runs:
            v = r.get("client", {}).get("version")
            if v:
                seen.setdefault(PEERS[peer][1], v)
    return ", ".join(f"{k} {v}" for k, v in seen.items())


# ================================================================================ main


def _pick(text: str, known: Any, what: str) -> list[str]:
    picked = [x.strip() for x in text.split(",") if x.strip()]
    for x in picked:
        if x not in known:
            raise SystemExit(f"--{what}: {x!r} is not one of {', '.join(known)}")
    return picked


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5, help="runs per cell (default 5)")
    p.add_argument("--quick", action="store_true", help="1 run per cell")
    p.add_argument("--peers", default=",".join(PEERS), help="comma-separated, of " + ",".join(PEERS))
    p.add_argument(
        "--workloads", default=",".join(WORKLOADS), help="comma-separated, of " + ",".join(WORKLOADS)
    )
    p.add_argument("--faults", default=",".join(FAULTS), help="comma-separated, of " + ",".join(FAULTS))
    p.add_argument("--seed", type=int, default=1, help="run k of a cell uses seed + k - 1")
    p.add_argument("--normal", action="store_true", help="no SCHED_FIFO even where it is allowed")
    p.add_argument("--out", type=Path, default=OUT_DIR, help="raw results")
    p.add_argument(
        "--table-from",
        type=Path,
        nargs="+",
        metavar="SUMMARY",
        help="measure nothing: print the table of these summary.json files (runs measured in parts, "
        "e.g. each peer with its own --out; a later file's cell replaces an earlier one's)",
    )
    return p.parse_args(argv)


def load_summaries(paths: list[Path]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """The cells of several summary.json files, in the table's order (workload, fault, peer)."""
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for path in paths:
        for runs in json.loads(path.read_text()).values():
            for r in runs:  # the robot's figures again from the raw files, where they are kept
                name = f"{r['peer']}_{r['workload']}_{r['fault']}_{r['run']}"
                probe = path.parent / "raw" / f"{name}.jsonl"
                if "client" in r and probe.exists():
                    r["robot"] = robot_side(probe, Path(str(probe) + ".tap"), r["client"])
            if runs:
                cells[(runs[0]["peer"], runs[0]["workload"], runs[0]["fault"])] = runs
    order = {name: i for i, name in enumerate([*WORKLOADS, *FAULTS, *PEERS])}
    return dict(sorted(cells.items(), key=lambda kv: (order[kv[0][1]], order[kv[0][2]], order[kv[0][0]])))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.table_from:
        merged = load_summaries(args.table_from)
        print(f"Versions: {_versions(merged)}.\n\n{table(merged)}")
        return 0
    runs = 1 if args.quick else args.runs
    peers = _pick(args.peers, PEERS, "peers")
    workloads = _pick(args.workloads, WORKLOADS, "workloads")
    faults = _pick(args.faults, FAULTS, "faults")
    if not franka_sim_harness.SIM_PYTHON.exists():
        print(f"not measured: {franka_sim_harness.SIM_PYTHON} is missing: run scripts/setup_franka_sim.sh")
        return 0
    raw = args.out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    fifo = not args.normal and _fifo_allowed()
    print(
        f"bench_franka_peers: {','.join(peers)} x {','.join(workloads)} x {','.join(faults)} x {runs} runs; "
        f"{'franka-sim SCHED_FIFO 50, clients chrt -f 80' if fifo else 'normal priority'}",
        flush=True,
    )
    t_all = time.monotonic()
    results: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for workload in workloads:
        for fault in faults:
            for peer in peers:
                cell = []
                for run in range(runs):
                    r = run_once(peer, workload, fault, run, args.seed + run, raw, fifo)
                    cell.append(r)
                    robot = r.get("robot") or {}
                    print(
                        f"  {peer:9s} {workload:9s} {fault:5s} run {run + 1}: "
                        f"{r.get('not_measured') or r.get('client', {}).get('outcome', '?')}; "
                        f"reflexes {robot.get('reflexes', '-')}, lost {robot.get('lost', '-')}, "
                        f"jerk {_fmt(robot.get('jerk_peak'), 0)} ({robot.get('signal', '-')}), "
                        f"tracking {_fmt(robot.get('tracking_mrad'), 2)} mrad, "
                        f"lag {_fmt(robot.get('lag_start_ms'))} / {_fmt(robot.get('lag_end_ms'))} ms, "
                        f"franka-sim rate {_fmt(robot.get('publication_ratio'), 3)}",
                        flush=True,
                    )
                    if "not_measured" in r:
                        break  # the same reason for every run
                results[(peer, workload, fault)] = cell
    (args.out / "summary.json").write_text(
        json.dumps({"_".join(k): v for k, v in results.items()}, indent=1, default=str)
    )
    uname = " ".join(platform.uname()[i] for i in (0, 2, 4))
    text = (
        f"Measured {datetime.date.today().isoformat()} on {os.cpu_count()} × {cpu_model()} (`uname -srm`: "
        f"{uname}), "
        f"{'franka-sim at SCHED_FIFO 50, clients under chrt -f 80' if fifo else 'normal priority'}, "
        f"{runs} run(s) per cell (seeds {args.seed}..{args.seed + runs - 1}; figures are medians, lost "
        f"cycles per run), {time.monotonic() - t_all:.0f} s in all. Versions: {_versions(results)}.\n\n"
        f"{table(results)}\n"
    )
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
