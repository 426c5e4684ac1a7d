"""bench_pair.py's runs: two FR3s in one ArmGroup, each on its own franka-sim server (enforcement on,
the probe on), and what each run measures. jtac is imported inside the functions.

- start_skew(): both arms hold, a group goal starts, the group is stopped (braked) 30 ms after the
  start instant; each arm's first moving command (its flight recorder, read after the stop: the first
  packet with a nonzero velocity command) is found in its server's probe by the state it answers, and
  the two arrival times are compared (robot side, CLOCK_MONOTONIC).
- goal(): a group goal on both arms with the group's recording: each arm's hardware counters over
  the goal (largest gap between commands, late packets, limiter activations), the cycles its server
  counted lost, reflexes, and the trajectory times of the two arms at equal group times.
- dead_link(): the same goal while the left arm's link dies (its server's dead@ fault): how the
  left arm's goal ends and what the right arm does (the "brake" or "continue" policy).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from franka_sim_harness import FrankaSim, start_server
from sim_server import ProbeEvent, commands_lost, first_command_message_id

from jtac_py.arm_group import trajectory_start_s, trajectory_time_gap

ARMS = ("left", "right")
LEFT_DELTA_RAD = np.array([0.2, -0.15, 0.15, 0.2, -0.2, 0.15, 0.3])  # as the other franka-sim benchmarks
RIGHT_DELTA_RAD = -LEFT_DELTA_RAD
HOLD_BEFORE_START_S = 0.3  # both arms hold before the skew run's goal: the flight recorder's window
STOP_AFTER_START_S = 0.03  # the skew run's group stops this long after the start instant
RESULT_TIMEOUT_S = 20.0
START_WINDOW_S = 0.01  # a trajectory's start: its first 10 cycles (trajectory_start_s)
DEAD_AFTER_S = 1.0  # the dead link: this long after the left server's first command [s]


# ================================================================================ servers and group


def start_pair(
    out_dir: Path, tag: str, octets: tuple[int, int], left_faults: str = ""
) -> dict[str, FrankaSim]:
    """A server per arm, enforcement on, with the probe; `left_faults` on the left arm's link."""
    sims: dict[str, FrankaSim] = {}
    try:
        for arm, octet in zip(ARMS, octets, strict=True):
            probe = out_dir / f"{tag}_{arm}_probe.jsonl"
            probe.unlink(missing_ok=True)  # the probe appends: an earlier run's events must not stay
            sims[arm] = start_server(
                out_dir / f"{tag}_{arm}.log",
                octet,
                probe_path=probe,
                faults=left_faults if arm == "left" else "",
            )
    except BaseException:
        stop_pair(sims)
        raise
    return sims


def stop_pair(sims: dict[str, FrankaSim]) -> None:
    for sim in sims.values():
        sim.stop()


def connect_arms(sims: dict[str, FrankaSim]) -> dict[str, Any]:
    """A FrankaArm per server, as test/franka builds them: no wrench estimate (franka-sim reports
    zeros) and franka-sim's late-command semantics."""
    from jtac_py.hardware import FrankaArm

    return {
        arm: FrankaArm(sim.ip, use_estimated_wrench=False, late_commands="applied")
        for arm, sim in sims.items()
    }


def recover_arms(arms: dict[str, Any]) -> None:
    """automatic_error_recovery() on every arm: clears a reflex of an earlier phase's stop (harmless
    on an arm without one), so that the next group's motion starts."""
    for franka in arms.values():
        franka.automatic_error_recovery()


def close_arms(arms: dict[str, Any]) -> None:
    for franka in arms.values():
        franka.close()


def make_group(arms: dict[str, Any], layout: dict[str, Any], on_fault: str = "brake") -> Any:
    """An ArmGroup (not started) of a new Controller per arm (a Controller on a FrankaArm runs one
    motion: each run builds its own group); `layout`: realtime_priority and {arm: cpu_affinity}."""
    from jtac_py.arm_group import ArmGroup
    from jtac_py.controller import Controller

    controllers = {
        arm: Controller(
            franka,
            # franka-sim's own PD lags a fast move: allow settling.
            default_path_tolerance=0.2,
            default_goal_time_tolerance=1.0,
            realtime_priority=layout["realtime_priority"],
            cpu_affinity=layout["cpu_affinity"][arm],
        )
        for arm, franka in arms.items()
    }
    return ArmGroup(controllers, on_fault=on_fault)


def group_goal(group: Any, duration_s: float) -> Any:
    """A quintic over the group's 14 joints from where they are: left by LEFT_DELTA_RAD, right by
    RIGHT_DELTA_RAD (back and forth: the next run starts from the target)."""
    from jtac_py.controller import Trajectory

    q0 = np.concatenate([np.asarray(c.state.q_cmd) for c in group.controllers.values()])
    sign = 1.0 if q0[3] < -1.5 else -1.0  # joint 4 starts at -1.57; after a goal it is at -1.37
    delta = sign * np.concatenate([LEFT_DELTA_RAD, RIGHT_DELTA_RAD])
    return Trajectory.quintic(q0, q0 + delta, duration_s)


