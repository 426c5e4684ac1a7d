"""Example 04: a learned policy's action chunks at 10 Hz on the simulated FR3.

What runs: the MuJoCo FR3 on its own 1 kHz clock, jtac's hardware and controller threads, and a fake
policy in this script. Every 100 ms the policy reads the arm's state (its time on the controller
clock, ``controller.state.time``), "infers" for 50–150 ms, then sends a chunk of 16 joint targets
20 ms apart, timed from that observation: ``stream.send_chunk(times, positions, observed_at_s=...)``.
jtac skips the part of each chunk that is already past, blends the rest into the executing motion
(position, velocity and acceleration continuous) and never re-anchors on the measured state.

Prints the chunks taken, the tracking error against the policy's true target, the peak commanded
acceleration of the controller's command (after the first chunk, which joins a motion already under
way from rest), and the hardware limiter's activations. Exits non-zero when a check fails.

Run: .venv/bin/python examples/04_policy_chunks.py [--lockstep] [--seconds S]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from jtac_py import Controller, SimulatedArm

AMPLITUDE_RAD = np.array([0.15, -0.10, 0.10, 0.20, -0.15, 0.10, 0.25])
OMEGA_RAD_S = np.array([1.5, 2.0, 2.5, 1.2, 3.0, 1.8, 2.2])
CHUNK_POINTS, CHUNK_SPACING_S, CHUNK_PERIOD_S = 16, 0.02, 0.1


def true_target(q0: np.ndarray, t_s: float) -> np.ndarray:
    """What the fake policy wants at time t_s after the start [rad]."""
    return q0 + AMPLITUDE_RAD * (1.0 - np.cos(OMEGA_RAD_S * max(t_s, 0.0)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockstep", action="store_true", help="virtual clock (deterministic, fast)")
    parser.add_argument("--seconds", type=float, default=4.0)
    args = parser.parse_args()
    arm = SimulatedArm("fr3", clock="lockstep" if args.lockstep else "realtime")
    controller = Controller(arm).start()
    rng = np.random.default_rng(0)
    errors = []
    try:
        if args.lockstep:
            controller.step(20)
        else:
            time.sleep(0.05)
        with controller.stream() as stream, controller.record(["time", "dq_cmd"]) as recording:
            q0 = controller.state.q_cmd
            start_s = stream.now()

            def wait_until(t_s: float) -> None:
                """Lets the controller clock reach t_s (stepping it in lockstep), recording the command."""
                while stream.now() < t_s:
                    if args.lockstep:
                        controller.step(1)
                    else:
                        time.sleep(0.001)
                    state = controller.state
                    if state.time - start_s > 0.5:
                        errors.append(np.abs(state.q - true_target(q0, state.time - start_s)).max())

            next_observation_s = start_s
            while stream.now() - start_s < args.seconds:
                wait_until(next_observation_s)
                observed_s = stream.now()  # the policy reads the observation …
                wait_until(observed_s + rng.uniform(0.05, 0.15))  # … and infers
                offsets = CHUNK_SPACING_S * np.arange(CHUNK_POINTS)
                chunk = np.array([true_target(q0, observed_s - start_s + dt) for dt in offsets])
                stream.send_chunk(offsets, chunk, observed_at_s=observed_s)
                next_observation_s = observed_s + CHUNK_PERIOD_S
            limiter = controller.timing()["hardware"]["limiter_activations"]
            taken, stale, brakes = stream.chunks_taken, stream.stale_chunks, stream.brakes
            rows = recording.data()
    finally:
        controller.stop()
    # The controller's command, every 1 ms cycle: its acceleration after the first chunk.
    t, dq_cmd = rows["time"], rows["dq_cmd"]
    ddq = np.diff(dq_cmd, axis=0) / np.diff(t)[:, None]
    peak_acc = np.abs(ddq[t[1:] - t[0] > 0.5]).max()
    print(f"chunks taken {taken} (stale {stale}, brakes {brakes}); limiter activations {limiter}")
    print(f"tracking error vs the policy's target: max {max(errors) * 1e3:.2f} mrad")
    print(f"peak commanded acceleration {peak_acc:.2f} rad/s² (the FR3's limit 10)")
    # One chunk per observation, an observation every 100 ms or when the previous inference ended.
    ok = taken >= int(args.seconds / 0.15) - 2 and stale == 0 and brakes == 0
    ok = ok and max(errors) < 0.01 and peak_acc < 8.0
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
