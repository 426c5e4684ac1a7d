"""bench_franka_sim.py's workers for the Python stalls: jtac's native loop, the synchronous baseline in a
Python thread, and aiofranka's native loop (run by .venv-aiofranka's interpreter, which has no jtac).

Each runs in a client process of its own (bench_franka_sim.py --worker PART).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import threading
import time
from typing import Any

import numpy as np
from bench_franka_sim_common import (
    STALL_CASES,
    block_event_loop,
    current_policy,
    cycle_space,
    dump_result,
    gil_hog_list,
    max_gap,
    recover,
    restore_policy,
    run_gil_hog,
)
from bench_franka_sim_workers import fifo_threads, goal_leg_s, jtac_controller, reflex_text, there_and_back

# ================================================================================ workers: stalls


def _stall_phases(args: argparse.Namespace, hog_data: list[int], clock: Any, hooks: dict[str, Any]) -> dict:
    """Runs idle / event loop blocked / GIL held; hooks: begin() and end(t0, t1) -> dict per phase."""
    results = {}
    for case, _label in STALL_CASES:
        hooks["begin"]()
        t0 = clock()
        if case == "idle":
            time.sleep(args.idle_s)
            extra = {}
        elif case == "event_loop":
            extra = {"blocked_ms": hooks["block"](args.block_s) * 1e3}
        else:
            extra = {"held_ms": run_gil_hog(hog_data) * 1e3}
        t1 = clock()
        time.sleep(0.05)  # the command that a stall delayed has gone out
        extra.update(hooks["end"](t0, t1))
        results[case] = extra
    return results


def work_stall_jtac(args: argparse.Namespace) -> None:
    """jtac's native loop, a goal running, under the three Python stalls."""
    out: dict[str, Any] = {"fifo": current_policy(), "recovery": recover(args.ip, args.variant)}
    hog_data = gil_hog_list(args.hog_n)
    arm, c = jtac_controller(args)
    try:
        out["threads"] = fifo_threads()
        q0 = np.asarray(c.state.q_cmd)
        handle = c.follow(there_and_back(q0, goal_leg_s(args, stall=True)), wait=False)
        time.sleep(0.2)
        interface = c._interface  # private on purpose: the benchmark reads its peaks

        unserved = [0]

        def begin() -> None:
            interface.reset_peaks()
            unserved[0] = c.timing()["loop"]["unserved_cycles"]

        def end(_t0: float, _t1: float) -> dict[str, Any]:
            counters = interface.counters()
            phase = {
                "gap_ms": counters["max_write_interval_s"] * 1e3,
                "command_gap_packets": counters["largest_command_gap"],
                "unserved_ticks": c.timing()["loop"]["unserved_cycles"] - unserved[0],
                "success_rate": arm.device.command_success_rate,
                "anomalous_ticks": counters["anomalous_ticks"],
            }
            if reflex_text(arm, c):  # the hardware thread has stopped: its peaks mean nothing
                phase.update(gap_ms=float("nan"), aborted=reflex_text(arm, c))
            return phase

        out["phases"] = _stall_phases(
            args, hog_data, time.monotonic, {"begin": begin, "end": end, "block": block_event_loop}
        )
        result = handle.result(timeout=10.0)
        out["goal"] = "goal ok" if result.ok else f"goal {result.code.name}: {result.message}"
    except Exception as exc:
        out["exception"] = f"{type(exc).__name__}: {exc}"
    finally:
        out["error"] = reflex_text(arm, c)
        out["hw_anomalous_ticks"] = c.timing()["hardware"]["anomalous_ticks"]
        c.stop()
        arm.close()
    dump_result(args.result, out)


