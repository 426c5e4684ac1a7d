"""The stream clock against the robot's own counter, on franka-sim (enforcing, its probe, seeded faults).

`Stream.now()` maps the host's monotonic clock onto the controller clock (the robot's ticks;
jtac_loop/clock_map.hpp); a 125 Hz sender stamps its targets with it. This measures how far that map
is from the robot's counter while a 125 Hz stream runs 4 s: at each send the sender reads the host
clock around `stream.now()`; franka-sim's probe logs every state it sends with its message id (the
robot's counter, one per 1 ms) and the host's CLOCK_MONOTONIC, the same clock. The robot's counter at
the send is interpolated between the states around it; the error is `stream.now()` − counter · 1 ms,
less its median (the constant part: where the controller clock starts, the transit, which a stream's
delay absorbs). Per fault case: the error's p50, p99 and largest [ms] while the robot runs (no stall
among its last states: across a stall the counter is not linear between the states around it) and
over every reading, the robot's stalls, and the stream's delay at the end. A benchmark: exit code 0
always.

    .venv/bin/python bench/bench_stream_clock.py [--runs 2] [--cases 0,a,b]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "franka_sim"))
from franka_sim_harness import start_server  # noqa: E402

CASES = {
    "0": ("no fault", ""),
    "a": ("delay 0.3 ± 0.2 ms each way", "delay=0.3ms±0.2ms"),
    "b": ("1 % loss each way", "loss=1%"),
}
SECOND_OCTET = 56  # apart from the tests' 127.10–21 and the other benchmarks' 127.40 / 127.72


def run_once(case: str, seed: int, out_dir: Path) -> dict:
    from jtac_py.controller import Controller
    from jtac_py.hardware import FrankaArm

    spec = CASES[case][1]
    faults = f"{spec} seed={seed}" if spec else ""
    probe = out_dir / f"clock_{case}_{seed}.jsonl"
    probe.unlink(missing_ok=True)
    sim = start_server(out_dir / f"clock_{case}_{seed}.log", SECOND_OCTET, probe_path=probe, faults=faults)
    readings = []  # (host ns at the reading's middle, stream.now())
    try:
        arm = FrankaArm(sim.ip, use_estimated_wrench=False, late_commands="applied")
        c = Controller(arm, update_rate=1000).start()
        try:
            q0 = np.asarray(c.state.q_cmd)
            with c.stream() as stream:
                tc0 = stream.now()
                next_send = time.monotonic()
                while (tc := stream.now()) - tc0 < 4.0 and c.hardware_error is None:
                    before = time.monotonic_ns()
                    now = stream.now()
                    after = time.monotonic_ns()
                    readings.append(((before + after) // 2, now))
                    s = min((tc - tc0) / 4.0, 1.0)
                    stream.send(q0 + 0.2 * (10 * s**3 - 15 * s**4 + 6 * s**5), sampled_at_s=tc)
                    next_send += 1.0 / 125.0
                    time.sleep(max(0.0, next_send - time.monotonic()))
                delay_ms = stream.target_delay_s * 1e3
            error = c.hardware_error
        finally:
            c.stop()
            arm.close()
        time.sleep(0.05)  # the probe's writer flushes every 10 ms
        events = sim.probe_events()
    finally:
        sim.stop()
    states = [(e.t_ns, e.message_id) for e in events if e.event == "state" and e.message_id is not None]
    t_ns = np.array([s[0] for s in states], dtype=float)
    ids = np.array([s[1] for s in states], dtype=float)
    h = np.array([r[0] for r in readings], dtype=float)
    inside = (h > t_ns[0]) & (h < t_ns[-1])
    h, now = h[inside], np.array([r[1] for r in readings])[inside]
    err = now - np.interp(h, t_ns, ids) * 1e-3
    # While the robot runs: no state interval over 1.4 ms among the 5 before the reading and the one
    # across it. Across a stall the counter is not linear between the states around it (the robot
    # froze, then went on), and a map can only learn of a stall after it (clock_map.hpp).
    gaps = np.diff(t_ns)
    k = np.searchsorted(t_ns, h)  # t_ns[k - 1] < h <= t_ns[k]
    running = np.array([k_ >= 6 and gaps[k_ - 6 : k_].max() < 1.4e6 for k_ in k], dtype=bool)
    err -= np.median(err[running]) if running.any() else np.median(err)
    a_all, a_run = np.abs(err) * 1e3, np.abs(err[running]) * 1e3
    return {
        "p50_ms": float(np.percentile(a_run, 50)),
        "p99_ms": float(np.percentile(a_run, 99)),
        "max_ms": float(a_run.max()),
        "all_p99_ms": float(np.percentile(a_all, 99)),
        "all_max_ms": float(a_all.max()),
        "stalls": int((gaps > 1.4e6).sum()),
        "delay_ms": delay_ms,
        "readings": f"{int(running.sum())} of {len(h)}",
        "error": error,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--cases", default="0,a,b")
    args = parser.parse_args()
    out_dir = ROOT / "build" / "bench" / "stream_clock"
    out_dir.mkdir(parents=True, exist_ok=True)
    print(
        "| case | run | robot running: |map − counter| p50 / p99 / max [ms] | every reading: p99 / max [ms] "
        "| robot stalls > 1.4 ms | stream delay at the end [ms] | readings (running of all) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for case in args.cases.split(","):
        for run in range(args.runs):
            r = run_once(case, run + 1, out_dir)
            note = "" if r["error"] is None else f" ({r['error']})"
            print(
                f"| {CASES[case][0]} | {run + 1} "
                f"| {r['p50_ms']:.2f} / {r['p99_ms']:.2f} / {r['max_ms']:.2f} "
                f"| {r['all_p99_ms']:.2f} / {r['all_max_ms']:.2f} | {r['stalls']} | {r['delay_ms']:.1f} "
                f"| {r['readings']}{note} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
