"""bench_franka_faults.py's clients, each run in a process of its own (bench_franka_faults.py --worker
CLIENT): the bare pylibfranka loop, and jtac with a goal, a 125 Hz stream or a policy's chunks; recovery
after an error. jtac and pylibfranka are imported inside the functions.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import threading
import time
from typing import Any

import numpy as np

CLIENT_FIFO = 80  # the client processes' SCHED_FIFO priority (chrt -f), above franka-sim's 50
DELTA_RAD = np.array([0.2, -0.15, 0.15, 0.2, -0.2, 0.15, 0.3])  # as test/franka/test_jtac_on_franka_sim.py
MOVE_S = 4.0  # the quintic's duration: the faults at 2 s hit it at its peak velocity
HOLD_S = 0.5  # at rest at the end before the motion finishes
RECOVERY_MOVE_S = 1.0  # the motion that proves a recovery
UDP_TIMEOUT_S = 1.0  # libfranka's UDP receive timeout (Robot's default)
RESULT_MARGIN_S = 0.05  # a dead link must end every pending goal within the timeout + this
STREAM_HZ = 125
# The -mid clients open their stream on the quintic 1 s in (already at 0.58 of its peak velocity) and
# close it 3 s in, still moving: the hand-over at both ends (docs/python_api.md).
MID_OPEN_S, MID_CLOSE_S = 1.0, 3.0
# The chunks client: a policy observing every 100 ms, answering 50–150 ms later (uniform, seeded) with
# 16 points 20 ms apart of the quintic from its observation on (bench/bench_policy_chunks.py's design c).
CHUNK_POINTS, CHUNK_SPACING_S, CHUNK_PERIOD_S, CHUNK_LATENCY_S = 16, 0.02, 0.1, (0.05, 0.15)


def quintic(q0: np.ndarray, t_s: float) -> np.ndarray:
    """q0 → q0 + DELTA_RAD at rest in MOVE_S (jtac's Trajectory.quintic profile)."""
    s = min(max(t_s / MOVE_S, 0.0), 1.0)
    return q0 + DELTA_RAD * (10 * s**3 - 15 * s**4 + 6 * s**5)


# ================================================================================ workers


def _restore_policy() -> str:
    """Puts the calling thread back to the worker's scheduling (libfranka's Robot() sets FIFO 99)."""
    try:
        was = os.sched_getparam(0).sched_priority if os.sched_getscheduler(0) == os.SCHED_FIFO else 0
        if CLIENT_FIFO and os.environ.get("JTAC_BENCH_FIFO") == "1":
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(CLIENT_FIFO))
        else:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except OSError:
        return "unknown"
    return f"SCHED_FIFO {was}" if was else "normal"


def _repair_link(args: argparse.Namespace) -> None:
    """Case (e): the link comes back (SIGUSR1 to the launcher) before recovery is tried."""
    if args.case == "e":
        os.kill(args.server_pid, signal.SIGUSR1)
        time.sleep(0.01)


def _attempt(action: Any) -> dict[str, Any]:
    t0 = time.monotonic()
    try:
        detail = action()
        return {"ok": True, "s": time.monotonic() - t0, "detail": detail}
    except Exception as exc:
        return {"ok": False, "s": time.monotonic() - t0, "error": f"{type(exc).__name__}: {exc}"}


def _bare_motion(plf: Any, robot: Any, duration_s: float, track: bool) -> dict[str, Any]:
    """The bare loop: the quintic by libfranka's Duration, then rest, then motion_finished."""
    out: dict[str, Any] = {}
    control = robot.start_joint_position_control(plf.ControllerMode.JointImpedance)
    state, period = control.readOnce()
    q0 = np.asarray(state.q_d)
    t_s = 0.0
    peak_rad = 0.0
    gc.disable()
    try:
        while True:
            t_s += period.to_sec()
            command = plf.JointPositions(quintic(q0, t_s * MOVE_S / duration_s).tolist())
            command.motion_finished = t_s >= duration_s + HOLD_S
            control.writeOnce(command)
            if command.motion_finished:
                break
            state, period = control.readOnce()
            if track:
                reference = quintic(q0, (t_s + period.to_sec()) * MOVE_S / duration_s)
                peak_rad = max(peak_rad, float(np.abs(reference - np.asarray(state.q)).max()))
    except Exception as exc:  # libfranka's ControlException / NetworkException: the run's outcome
        out.update(error=f"{type(exc).__name__}: {exc}", error_t_ns=time.monotonic_ns())
    finally:
        gc.enable()
        del control
    out.update(robot_time_s=t_s, peak_tracking_mrad=peak_rad * 1e3)
    return out


