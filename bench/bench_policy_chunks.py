"""A learned policy's action chunks: three ways to hand them to the arm, side by side in one run.

A synthetic policy tracks a smooth 7-joint target (q0 + A(1 − cos ωt), the target of
``examples/04_policy_chunks.py``). Every 100 ms (or as soon as the previous inference ended) it reads
the controller clock (its observation), "infers" for a seeded 50–150 ms, and produces a chunk of 16
targets 20 ms apart computed from that observation. The same latencies (the same seed) feed three
designs, each on a fresh simulated FR3:

(a) single target: the chunk's first point through ``Stream.send(q)`` — what users do today;
(b) chunk started now: ``Stream.send_chunk(times, q)`` timed from its arrival (latency ignored);
(c) aligned chunk: ``Stream.send_chunk(times, q, observed_at_s=t_obs)`` — jtac's chunks.

On the arm in lockstep (virtual clock, deterministic) and on the real-time simulated arm (its own
1 kHz clock; this machine's scheduling in the figures). Figures, from the controller's 1 kHz command
(``controller.record()``: ``q_cmd``, ``dq_cmd``) after a warm-up of WARMUP_S:

- jerk: third difference of ``q_cmd`` over 1 ms [rad/s³], largest joint per cycle: peak and p99;
- velocity step at chunk boundaries: the largest per-cycle change of ``dq_cmd`` (any joint) within
  BOUNDARY_S after each chunk was sent [rad/s per 1 ms cycle]: median and largest over the chunks
  (the hardware limiter's bound is a_max·T = 8 rad/s² × 1 ms = 0.008 rad/s);
- tracking error of the command against the true target at the same time [mrad]: RMS and peak;
- lag: the delay of the target that fits the command best (RMS, 1 ms grid) [ms];
- the stream's brakes and stale chunks (whole run), and the hardware limiter's activations after
  the warm-up [packets].

A benchmark, not a test: exit code 0 always.

    .venv/bin/python bench/bench_policy_chunks.py [--seconds S] [--seed N] [--lockstep-only]
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

import numpy as np

from jtac_py.controller import Controller
from jtac_py.hardware import SimulatedArm

AMPLITUDE_RAD = np.array([0.15, -0.10, 0.10, 0.20, -0.15, 0.10, 0.25])
OMEGA_RAD_S = np.array([1.5, 2.0, 2.5, 1.2, 3.0, 1.8, 2.2])
CHUNK_POINTS, CHUNK_SPACING_S, CHUNK_PERIOD_S = 16, 0.02, 0.1
LATENCY_S = (0.05, 0.15)  # inference latency, uniform [s]
WARMUP_S = 0.5  # figures start this long after the first observation [s]
BOUNDARY_S = 0.005  # a chunk's boundary: the cycles this long after it was sent [s]
LAG_GRID_S = np.arange(0.0, 0.401, 0.001)  # lags tried for the best fit [s]
DESIGNS = {
    "a": "(a) first point as a single target",
    "b": "(b) chunk started now (latency ignored)",
    "c": "(c) aligned chunk (observed_at_s)",
}


def true_target(q0: np.ndarray, t_s: np.ndarray | float) -> np.ndarray:
    """The policy's target at t_s after the start [rad] ((7,) or (n, 7))."""
    t = np.maximum(np.asarray(t_s, dtype=float), 0.0)[..., None]
    return q0 + AMPLITUDE_RAD * (1.0 - np.cos(OMEGA_RAD_S * t))


@dataclass
class Figures:
    jerk_peak: float
    jerk_p99: float
    step_median: float
    step_max: float
    error_rms_mrad: float
    error_peak_mrad: float
    lag_ms: float
    chunks: int
    brakes: int
    stale: int
    limiter: int


def run(design: str, lockstep: bool, seconds: float, seed: int) -> Figures:
    """One design on a fresh simulated FR3 (see the module docstring)."""
    arm = SimulatedArm("fr3", clock="lockstep" if lockstep else "realtime")
    controller = Controller(arm).start()
    latencies = np.random.default_rng(seed)
    sent_at: list[float] = []
    try:
        if lockstep:
            controller.step(20)
        else:
            time.sleep(0.05)
        with controller.stream() as stream, controller.record(["time", "q_cmd", "dq_cmd"]) as recording:
            q0 = np.array(controller.state.q_cmd)
            start_s = stream.now()

            def wait_until(t_s: float) -> None:
                while stream.now() < t_s:
                    if lockstep:
                        controller.step(1)
                    else:
                        time.sleep(0.0005)

            send: Callable[[np.ndarray, np.ndarray, float], None]
            if design == "a":
                send = lambda offsets, chunk, observed: stream.send(chunk[0])  # noqa: E731
            elif design == "b":
                send = lambda offsets, chunk, observed: stream.send_chunk(offsets, chunk)  # noqa: E731
            else:
                send = lambda offsets, chunk, observed: stream.send_chunk(  # noqa: E731
                    offsets, chunk, observed_at_s=observed
                )
            offsets = CHUNK_SPACING_S * np.arange(CHUNK_POINTS)
            next_observation_s = start_s
            limiter_at_warmup = None
            while stream.now() - start_s < seconds:
                if limiter_at_warmup is None and stream.now() - start_s >= WARMUP_S:
                    limiter_at_warmup = controller.timing()["hardware"]["limiter_activations"]
                wait_until(next_observation_s)
                observed_s = stream.now()
                wait_until(observed_s + latencies.uniform(*LATENCY_S))
                chunk = true_target(q0, observed_s - start_s + offsets)
                sent_at.append(stream.now())
                send(offsets, chunk, observed_s)
                next_observation_s = observed_s + CHUNK_PERIOD_S
            wait_until(stream.now() + 0.01)  # the last input taken and recorded
            rows = recording.data()
            counts = (stream.chunks_taken + stream.targets_taken, stream.brakes, stream.stale_chunks)
        limiter = int(controller.timing()["hardware"]["limiter_activations"] - (limiter_at_warmup or 0))
    finally:
        controller.stop()
    return _figures(rows, q0, start_s, np.array(sent_at), counts, limiter)


