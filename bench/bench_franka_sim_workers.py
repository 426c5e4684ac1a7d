"""bench_franka_sim.py's workers for Table 1 and Figure 6: (a) the bare pylibfranka loop, (b) the
synchronous JTAC baseline, (c) jtac's asynchronous interface, and the 125 Hz stream.

Each runs in a client process of its own (bench_franka_sim.py --worker PART); jtac and pylibfranka are
imported inside the functions.
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

import numpy as np
from bench_common import fifo_priorities
from bench_franka_sim_common import (
    DELTA_RAD,
    LATENCY_WINDOW,
    STREAM_AMPLITUDE_RAD,
    STREAM_HZ,
    STREAM_OMEGA_RAD_S,
    SUCCESS_WINDOW,
    WARMUP,
    current_policy,
    dump_result,
    recover,
    restore_policy,
)

# ================================================================================ workers: Table 1


def goal_leg_s(args: argparse.Namespace, stall: bool = False) -> float:
    """Duration of each half of the there-and-back goal [s]: the same for (b) and (c); it ends ~0.1 s
    before their windows do. For the stall runs it outlasts the phases (a GIL hold can take 3x its
    nominal time on this VM)."""
    if stall:
        return (args.idle_s + args.block_s + 3 * args.gil_s + 1.5) / 2
    return (args.seconds - 0.3) / 2


def there_and_back(q0: np.ndarray, leg_s: float) -> Any:
    from jtac_py.controller import Trajectory

    there = Trajectory.quintic(q0, q0 + DELTA_RAD, leg_s)
    back = Trajectory.quintic(q0 + DELTA_RAD, q0, leg_s)
    return Trajectory(
        times_s=np.concatenate([there.times_s, np.asarray(back.times_s) + leg_s]),
        positions_rad=np.vstack([there.positions_rad, back.positions_rad]),
        velocities_rad_s=np.vstack([there.velocities_rad_s, back.velocities_rad_s]),
        accelerations_rad_s2=np.vstack([there.accelerations_rad_s2, back.accelerations_rad_s2]),
    )


def _summarise_python_loop(
    read_ns: np.ndarray, write_ns: np.ndarray, robot_ms: np.ndarray, success: np.ndarray
) -> dict[str, Any]:
    dext_us = (write_ns - read_ns) * 1e-3
    last = dext_us[-LATENCY_WINDOW:]
    deltas = np.diff(robot_ms)
    ticks = int(robot_ms[-1] - robot_ms[0])
    unserved = int(np.clip(deltas - 1, 0, None).sum())
    rates = success[::SUCCESS_WINDOW]  # non-overlapping windows of 100 cycles
    r2r_ms = np.diff(read_ns) * 1e-6
    return {
        "median": float(np.median(last)),
        "p99": float(np.percentile(last, 99)),
        "max": float(dext_us.max()),
        "unserved": 100.0 * unserved / max(ticks, 1),
        "unserved_ticks": unserved,
        "ticks": ticks,
        "unserved_rate": 100.0 * (1.0 - float(np.mean(rates))),
        "success_min": float(success.min()),
        "r2r_median_ms": float(np.median(r2r_ms)),
        "r2r_p99_ms": float(np.percentile(r2r_ms, 99)),
        "r2r_max_ms": float(r2r_ms.max()),
        "packets": len(read_ns),
    }


def work_python_loop(args: argparse.Namespace, with_controller: bool) -> None:
    """(a) the bare pylibfranka loop holding the position, or (b) the synchronous JTAC baseline.

    Everything that can be prepared is prepared before the motion starts (the goal, the core); the
    first WARMUP packets are not measured, as (c) starts measuring 0.2 s after its goal.
    """
    import pylibfranka as plf

    out: dict[str, Any] = {"fifo": current_policy(), "recovery": recover(args.ip, args.variant)}
    robot = plf.Robot(args.ip, plf.RealtimeConfig.kIgnore)
    out["libfranka_set"] = restore_policy(args.variant)
    core = goal = None
    if with_controller:
        from jtac_py import _native
        from jtac_py import config as jtac_config

        values = jtac_config.resolve(
            robot="fr3", ft_sensor_name="", update_rate=1000, default_path_tolerance=0.2,
            default_goal_time_tolerance=1.0,
        )  # fmt: skip
        core = jtac_config.make_controller(values)
        q_rest = np.asarray(robot.read_once().q)
        goal = _native.JtacGoal(there_and_back(q_rest, goal_leg_s(args)).to_goal(core.joint_names))
    n = int(args.seconds * 1000)
    read_ns = np.zeros(n, np.int64)
    write_ns = np.zeros(n, np.int64)
    robot_ms = np.zeros(n, np.int64)
    success = np.zeros(n)
    perf = time.perf_counter_ns
    control = robot.start_joint_position_control(plf.ControllerMode.JointImpedance)
    error = goal_result = ""
    k = 0
    try:
        state, _ = control.readOnce()
        command = plf.JointPositions(list(state.q_d))  # (a) holds the robot's desired position
        control.writeOnce(command)
        t_prev = state.time.to_sec()
        if core is not None:  # within the cycle's slack, before the next state
            core.activate()
            submitted = core.submit_goal(goal, t_prev)
            if submitted.code != _native.ResultCode.SUCCESSFUL:
                raise RuntimeError(f"goal refused: {submitted.code.name}: {submitted.message}")
        gc.disable()  # no collection mid-measurement (the loop allocates little)
        for i in range(-WARMUP, n):
            state, _ = control.readOnce()
            t_read = perf()
            if core is not None:
                t = state.time.to_sec()
                o = core.update(t, t - t_prev, np.asarray(state.q), np.asarray(state.dq))
                t_prev = t
                command = plf.JointPositions(o.command_position_rad.tolist())
            control.writeOnce(command)
            if i >= 0:
                write_ns[i] = perf()
                read_ns[i] = t_read
                robot_ms[i] = round(state.time.to_sec() * 1000.0)
                success[i] = state.control_command_success_rate
                k = i + 1
        gc.enable()
        if core is not None:
            for event in core.poll_events():
                if event.type == _native.EventType.GOAL_SUCCEEDED:
                    goal_result = "goal ok"
                elif event.type in (_native.EventType.GOAL_ABORTED, _native.EventType.GOAL_CANCELED):
                    goal_result = f"goal {event.code.name}: {event.message}"
            goal_result = goal_result or "goal not finished"
        state, _ = control.readOnce()
        final = plf.JointPositions(list(state.q_d))
        final.motion_finished = True
        control.writeOnce(final)
    except Exception as exc:  # a reflex (libfranka's ControlException) is a result
        gc.enable()
        error = f"{type(exc).__name__}: {exc}"
    finally:
        del control
        del robot
        gc.collect()
    if k > 10:
        out.update(_summarise_python_loop(read_ns[:k], write_ns[:k], robot_ms[:k], success[:k]))
    out["error"] = error
    out["goal"] = goal_result
    dump_result(args.result, out, {"r2r_ms": np.diff(read_ns[:k]) * 1e-6})


def jtac_controller(args: argparse.Namespace, **overrides: Any) -> tuple[Any, Any]:
    from jtac_py.controller import Controller
    from jtac_py.hardware import FrankaArm

    # franka-sim reports zero external wrench estimates: no sensor, a plain trajectory controller.
    arm = FrankaArm(args.ip, use_estimated_wrench=False, late_commands="applied")  # franka-sim's semantics
    restore_policy(args.variant)  # before start(): jtac's threads would inherit libfranka's FIFO 99
    params: dict[str, Any] = {"default_path_tolerance": 0.2, "default_goal_time_tolerance": 1.0}
    if args.variant == "normal":
        params["realtime_priority"] = 0
    params.update(overrides)
    return arm, Controller(arm, **params).start()


def reflex_text(arm: Any, controller: Any) -> str:
    if controller.hardware_error is not None:
        return controller.hardware_error
    if arm.device is not None and arm.device.has_error:
        return arm.device.last_error or "device error"
    return ""


def work_jtac(args: argparse.Namespace) -> None:
    """(c) jtac's asynchronous interface: Controller(FrankaArm(ip)) with the goal of (b) running."""
    out: dict[str, Any] = {"fifo": current_policy(), "recovery": recover(args.ip, args.variant)}
    arrays: dict[str, np.ndarray] = {}
    arm, c = jtac_controller(args)
    try:
        out["threads"] = fifo_threads()
        q0 = np.asarray(c.state.q_cmd)
        with c.record(["time", "tick", "interval_us", "cycle_duration_us"]) as rec:
            handle = c.follow(there_and_back(q0, goal_leg_s(args)), wait=False)
            time.sleep(0.2)
            c._interface.reset_peaks()
            t0 = c.timing()
            tick0 = c.state.tick
            rates = []
            t1, tick1 = t0, tick0
            end = time.monotonic() + args.seconds - 0.4
            while time.monotonic() < end:
                time.sleep(0.1)
                if reflex_text(arm, c):  # keep the figures of the last sample before it
                    out["reflex_after_s"] = args.seconds - 0.4 - (end - time.monotonic())
                    break
                rates.append(arm.device.command_success_rate)
                t1, tick1 = c.timing(), c.state.tick
        data = rec.data()
        result = handle.result(timeout=5.0)
        unserved = t1["loop"]["unserved_cycles"] - t0["loop"]["unserved_cycles"]
        ticks = int(tick1 - tick0)
        out.update(
            median=t1["dext"]["median_s"] * 1e6,
            p99=t1["dext"]["p99_s"] * 1e6,
            max=t1["hardware"]["max_latency_s"] * 1e6,
            dext_samples=t1["dext"]["samples"],
            unserved=100.0 * unserved / max(ticks, 1),
            unserved_ticks=int(unserved),
            ticks=ticks,
            unserved_rate=100.0 * (1.0 - float(np.mean(rates))) if rates else float("nan"),
            success_min=float(np.min(rates)) if rates else float("nan"),
            hw_max_write_interval_ms=t1["hardware"]["max_write_interval_s"] * 1e3,
            hw_largest_command_gap=t1["hardware"]["largest_command_gap"],
            hw_anomalous_ticks=c.timing()["hardware"]["anomalous_ticks"],
            hw_limiter_activations=t1["hardware"]["limiter_activations"],
            loop_overruns=t1["loop"]["overruns"],
            goal="goal ok" if result.ok else f"goal {result.code.name}: {result.message}",
            dropped_records=rec.dropped,
        )
        interval_ms = np.asarray(data["interval_us"], float)[1:] * 1e-3
        arrays = {"r2r_ms": interval_ms, "tick_gaps": np.diff(np.asarray(data["tick"], float))}
        out.update(
            r2r_median_ms=float(np.median(interval_ms)),
            r2r_p99_ms=float(np.percentile(interval_ms, 99)),
            r2r_max_ms=float(interval_ms.max()),
        )
    except Exception as exc:
        out["exception"] = f"{type(exc).__name__}: {exc}"
    finally:
        out["error"] = reflex_text(arm, c)
        c.stop()
        arm.close()
    dump_result(args.result, out, arrays)