def work_bare(args: argparse.Namespace) -> dict[str, Any]:
    import pylibfranka as plf

    robot = plf.Robot(args.ip, plf.RealtimeConfig.kIgnore)
    out: dict[str, Any] = {"libfranka_set": _restore_policy()}
    out.update(_bare_motion(plf, robot, MOVE_S, track=True))
    out["outcome"] = out.get("error") or "finished"
    if out.get("error"):
        _repair_link(args)

        def same_connection() -> str:
            robot.automatic_error_recovery()
            again = _bare_motion(plf, robot, RECOVERY_MOVE_S, track=False)
            if again.get("error"):
                raise RuntimeError(again["error"])
            return "motion finished"

        out["recovery_same"] = _attempt(same_connection)
        if not out["recovery_same"]["ok"]:

            def new_connection() -> str:
                fresh = plf.Robot(args.ip, plf.RealtimeConfig.kIgnore)
                _restore_policy()
                if fresh.read_once().robot_mode == plf.RobotMode.Reflex:
                    fresh.automatic_error_recovery()
                again = _bare_motion(plf, fresh, RECOVERY_MOVE_S, track=False)
                if again.get("error"):
                    raise RuntimeError(again["error"])
                return "motion finished"

            del robot
            gc.collect()
            out["recovery_new"] = _attempt(new_connection)
    return out


def _select_limiter(kind: str) -> None:
    """Controller builds its AsyncInterface with the default limiter; in this worker process, with `kind`."""
    if kind == "motion":
        return
    from jtac_py import _native

    make = _native.AsyncInterface
    _native.AsyncInterface = lambda *a, **kw: make(*a, limiter=kind, **kw)


def _jtac(args: argparse.Namespace, arm: Any | None = None) -> tuple[Any, Any]:
    from jtac_py.controller import Controller
    from jtac_py.hardware import FrankaArm

    _select_limiter(args.limiter)

    if arm is None:
        # franka-sim reports zero external wrench estimates: no sensor, a plain trajectory controller;
        # it applies a late command in the cycle it lands in.
        arm = FrankaArm(args.ip, use_estimated_wrench=False, late_commands="applied")
        _restore_policy()  # before start(): jtac's threads would inherit libfranka's FIFO 99
    params: dict[str, Any] = {
        "update_rate": 1000,
        "default_path_tolerance": 0.2,
        "default_goal_time_tolerance": 1.0,
    }
    if os.environ.get("JTAC_BENCH_FIFO") != "1":
        params["realtime_priority"] = 0
    return arm, Controller(arm, **params).start()


def _timing(c: Any) -> dict[str, Any]:
    t = c.timing()
    hw, loop = t["hardware"], t["loop"]
    return {
        "device_errors": hw["device_errors"],
        "held_packets": hw["held_packets"],
        "largest_command_gap": hw["largest_command_gap"],
        "anomalous_ticks": hw["anomalous_ticks"],
        # continued from the robot's echo instead of its own reference (newer builds count it)
        "echo_resyncs": hw.get("echo_resyncs"),
        "late_commands": hw["late_commands"],
        "late_reads": hw["late_reads"],
        "limiter_activations": hw["limiter_activations"],
        "max_write_interval_ms": hw["max_write_interval_s"] * 1e3,
        "unserved_cycles": loop["unserved_cycles"],
        "dext_median_us": t["dext"]["median_s"] * 1e6,
    }