def work_stall_sync(args: argparse.Namespace) -> None:
    """The synchronous baseline (b) in a Python thread, under the same stalls."""
    import pylibfranka as plf

    from jtac_py import _native
    from jtac_py import config as jtac_config

    out: dict[str, Any] = {"fifo": current_policy(), "recovery": recover(args.ip, args.variant)}
    hog_data = gil_hog_list(args.hog_n)
    values = jtac_config.resolve(
        robot="fr3", ft_sensor_name="", update_rate=1000, default_path_tolerance=0.2,
        default_goal_time_tolerance=1.0,
    )  # fmt: skip
    core = jtac_config.make_controller(values)
    robot = plf.Robot(args.ip, plf.RealtimeConfig.kIgnore)
    out["libfranka_set"] = restore_policy(args.variant)  # the loop thread below inherits this
    control = robot.start_joint_position_control(plf.ControllerMode.JointImpedance)
    writes: list[float] = []
    robot_ms: list[int] = []
    success: list[float] = []
    stop = threading.Event()
    failure: list[str] = []
    started = threading.Event()

    def loop() -> None:
        try:
            state, _ = control.readOnce()
            core.activate()
            t_prev = state.time.to_sec()
            core.update(t_prev, 0.001, np.asarray(state.q), np.asarray(state.dq))
            goal = there_and_back(np.asarray(state.q_d), goal_leg_s(args, stall=True)).to_goal(
                core.joint_names
            )
            core.submit_goal(_native.JtacGoal(goal), t_prev)
            command = plf.JointPositions(list(state.q_d))
            control.writeOnce(command)
            started.set()
            while not stop.is_set():
                state, _ = control.readOnce()
                t = state.time.to_sec()
                o = core.update(t, t - t_prev, np.asarray(state.q), np.asarray(state.dq))
                t_prev = t
                control.writeOnce(plf.JointPositions(o.command_position_rad.tolist()))
                writes.append(time.monotonic())
                robot_ms.append(round(t * 1000.0))
                success.append(state.control_command_success_rate)
            state, _ = control.readOnce()
            final = plf.JointPositions(list(state.q_d))
            final.motion_finished = True
            control.writeOnce(final)
        except Exception as exc:  # a reflex ends the loop; the phases still run and report it
            failure.append(f"{type(exc).__name__}: {exc}")
        finally:
            started.set()

    thread = threading.Thread(target=loop, name="sync-baseline")
    thread.start()
    started.wait(5.0)
    time.sleep(0.2)

    def end(t0: float, t1: float) -> dict[str, Any]:
        n = len(writes)  # the loop thread appends; read a consistent prefix
        stamps = np.asarray(writes[:n])
        gap = max_gap(stamps, t0, t1)
        phase = cycle_space(stamps, np.asarray(robot_ms[:n]), np.asarray(success[:n]), t0, t1)
        if failure and (len(stamps) == 0 or stamps[-1] < t0):  # ended before this phase
            return {"gap_ms": float("nan"), "aborted": f"before this phase: {failure[0]}"}
        if failure and stamps[-1] < t1:  # ended in this phase: the gap lasts at least until its end
            gap = max(gap if np.isfinite(gap) else 0.0, t1 - stamps[-1])
            return {"gap_ms": gap * 1e3, "aborted": failure[0], **phase}
        return {"gap_ms": gap * 1e3, **phase}

    try:
        out["phases"] = _stall_phases(
            args, hog_data, time.monotonic, {"begin": lambda: None, "end": end, "block": block_event_loop}
        )
    finally:
        stop.set()
        thread.join(10.0)
        control = robot = None  # libfranka disconnects with its Robot
        gc.collect()
    out["error"] = failure[0] if failure else ""
    dump_result(args.result, out)


def work_stall_aiofranka(args: argparse.Namespace) -> None:
    """aiofranka 0.9.0's native loop (runs in .venv-aiofranka): holds the arm in its impedance mode
    (the default after start()) under the three stalls; the event loop blocked is aiofranka's own."""
    import aiofranka

    out: dict[str, Any] = {
        "fifo": current_policy(),
        "recovery": recover(args.ip, args.variant),
        "aiofranka": aiofranka.__version__,
    }
    hog_data = gil_hog_list(args.hog_n)
    robot = aiofranka.Robot(args.ip, read_tool=False)  # no Desk on franka-sim
    out["libfranka_set"] = restore_policy(args.variant)  # its event loop thread inherits this
    controller = aiofranka.Controller(robot)
    if args.variant == "normal":
        controller.realtime_priority = 0
    fields = ["cycle", "time", "wall_time", "busy", "control_command_success_rate"]
    recording = None
    try:
        controller.start()
        out["threads"] = fifo_threads()
        recording = controller.record(fields)
        time.sleep(0.2)

        def block(seconds: float) -> float:
            async def blocking() -> float:
                t0 = time.perf_counter()
                time.sleep(seconds)  # on aiofranka's event loop, which runs its watcher
                return time.perf_counter() - t0

            return asyncio.run_coroutine_threadsafe(blocking(), controller._events).result(10.0)

        phases = _stall_phases(
            args, hog_data, time.time,
            {"begin": lambda: controller.loop_stats(reset=True), "end": lambda t0, t1: {"t0": t0, "t1": t1},
             "block": block},
        )  # fmt: skip
        stats = controller.loop_stats()
        recording.stop()
        rows = recording.data()
        command_s = np.asarray(rows["wall_time"], float) + np.asarray(rows["busy"], float)
        robot_ms = np.round(np.asarray(rows["time"], float) * 1000.0)
        success = np.asarray(rows["control_command_success_rate"], float)
        for phase in phases.values():
            t0, t1 = phase.pop("t0"), phase.pop("t1")
            phase["gap_ms"] = max_gap(command_s, t0, t1) * 1e3
            phase.update(cycle_space(command_s, robot_ms, success, t0, t1))
        deltas = np.diff(robot_ms)
        out.update(
            rows=len(command_s),
            dropped=int(recording.dropped),
            unserved_ticks=int(np.clip(deltas - 1, 0, None).sum()),
            ticks=int(robot_ms[-1] - robot_ms[0]) if len(robot_ms) else 0,
            success_min=float(np.nanmin(rows["control_command_success_rate"])),
            busy_median_us=float(np.median(rows["busy"]) * 1e6),
            busy_max_us=float(np.max(rows["busy"]) * 1e6),
            loop_stats_max_ms=float(stats.get("max", float("nan"))) * 1e3,
        )
        out["phases"] = phases
    except Exception as exc:
        out["exception"] = f"{type(exc).__name__}: {exc}"
    finally:
        out["error"] = controller.error or ""
        try:
            controller.stop()
        finally:
            robot.close()
    dump_result(args.result, out)