# ================================================================================ robot side


def reflexes(events: list[ProbeEvent], since_ns: float = 0, before_ns: float = math.inf) -> list[str]:
    """libfranka's names of every error a motion on this server ended with in [since_ns, before_ns)."""
    return [
        name
        for e in events
        if e.event == "motion_end" and since_ns <= e.t_ns < before_ns
        for name in e.fields["errors"]
    ]


def reflexes_split(sim: FrankaSim, done_ns: int) -> dict[str, list[str]]:
    """The reflexes while the group ran (before `done_ns`: its goals at rest) and at its stop
    (Controller.stop(): between the hardware thread's last command and FrankaArm.finish_motion the
    robot waits for the Python thread, 20 ms at most)."""
    events = sim.probe_events()
    return {"running": reflexes(events, before_ns=done_ns), "at_stop": reflexes(events, since_ns=done_ns)}


def first_moving_command_ns(controller: Any, sim: FrankaSim) -> int | None:
    """When the arm's first moving command reached its server (probe clock) [ns]; None when the flight
    recorder (read after the threads stopped) does not reach back to the hold before it."""
    trace = controller.packet_trace()
    moving = np.flatnonzero(np.abs(trace["dq_cmd"]).max(axis=1) > 0.0)
    if not moving.size or moving[0] == 0:
        return None
    events = sim.probe_events()
    message_id = first_command_message_id(events) + int(trace["tick"][moving[0]])
    return next((e.t_ns for e in events if e.event == "command" and e.message_id == message_id), None)


def last_motion_cycles(sim: FrankaSim) -> Any:
    """The server's count of the last motion's cycles (sim_server.commands_lost)."""
    return commands_lost(sim.probe_events())[-1]


# ================================================================================ runs


def start_skew(group: Any, sims: dict[str, FrankaSim], goal_s: float) -> dict[str, Any]:
    """A group goal started and braked STOP_AFTER_START_S after its start instant (the group started
    and stopped here): the robot-side arrival of each arm's first moving command."""
    group.start()
    try:
        time.sleep(HOLD_BEFORE_START_S)
        handle = group.follow(group_goal(group, goal_s), wait=False)
        while time.monotonic() < handle.start_at_s + STOP_AFTER_START_S:
            time.sleep(0.002)
        group.brake()
        result = handle.result(timeout=RESULT_TIMEOUT_S)
        braked_ns = time.monotonic_ns()
    finally:
        group.stop()
    split = {arm: reflexes_split(sims[arm], braked_ns) for arm in ARMS}
    first_ns = {arm: first_moving_command_ns(group.controllers[arm], sims[arm]) for arm in ARMS}
    if None in first_ns.values():
        return {"skew_ms": None, "why": "the flight recorder did not reach back to the start"}
    after_ms = {arm: t / 1e6 - handle.start_at_s * 1e3 for arm, t in first_ns.items()}
    return {
        "skew_ms": abs(after_ms["left"] - after_ms["right"]),
        "after_start_ms": after_ms,
        "group_start_skew_ms": None if result.start_skew_s is None else result.start_skew_s * 1e3,
        "reflexes": {arm: split[arm]["running"] for arm in ARMS},
        "reflexes_at_stop": {arm: split[arm]["at_stop"] for arm in ARMS},
    }


def _counters(controller: Any) -> dict[str, Any]:
    return dict(controller.timing()["hardware"])