def _recover_jtac(args: argparse.Namespace, arm: Any) -> dict[str, Any]:
    """After an error: automatic_error_recovery() + a new Controller and goal on this arm; where that
    fails, a new FrankaArm (a new connection) + Controller + goal."""
    from jtac_py.controller import Trajectory

    _repair_link(args)
    out: dict[str, Any] = {}

    def run_goal(on_arm: Any | None) -> tuple[Any, str]:
        new_arm, c = _jtac(args, on_arm)
        try:
            q = np.asarray(c.state.q_cmd)
            result = c.follow(Trajectory.quintic(q, q - 0.5 * DELTA_RAD, RECOVERY_MOVE_S), timeout=10.0)
            if not result.ok:
                raise RuntimeError(f"goal {result.code.name}: {result.message}")
        finally:
            c.stop()
        return new_arm, "goal ok"

    holder: dict[str, Any] = {}

    def same_arm() -> str:
        arm.automatic_error_recovery()
        holder["arm"], detail = run_goal(arm)
        return detail

    out["recovery_same"] = _attempt(same_arm)
    if not out["recovery_same"]["ok"]:
        arm.close()
        gc.collect()

        def new_arm() -> str:
            holder["arm"], detail = run_goal(None)
            return detail

        out["recovery_new"] = _attempt(new_arm)
    if "arm" in holder:
        holder["arm"].close()
    return out


def work_goal(args: argparse.Namespace) -> dict[str, Any]:
    from jtac_py.controller import Trajectory

    arm, c = _jtac(args)
    out: dict[str, Any] = {}
    try:
        q0 = np.asarray(c.state.q_cmd)
        done: dict[str, Any] = {}
        with c.record(["q", "q_ref"]) as rec:
            handle = c.follow(Trajectory.quintic(q0, q0 + DELTA_RAD, MOVE_S), wait=False)

            def wait() -> None:  # stamps the moment the result reaches Python
                done["result"] = handle.result(timeout=MOVE_S + 10.0)
                done["t_ns"] = time.monotonic_ns()

            waiter = threading.Thread(target=wait)
            waiter.start()
            waiter.join()
        data = rec.data()
        result = done["result"]
        out.update(
            goal_ok=result.ok,
            outcome="goal ok" if result.ok else f"goal {result.code.name}: {result.message}",
            result_t_ns=done["t_ns"],
            peak_tracking_mrad=float(np.abs(data["q_ref"] - data["q"]).max()) * 1e3
            if len(data["q"])
            else None,
            timing=_timing(c),
        )
        error = c.hardware_error or arm.last_error
        if error:
            out.update(error=error, error_t_ns=done["t_ns"])
    finally:
        c.stop()
    if out.get("error") or not out.get("goal_ok", False):
        out.update(_recover_jtac(args, arm))
    else:
        arm.close()
    return out


def _streamed(args: argparse.Namespace, feed: Any) -> dict[str, Any]:
    """A jtac stream run: `feed(c, arm, stream, q0, out)` sends until the motion is over or the arm
    failed and names what it sent in out["sent"]; then the outcome, tracking error, counters and,
    after an error, the recovery."""
    arm, c = _jtac(args)
    out: dict[str, Any] = {}
    try:
        q0 = np.asarray(c.state.q_cmd)
        with c.record(["q", "q_ref"]) as rec, c.stream() as stream:
            feed(c, arm, stream, q0, out)
        data = rec.data()
        error = c.hardware_error or arm.last_error
        if error:
            out.setdefault("error", error)
            out.setdefault("error_t_ns", time.monotonic_ns())
        out.update(
            outcome=error if error else out["sent"],
            peak_tracking_mrad=float(np.abs(data["q_ref"] - data["q"]).max()) * 1e3
            if len(data["q"])
            else None,
            timing=_timing(c),
        )
    finally:
        c.stop()
    if out.get("error"):
        out.update(_recover_jtac(args, arm))
    else:
        arm.close()
    return out