def _figures(
    rows: dict[str, np.ndarray],
    q0: np.ndarray,
    start_s: float,
    sent_at: np.ndarray,
    counts: tuple[int, int, int],
    limiter: int,
) -> Figures:
    t, q_cmd, dq_cmd = rows["time"], rows["q_cmd"], rows["dq_cmd"]
    keep = t - start_s >= WARMUP_S
    t, q_cmd, dq_cmd = t[keep], q_cmd[keep], dq_cmd[keep]
    period_s = float(np.median(np.diff(t)))
    jerk = _jerk(t, q_cmd).max(axis=1)
    # Per nominal cycle: a cycle the real-time run lost (2 ms between rows) does not count double.
    dv = (np.abs(np.diff(dq_cmd, axis=0)) / np.diff(t)[:, None] * period_s).max(axis=1)  # [rad/s]
    steps = []
    for s in sent_at[sent_at - start_s >= WARMUP_S]:
        window = (t[1:] > s) & (t[1:] <= s + BOUNDARY_S)
        if window.any():
            steps.append(float(dv[window].max()))
    error = np.abs(q_cmd - true_target(q0, t - start_s)).max(axis=1)
    lag_rms = [np.sqrt(np.mean((q_cmd - true_target(q0, t - start_s - lag)) ** 2)) for lag in LAG_GRID_S]
    return Figures(
        jerk_peak=float(jerk.max()),
        jerk_p99=float(np.percentile(jerk, 99)),
        step_median=float(np.median(steps)) if steps else float("nan"),
        step_max=float(max(steps)) if steps else float("nan"),
        error_rms_mrad=float(np.sqrt(np.mean(error**2))) * 1e3,
        error_peak_mrad=float(error.max()) * 1e3,
        lag_ms=float(LAG_GRID_S[int(np.argmin(lag_rms))]) * 1e3,
        chunks=counts[0],
        brakes=counts[1],
        stale=counts[2],
        limiter=limiter,
    )


def _jerk(t: np.ndarray, q: np.ndarray) -> np.ndarray:
    """|d³q/dt³| [rad/s³] per row and joint: 6 × the third divided difference, exact for a cubic and
    right across the rows' uneven spacing (a real-time run loses a cycle now and then, and a plain
    third difference over 2 ms read as 1 ms would show a jerk of 10⁵–10⁶ rad/s³ that the command
    does not have)."""
    d1 = np.diff(q, axis=0) / np.diff(t)[:, None]
    d2 = np.diff(d1, axis=0) / (t[2:] - t[:-2])[:, None]
    d3 = np.diff(d2, axis=0) / (t[3:] - t[:-3])[:, None]
    return np.abs(6.0 * d3)


def table(results: dict[str, Figures], clock: str) -> str:
    """A markdown table: one column per design."""
    rows = [
        ("command jerk, peak [rad/s³]", lambda f: f"{f.jerk_peak:.0f}"),
        ("command jerk, p99 [rad/s³]", lambda f: f"{f.jerk_p99:.1f}"),
        (
            "velocity step at a chunk boundary, median / max [mrad/s per cycle]",
            lambda f: f"{f.step_median * 1e3:.2f} / {f.step_max * 1e3:.2f}",
        ),
        (
            "command − true target, RMS / peak [mrad]",
            lambda f: f"{f.error_rms_mrad:.1f} / {f.error_peak_mrad:.1f}",
        ),
        ("lag behind the target (best fit) [ms]", lambda f: f"{f.lag_ms:.0f}"),
        ("inputs taken / brakes / stale chunks", lambda f: f"{f.chunks} / {f.brakes} / {f.stale}"),
        ("hardware limiter activations after the warm-up [packets]", lambda f: f"{f.limiter}"),
    ]
    lines = [
        f"| {clock} | " + " | ".join(DESIGNS[d] for d in results) + " |",
        "| --- |" + " --- |" * len(results),
    ]
    for name, cell in rows:
        lines.append(f"| {name} | " + " | ".join(cell(f) for f in results.values()) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="policy time per design [s]")
    parser.add_argument("--seed", type=int, default=1, help="seed of the latencies (same for every design)")
    parser.add_argument("--lockstep-only", action="store_true", help="skip the real-time arm")
    args = parser.parse_args()
    clocks = [("lockstep", True)] + ([] if args.lockstep_only else [("real time", False)])
    print(
        f"bench_policy_chunks: {date.today()}, {platform.node()} ({platform.machine()}, "
        f"{platform.release()}), {args.seconds:g} s per design, seed {args.seed}; chunks of "
        f"{CHUNK_POINTS} points {CHUNK_SPACING_S * 1e3:.0f} ms apart every {CHUNK_PERIOD_S * 1e3:.0f} ms, "
        f"latency {LATENCY_S[0] * 1e3:.0f}–{LATENCY_S[1] * 1e3:.0f} ms; the target's own peak jerk "
        f"{np.max(np.abs(AMPLITUDE_RAD) * OMEGA_RAD_S**3):.1f} rad/s³"
    )
    for clock, lockstep in clocks:
        results = {d: run(d, lockstep, args.seconds, args.seed) for d in DESIGNS}
        print()
        print(table(results, f"simulated FR3, {clock}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
