"""Example 07: two simulated FR3s in one process, on one clock (``jtac_py.ArmGroup``).

What runs: two MuJoCo FR3s side by side, 0.6 m apart, facing a table (each with its own F/T sensor,
hardware thread and controller thread), the group on the host's steady clock. Two steps of a
hand-over between the arms:

1. A synchronised goal: both arms turn towards each other until their tool centre points (TCPs) are
   a hand-over distance apart, one 14-joint trajectory started on both at one instant.
2. A 14-joint chunk stream: a 10 Hz "policy" moves the object held between the TCPs (their
   midpoint) up and back down, each chunk 16 points 50 ms apart for both arms from one observation.

Prints the start instant of each arm relative to the one asked for, where the TCPs met, how the
object's pose followed the stream, and the command's peaks. Exits non-zero when a check fails.

Run: .venv/bin/python examples/07_two_arms.py [--lockstep]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from jtac_py import ArmGroup, Trajectory

TURN_RAD = 0.55  # joint 1 of each arm, towards the other [rad]
LIFT_RAD = np.array([0.0, -0.25, 0.0, 0.35, 0.0, -0.1, 0.0])  # a lift of the object, per arm [rad]
CHUNK_POINTS, CHUNK_DT_S, POLICY_PERIOD_S = 16, 0.05, 0.1
STREAM_S = 4.0  # the object goes up and back down over this long [s]


def tcp_positions(group: ArmGroup) -> dict[str, np.ndarray]:
    """Each arm's TCP in the world [m] (its base pose applied)."""
    return {
        arm: c.hardware.frame_pose(c.hardware.tcp_frame)[:3, 3].copy() for arm, c in group.controllers.items()
    }


def q_cmd(group: ArmGroup) -> np.ndarray:
    return np.concatenate([np.array(c.state.q_cmd) for c in group.controllers.values()])


def start_offsets_ms(data: dict, start_at_s: float) -> dict[str, float]:
    """Per arm: when its trajectory time was 0 on the group clock, minus the instant asked for [ms]."""
    offsets = {}
    for arm, rows in data.items():
        executing = rows["trajectory_time"] > 0
        instant = np.median(rows["group_time"][executing] - rows["trajectory_time"][executing])
        offsets[arm] = float(instant - start_at_s) * 1e3
    return offsets


def lift(phase: np.ndarray) -> np.ndarray:
    """The object's lift along the stream, 0 → 1 → 0 (a smooth bump), at phase in [0, 1]."""
    p = np.clip(phase, 0.0, 1.0)
    return np.sin(np.pi * p) ** 2


def stream_policy(group: ArmGroup, q_meet: np.ndarray) -> int:
    """The 10 Hz policy: chunks of both arms' lift, observed now; returns the chunks sent."""
    lift_both = np.concatenate([LIFT_RAD, LIFT_RAD])
    sent = 0
    with group.stream() as stream:
        t0 = stream.now()
        while stream.now() - t0 < STREAM_S + 0.5:
            observed = stream.now()
            times = np.arange(1, CHUNK_POINTS + 1) * CHUNK_DT_S
            phase = (observed + times - t0) / STREAM_S
            stream.send_chunk(times, q_meet + np.outer(lift(phase), lift_both), observed_at_s=observed)
            sent += 1
            if group.lockstep:
                group.step(int(POLICY_PERIOD_S * 1000))
            else:
                time.sleep(POLICY_PERIOD_S)
    return sent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockstep", action="store_true", help="virtual clock (deterministic, fast)")
    args = parser.parse_args()
    group = ArmGroup.simulated_pair(clock="lockstep" if args.lockstep else "realtime").start()
    try:
        if group.lockstep:
            group.step(20)
        q_home = q_cmd(group)
        tcp_home = tcp_positions(group)
        turn = np.zeros(14)
        turn[0], turn[7] = -TURN_RAD, TURN_RAD  # left turns towards -y, right towards +y
        q_meet = q_home + turn
        with group.record(["time", "host_time", "trajectory_time", "dq_cmd"]) as rec:
            handle = group.follow(Trajectory.quintic(q_home, q_meet, 2.0), wait=False)
            meet = handle.result(timeout=10.0)
        offsets = start_offsets_ms(rec.data(), handle.start_at_s)
        tcp_meet = tcp_positions(group)
        gap_m = float(np.linalg.norm(tcp_meet["left"] - tcp_meet["right"]))
        object_at_meet = (tcp_meet["left"] + tcp_meet["right"]) / 2
        with group.record(["time", "host_time", "q_cmd", "dq_cmd"]) as rec:
            chunks = stream_policy(group, q_meet)
        streamed = rec.data()
        object_after = sum(tcp_positions(group).values()) / 2
        limited = {arm: c.timing()["hardware"]["limiter_activations"] for arm, c in group.controllers.items()}
    finally:
        group.stop()
    print(f"goal: {'both SUCCESSFUL' if meet.ok else meet.message}")
    print(
        "start instant on the group clock, from the one asked for: "
        + ", ".join(f"{arm} {ms:+.3f} ms" for arm, ms in offsets.items())
    )
    print(
        f"TCPs {np.linalg.norm(tcp_home['left'] - tcp_home['right']):.3f} m apart at home, {gap_m:.3f} m "
        f"at the hand-over; the object at {np.round(object_at_meet, 3).tolist()} m (world)"
    )
    peaks = {arm: float(np.abs(rows["dq_cmd"]).max()) for arm, rows in streamed.items()}
    rise = {arm: float(np.ptp(rows["q_cmd"][:, 3])) for arm, rows in streamed.items()}
    print(
        f"stream: {chunks} chunks of {CHUNK_POINTS} points; joint 4 rose and fell by "
        + ", ".join(f"{arm} {r:.3f} rad" for arm, r in rise.items())
        + "; peak speeds "
        + ", ".join(f"{arm} {v:.3f} rad/s" for arm, v in peaks.items())
        + f"; back at the hand-over pose within {np.abs(object_after - object_at_meet).max() * 1e3:.2f} mm"
    )
    print(f"limiter activations: {limited}")
    ok = meet.ok and all(abs(ms) < 5.0 for ms in offsets.values())
    ok = ok and gap_m < 0.6 * np.linalg.norm(tcp_home["left"] - tcp_home["right"])
    ok = ok and all(abs(r - LIFT_RAD[3]) < 0.02 for r in rise.values())
    ok = ok and np.abs(object_after - object_at_meet).max() < 0.002 and not any(limited.values())
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