def _counted_over(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The counts over a phase (after − before) and the peaks since the phase's reset_peaks()."""
    out = {k: after[k] - before[k] for k in after if not k.endswith("_s") and k != "largest_command_gap"}
    out["largest_command_gap"] = after["largest_command_gap"]
    out["max_write_interval_ms"] = after["max_write_interval_s"] * 1e3
    out["max_latency_ms"] = after["max_latency_s"] * 1e3
    return out


def trajectory_time_gaps(data: dict[str, dict[str, np.ndarray]], duration_s: float) -> dict[str, float]:
    """The arms' trajectory times on the group clock: where each was 0 (left − right) [ms]; the gap
    left − right at equal group times over the motion (the right arm's interpolated at the left arm's
    rows) as a line over the group time: its slope (how far the two robots' clocks run apart)
    [ms/s], the median distance of the gaps from it [ms], the largest gap [ms]. Each arm's trajectory
    time runs on its robot's clock; franka-sim's is the count of states it sends, slower than the
    host's by a different amount per server."""
    left, right = data["left"], data["right"]
    gap = trajectory_time_gap(left, right, duration_s)
    return {
        "tau_start_offset_ms": (
            trajectory_start_s(left, START_WINDOW_S) - trajectory_start_s(right, START_WINDOW_S)
        )
        * 1e3,
        "tau_gap_drift_ms_per_s": gap.drift * 1e3,
        "tau_gap_off_line_median_ms": gap.off_line_median_s * 1e3,
        "tau_gap_max_ms": gap.largest_s * 1e3,
    }


def robot_clock_rate(rows: dict[str, np.ndarray]) -> float:
    """The arm's robot clock against the host's over the recording (slope of controller time over
    group time): 1 for a robot that keeps real time."""
    return float(np.polyfit(rows["group_time"] - rows["group_time"][0], rows["time"], 1)[0])


def goal(group: Any, sims: dict[str, FrankaSim], goal_s: float) -> dict[str, Any]:
    """A group goal on both arms (the group started and stopped here): per arm its hardware
    counters over the goal and its server's lost cycles and reflexes; the trajectory-time gaps."""
    group.start()
    try:
        before = {}
        for arm, c in group.controllers.items():
            c._interface.reset_peaks()  # the peaks of this goal only (bench_franka_sim does the same)
            before[arm] = _counters(c)
        with group.record(["time", "trajectory_time"]) as rec:
            result = group.follow(group_goal(group, goal_s), timeout=goal_s + RESULT_TIMEOUT_S)
        after = {arm: _counters(c) for arm, c in group.controllers.items()}
        done_ns = time.monotonic_ns()
    finally:
        group.stop()
    data = rec.data()
    per_arm = {}
    for arm in ARMS:
        cycles = last_motion_cycles(sims[arm])
        per_arm[arm] = {
            **_counted_over(before[arm], after[arm]),
            "robot_lost_cycles": cycles.lost,
            "robot_cycles": cycles.cycles,
            "robot_longest_lost_run": cycles.max_consecutive_lost,
            "reflexes": reflexes_split(sims[arm], done_ns)["running"],
            "reflexes_at_stop": reflexes_split(sims[arm], done_ns)["at_stop"],
            "robot_clock_rate": robot_clock_rate(data[arm]),
        }
    return {
        "ok": result.ok,
        "message": result.message,
        "group_start_skew_ms": None if result.start_skew_s is None else result.start_skew_s * 1e3,
        **trajectory_time_gaps(data, goal_s),
        "arms": per_arm,
    }


def _brake_of(rows: dict[str, np.ndarray], stop_time_s: float | None) -> dict[str, Any]:
    """From the right arm's recording: when its brake began and ended on the group clock, its peak
    deceleration [rad/s²] (the law's output, dq_cmd)."""
    if stop_time_s is None:
        return {}
    k0 = int(np.searchsorted(rows["time"], stop_time_s))
    speed = np.abs(rows["dq_cmd"]).max(axis=1)
    at_rest = np.flatnonzero(speed[k0:] == 0.0)
    k1 = k0 + int(at_rest[0]) if at_rest.size else len(speed) - 1
    dv = np.abs(np.diff(rows["dq_cmd"][k0 : k1 + 1], axis=0)).max(axis=1) / np.diff(rows["time"][k0 : k1 + 1])
    return {
        "brake_start_group_s": float(rows["group_time"][k0]),
        "brake_s": float(rows["time"][k1] - rows["time"][k0]),
        "speed_at_brake_rad_s": float(speed[max(k0 - 1, 0)]),
        "peak_deceleration_rad_s2": float(dv.max()) if dv.size else 0.0,
        "at_rest": bool(speed[k1] == 0.0),
    }


def dead_link(group: Any, sims: dict[str, FrankaSim], goal_s: float) -> dict[str, Any]:
    """A group goal while the left arm's link dies (the group started and stopped here): how each
    arm's goal ends, when the right arm braked (if it did) after the link died, its robot side."""
    right_c = group.controllers["right"]
    group.start()
    try:
        right_c._interface.reset_peaks()
        before = _counters(right_c)
        with group.record(["time", "dq_cmd"]) as rec:
            result = group.follow(group_goal(group, goal_s), timeout=goal_s + RESULT_TIMEOUT_S)
        after = _counters(right_c)
        peer_brakes = int(right_c._loop.peer_brakes)
        right_speed_rad_s = float(np.abs(right_c.state.dq_cmd).max())
        done_ns = time.monotonic_ns()
    finally:
        group.stop()
    trace = right_c.packet_trace()
    dead = next(
        e for e in sims["left"].probe_events() if e.event == "fault" and e.fields.get("kind") == "dead"
    )
    right = result.results["right"]
    brake = _brake_of(rec.data()["right"], right.stop_time_s)
    if "brake_start_group_s" in brake:
        brake["link_dead_to_brake_ms"] = (brake.pop("brake_start_group_s") - dead.t_ns / 1e9) * 1e3
    cycles = last_motion_cycles(sims["right"])
    return {
        "on_fault": group.on_fault,
        "left": result.results["left"].code.name,
        "left_hardware_error": group.controllers["left"].hardware_error,
        "left_robot": reflexes(sims["left"].probe_events()),
        "right": f"{right.code.name}: {right.message}",
        "right_peer_brakes": peer_brakes,
        "right_speed_at_result_rad_s": right_speed_rad_s,
        "right_last_packet_speed_rad_s": float(np.abs(trace["dq_cmd"][-1]).max()),
        **brake,
        "right_counters": _counted_over(before, after),
        "right_robot_lost_cycles": cycles.lost,
        "right_robot_cycles": cycles.cycles,
        "right_reflexes": reflexes_split(sims["right"], done_ns)["running"],
        "right_reflexes_at_stop": reflexes_split(sims["right"], done_ns)["at_stop"],
    }