def _failed(c: Any, arm: Any, out: dict[str, Any]) -> bool:
    """True once the arm failed; the first time, notes when the client knew."""
    error = c.hardware_error or arm.last_error
    if error and "error" not in out:
        out.update(error=error, error_t_ns=time.monotonic_ns())
    return bool(error)


def _stream_feed(window_s: tuple[float, float]) -> Any:
    """Single targets of the quintic from window_s[0] to window_s[1] into it [s]: (0, MOVE_S + HOLD_S)
    is the whole motion; (MID_OPEN_S, MID_CLOSE_S) opens on the target already moving and ends the
    stream (closes it) while it still moves."""

    def feed(c: Any, arm: Any, stream: Any, q0: np.ndarray, out: dict[str, Any]) -> None:
        # Paced by the host's clock (as a policy would be), each target computed for the controller
        # time it is sent at and stamped with it (Stream.send's sampled_at_s, as docs/python_api.md
        # asks of a sender that computes its target for an instant).
        next_send = time.monotonic()
        tc0 = stream.now() - window_s[0]
        delays = []
        while (tc := stream.now()) - tc0 < window_s[1] and not _failed(c, arm, out):
            stream.send(quintic(q0, tc - tc0), sampled_at_s=tc)
            delays.append(stream.target_delay_s)
            next_send += 1.0 / STREAM_HZ
            time.sleep(max(0.0, next_send - time.monotonic()))
        half = len(delays) // 2
        out.update(
            targets_taken=stream.targets_taken,
            late_targets=stream.late_targets,
            # The lag of single targets (stamp → place) at the middle and at the end of the run: a
            # bounded lag does not grow from one to the other.
            target_delay_mid_ms=delays[half] * 1e3 if delays else None,
            target_delay_end_ms=delays[-1] * 1e3 if delays else None,
            sent=f"{stream.targets_taken} targets ({stream.late_targets} late)",
        )

    return feed


def _chunks_feed(args: argparse.Namespace, window_s: tuple[float, float]) -> Any:
    latency = np.random.default_rng(args.seed)
    offsets_s = CHUNK_SPACING_S * np.arange(CHUNK_POINTS)

    def feed(c: Any, arm: Any, stream: Any, q0: np.ndarray, out: dict[str, Any]) -> None:
        def wait_until(t_s: float) -> None:
            while stream.now() < t_s and not _failed(c, arm, out):
                time.sleep(0.0005)

        start_s = stream.now() - window_s[0]
        observe_s = stream.now()
        while stream.now() - start_s < window_s[1] and not _failed(c, arm, out):
            wait_until(observe_s)
            observed_s = stream.now()
            wait_until(observed_s + latency.uniform(*CHUNK_LATENCY_S))
            chunk = np.array([quintic(q0, observed_s - start_s + o) for o in offsets_s])
            stream.send_chunk(offsets_s, chunk, observed_at_s=observed_s)
            observe_s = observed_s + CHUNK_PERIOD_S
        out.update(
            chunks=stream.chunks_taken,
            brakes=stream.brakes,
            stale=stream.stale_chunks,
            sent=f"{stream.chunks_taken} chunks, {stream.stale_chunks} stale",
        )

    return feed


def work_stream(args: argparse.Namespace) -> dict[str, Any]:
    return _streamed(args, _stream_feed((0.0, MOVE_S + HOLD_S)))


def work_chunks(args: argparse.Namespace) -> dict[str, Any]:
    return _streamed(args, _chunks_feed(args, (0.0, MOVE_S + HOLD_S)))


def work_stream_mid(args: argparse.Namespace) -> dict[str, Any]:
    return _streamed(args, _stream_feed((MID_OPEN_S, MID_CLOSE_S)))


def work_chunks_mid(args: argparse.Namespace) -> dict[str, Any]:
    return _streamed(args, _chunks_feed(args, (MID_OPEN_S, MID_CLOSE_S)))


WORKERS = {
    "bare": work_bare,
    "goal": work_goal,
    "stream": work_stream,
    "chunks": work_chunks,
    "stream-mid": work_stream_mid,
    "chunks-mid": work_chunks_mid,
}