def fifo_threads() -> str:
    """The SCHED_FIFO priorities of this process's threads (Linux), for the record."""
    fifo = fifo_priorities()
    if fifo is None:
        return "unknown"
    if not fifo:
        return "none SCHED_FIFO"
    return f"{len(fifo)} SCHED_FIFO threads ({sorted(set(fifo), reverse=True)})"


# ================================================================================ worker: Figure 6


def work_stream(args: argparse.Namespace) -> None:
    """A 125 Hz source through Controller.stream(); a recording of the 1 kHz command at the controller.

    The source samples its motion on the host clock (a policy's clock), as a real one would; each
    sample's time on the robot clock comes from a straight-line fit of the robot time against the
    host time at the sends (franka-sim runs at 0.9-1.0x real time, so the two clocks drift apart).
    """
    out: dict[str, Any] = {"fifo": current_policy(), "recovery": recover(args.ip, args.variant)}
    arrays: dict[str, np.ndarray] = {}
    arm, c = jtac_controller(args)
    try:
        q0 = np.asarray(c.state.q_cmd)
        host, robot_t, sample_q = [], [], []
        fields = ["time", "q", "dq", "q_cmd", "dq_cmd"]
        t0 = c.timing()["hardware"]
        with c.record(fields) as rec, c.stream() as stream:
            period = 1.0 / STREAM_HZ
            next_send = time.monotonic()
            start = next_send + 0.1  # the source starts at rest, 0.1 s after the stream
            deadline = start + args.seconds
            while next_send < deadline and not reflex_text(arm, c):
                s = max(0.0, next_send - start)
                target = q0.copy()
                target[0] += STREAM_AMPLITUDE_RAD * (1.0 - np.cos(STREAM_OMEGA_RAD_S * s))
                stream.send(target)
                host.append(time.monotonic())
                robot_t.append(c.controller_time())
                sample_q.append(target[0])
                next_send += period
                time.sleep(max(0.0, next_send - time.monotonic()))
            out["targets_taken"] = stream.targets_taken
            time.sleep(0.1)
        t1 = c.timing()["hardware"]
        data = rec.data()
        rate, offset = np.polyfit(np.asarray(host), np.asarray(robot_t), 1)
        arrays = {
            "time": np.asarray(data["time"]),
            "q": np.asarray(data["q"])[:, 0],
            "dq": np.asarray(data["dq"])[:, 0],
            "q_cmd": np.asarray(data["q_cmd"])[:, 0],
            "dq_cmd": np.asarray(data["dq_cmd"])[:, 0],
            "sample_t": rate * np.asarray(host) + offset,
            "sample_q": np.asarray(sample_q),
            "t_start": np.asarray([rate * start + offset]),
            "rate": np.asarray([rate]),
            "q0": np.asarray([q0[0]]),
        }
        out.update(
            robot_clock_rate=float(rate),
            hw_limiter_activations=t1["limiter_activations"] - t0["limiter_activations"],
            hw_packets=t1["packets"] - t0["packets"],
            hw_anomalous_ticks=t1["anomalous_ticks"] - t0["anomalous_ticks"],
            samples=len(host),
        )
    except Exception as exc:
        out["exception"] = f"{type(exc).__name__}: {exc}"
    finally:
        out["error"] = reflex_text(arm, c)
        c.stop()
        arm.close()
    dump_result(args.result, out, arrays)
