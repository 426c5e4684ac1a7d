"""Recordings as MCAP: size and write time of a 60 s, 1 kHz recording, and what writing costs the loop.

A. Lockstep (the simulated FR3 on a virtual clock): a goal out and back over 60 s at 1 kHz, every cycle
   field recorded (60 000 rows); the file size and the time to write it as .mcap (Recording.save:
   ROS 2 channels + the cycle record, zstd chunks) and as .npz, and to read the .mcap back.
B. Real time (the simulated FR3 on its own 1 kHz clock): the controller's largest gap between two
   device commands (controller.timing()["loop"]["max_device_command_gap_us"]) during a goal of
   GOAL_S seconds, without recording, and with every field recorded and streamed to disk
   (record(path="live.mcap"): every CHUNK_ROWS rows written by the event pump's thread; the loop's
   two native threads never wait for it). A fresh arm and Controller per case.

A benchmark, not a test (not in `make test`; `make bench-mcap`): exit code 0 always.

    .venv/bin/python bench/bench_mcap.py [--seconds S] [--goal-s S]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from jtac_py.controller import Controller, Trajectory
from jtac_py.hardware import SimulatedArm
from jtac_py.recording import load

OFFSET_RAD = np.array([0.25, -0.15, 0.2, 0.25, 0.2, 0.25, 0.3])  # home -> home + offset and back
CHUNK_ROWS = 2000  # case B: rows per chunk streamed to disk (2 s at 1 kHz)


def _out_and_back(q0: np.ndarray, total_s: float) -> Trajectory:
    out_leg = Trajectory.quintic(q0, q0 + OFFSET_RAD, total_s / 2, samples=200)
    back = Trajectory.quintic(q0 + OFFSET_RAD, q0, total_s / 2, samples=200)
    return Trajectory(
        times_s=np.concatenate([out_leg.times_s, np.asarray(back.times_s)[1:] + total_s / 2]),
        positions_rad=np.vstack([out_leg.positions_rad, back.positions_rad[1:]]),
        velocities_rad_s=np.vstack([out_leg.velocities_rad_s, back.velocities_rad_s[1:]]),
        accelerations_rad_s2=np.vstack([out_leg.accelerations_rad_s2, back.accelerations_rad_s2[1:]]),
    )


def _timed(fn, *args):
    started = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - started


def lockstep_file(seconds: float, folder: Path) -> None:
    """A: size and write time of a `seconds` long 1 kHz recording."""
    c = Controller(SimulatedArm("fr3", clock="lockstep")).start()
    try:
        c.step(20)
        cycles = round(seconds * c.update_rate_hz)
        c.follow(_out_and_back(c.state.q_cmd, seconds), wait=False)
        with c.record() as rec:
            for _ in range(cycles // 1000):
                c.step(1000)
    finally:
        c.stop()
    mcap_path, mcap_s = _timed(rec.save, folder / "run.mcap")
    npz_path, npz_s = _timed(rec.save, folder / "run.npz")
    _data, load_s = _timed(load, mcap_path)
    mb = 1e-6
    print(f"A. lockstep, {rec.rows} cycles at {c.update_rate_hz} Hz ({seconds:.0f} s), {rec.dropped} dropped")
    print(
        f"   .mcap {mb * mcap_path.stat().st_size:6.1f} MB  written in {mcap_s:5.2f} s  "
        f"read back in {load_s:5.2f} s"
    )
    print(f"   .npz  {mb * npz_path.stat().st_size:6.1f} MB  written in {npz_s:5.2f} s")


def realtime_gap(goal_s: float, folder: Path, recording: bool) -> tuple[float, int]:
    """B: the largest device command gap [ms] during a goal, and the rows streamed to disk."""
    c = Controller(SimulatedArm("fr3", clock="realtime")).start()
    rows = 0
    try:
        time.sleep(0.2)
        handle = c.follow(_out_and_back(c.state.q_cmd, goal_s), wait=False)
        rec = c.record(path=folder / "live.mcap", chunk_rows=CHUNK_ROWS) if recording else None
        handle.result(timeout=goal_s + 10.0)
        if rec is not None:
            rec.stop()
            rows = len(load(folder / "live.mcap")["time"])
        gap_us = c.timing()["loop"]["max_device_command_gap_us"]
    finally:
        c.stop()
    return 1e-3 * gap_us, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="A: recording length [s]")
    parser.add_argument("--goal-s", type=float, default=10.0, help="B: goal length in real time [s]")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lockstep_file(args.seconds, folder)
        print(f"B. real time, a {args.goal_s:.0f} s goal at 1 kHz: the largest gap between device commands")
        plain_ms, _ = realtime_gap(args.goal_s, folder, recording=False)
        print(f"   not recording                                      {plain_ms:5.2f} ms")
        recorded_ms, rows = realtime_gap(args.goal_s, folder, recording=True)
        print(
            f"   recording, streamed to .mcap in chunks of {CHUNK_ROWS} rows ({rows} rows)"
            f"     {recorded_ms:5.2f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
