"""Network faults between the robot and its client: a bare pylibfranka loop against jtac, on franka-sim.

franka-sim 1.1.7 (test/franka/sim_server.py, enforcement ON: 20 lost cycles in a row abort with
communication_constraints_violation, discontinuities with a reflex) runs with the harness's seeded
fault injector on its UDP link and its robot-side probe, a fresh server for every run (the timed
faults count from the run's first command; the probe holds that run alone). Cases:

    0  no fault (the reference)
    a  every datagram delayed 0.3 ms ± 0.2 ms (uniform), both ways, order kept
    b  1 % random loss, each way
    c  5 consecutive states lost once a second
    d  one 30 ms outage (nothing either way), 2 s after the first command
    e  the link gone for good 2 s after the first command (repaired once the client has given up, so
       that recovery can be measured)

Clients, each in a process of its own (a reflex or a hang stays there):

    bare    a pylibfranka loop, joint position control along the same quintic as jtac's goal, timed by
            libfranka's Duration (the sum of the robot's periods) as libfranka's example loops are
    goal    jtac: FrankaArm(ip, use_estimated_wrench=False, late_commands="applied") +
            Controller(arm, update_rate=1000) following Trajectory.quintic(q0, q0 + Δ, 4 s)
    stream  jtac with the same quintic sampled at 125 Hz on the host clock into Controller.stream()
    chunks  jtac following a policy of the same quintic: every 100 ms an observation, 50–150 ms later
            a chunk of 16 points 20 ms apart from it on, sent with its observation time
            (Stream.send_chunk(observed_at_s=...)); the limiter's activations show whether the command
            arrived smooth

Per run: franka-sim's abort reason (the probe's motion_end), the client's outcome (goal result or
libfranka's exception), the peak tracking error |reference − measured q| (bare: the quintic at the robot
time; goal and stream: the controller's q_ref), the cycles the robot counted lost (probe, the
definition of sim_server.commands_lost) with the longest run of them, Move accepted → first command,
jtac's counters (Controller.timing()), and after an error: when the client knew (for (e): after the
link died, against libfranka's 1 s UDP timeout + 50 ms), then recovery on the same connection
(automatic_error_recovery() and a new motion / Controller) and, where that fails, on a new one.

Limiter: `--limiter ruckig` runs jtac's clients with the hardware thread's RuckigLimiter instead of its
MotionLimiter (franka_hw/README.md, "MotionLimiter or Ruckig"); the limiter activations of every run are
in the raw results and printed per run.

Scheduling: franka-sim at SCHED_FIFO 50 (as the tests), each client process under `chrt -f 80` (jtac's
threads at their default FIFO 80 / 70), where allowed; libfranka's Robot() raises the connecting thread
to FIFO 99 and every worker puts it back. A benchmark, not a test: exit code 0 always.

    .venv/bin/python bench/bench_franka_faults.py [--runs 2] [--cases 0,a,b,c,d,e]
        [--clients bare,goal,stream] [--seed 1] [--limiter motion|ruckig] [--write-readme]

Raw results (one JSON per run, the probe's JSON lines, logs) in build/bench/franka_faults/.
"""

from __future__ import annotations

import argparse
import datetime
import faulthandler
import gc
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "test" / "franka"
sys.path.insert(0, str(HARNESS))
from sim_server import commands_lost, move_to_first_command_ms, read_probe  # noqa: E402

SIM_PYTHON = Path(os.environ.get("JTAC_VENV_SIM", ROOT / ".venv-sim")) / "bin" / "python"
SIM_SERVER = HARNESS / "sim_server.py"
SIM_MODEL = HARNESS / "fr3_nomesh.xml"
OUT_DIR = ROOT / "build" / "bench" / "franka_faults"
README = ROOT / "bench" / "README.md"
README_SECTION = "## Network faults: a bare libfranka loop against jtac (bench_franka_faults.py)"
README_BEGIN = "<!-- bench_franka_faults.py --write-readme: from here -->"
README_END = "<!-- bench_franka_faults.py --write-readme: to here -->"
FCI_PORT = 1337
READY_TIMEOUT_S = 30.0
SERVER_FIFO = 50
CLIENT_FIFO = 80
WORKER_TIMEOUT_S = 60.0

CASES = {
    "0": ("no fault", ""),
    "a": ("delay 0.3 ± 0.2 ms each way", "delay=0.3ms±0.2ms"),
    "b": ("1 % loss each way", "loss=1%"),
    "c": ("5 states lost once a second", "burst=5states@1s"),
    "d": ("one 30 ms outage at 2 s", "outage=30ms@2s"),
    "e": ("link dead from 2 s on", "dead@2s"),
}
CLIENTS = {
    "bare": "bare pylibfranka loop",
    "goal": "jtac, goal at 1 kHz",
    "stream": "jtac, 125 Hz stream",
    "chunks": "jtac, 10 Hz action chunks",
}
DELTA_RAD = np.array([0.2, -0.15, 0.15, 0.2, -0.2, 0.15, 0.3])  # as test/franka/test_jtac_on_franka_sim.py
MOVE_S = 4.0  # the quintic's duration: the faults at 2 s hit it at its peak velocity
HOLD_S = 0.5  # at rest at the end before the motion finishes
RECOVERY_MOVE_S = 1.0  # the motion that proves a recovery
UDP_TIMEOUT_S = 1.0  # libfranka's UDP receive timeout (Robot's default)
RESULT_MARGIN_S = 0.05  # a dead link must end every pending goal within the timeout + this
STREAM_HZ = 125
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


def work_stream(args: argparse.Namespace) -> dict[str, Any]:
    def feed(c: Any, arm: Any, stream: Any, q0: np.ndarray, out: dict[str, Any]) -> None:
        t0 = time.monotonic()
        next_send = t0
        while (t := time.monotonic() - t0) < MOVE_S + HOLD_S and not _failed(c, arm, out):
            stream.send(quintic(q0, t))
            next_send += 1.0 / STREAM_HZ
            time.sleep(max(0.0, next_send - time.monotonic()))
        out.update(targets_taken=stream.targets_taken, sent=f"{stream.targets_taken} targets")

    return _streamed(args, feed)


def work_chunks(args: argparse.Namespace) -> dict[str, Any]:
    latency = np.random.default_rng(args.seed)
    offsets_s = CHUNK_SPACING_S * np.arange(CHUNK_POINTS)

    def feed(c: Any, arm: Any, stream: Any, q0: np.ndarray, out: dict[str, Any]) -> None:
        def wait_until(t_s: float) -> None:
            while stream.now() < t_s and not _failed(c, arm, out):
                time.sleep(0.0005)

        start_s = observe_s = stream.now()
        while stream.now() - start_s < MOVE_S + HOLD_S and not _failed(c, arm, out):
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

    return _streamed(args, feed)


WORKERS = {"bare": work_bare, "goal": work_goal, "stream": work_stream, "chunks": work_chunks}


# ================================================================================ the parent


class Server:
    """A fresh franka-sim with the probe and the run's faults, on a loopback address of this run."""

    def __init__(self, log_path: Path, probe_path: Path, faults: str, fifo: bool) -> None:
        self.log_path, self.probe_path, self.faults, self.fifo = log_path, probe_path, faults, fifo
        self.process: subprocess.Popen | None = None
        self.ip = ""

    def start(self) -> None:
        env = dict(os.environ, FR3_MJCF=str(SIM_MODEL), PYTHONUNBUFFERED="1")
        for name in ("FRANKA_SIM_ENFORCE_COMM_CONSTRAINTS", "FRANKA_SIM_ENFORCE_MOTION_LIMITS", "PYTHONPATH"):
            env.pop(name, None)
        pid = os.getpid()
        # 127.<72+16k>.<pid-derived>: apart from the tests' 127.<10..>, bench_franka_sim's 127.<40..>.
        for attempt in range(8):
            n = pid + attempt * 7919
            ip = f"127.{72 + 16 * attempt}.{(n // 254) % 256}.{n % 254 + 1}"
            if not _port_free(ip):
                continue
            cmd = [str(SIM_PYTHON), str(SIM_SERVER), "--host", ip, "--parent-pid", str(pid)]
            cmd += ["--probe", str(self.probe_path)] + (["--faults", self.faults] if self.faults else [])
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                    start_new_session=True, preexec_fn=_server_fifo if self.fifo else None,
                )  # fmt: skip
            t0 = time.monotonic()
            while time.monotonic() - t0 < READY_TIMEOUT_S:
                text = self.log_path.read_text(errors="replace")
                if f"READY {ip}:" in text:
                    self.ip = ip
                    return
                if self.process.poll() is not None:
                    break
                time.sleep(0.02)
            self.stop()
        raise RuntimeError(f"franka-sim did not start; see {self.log_path}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _server_fifo() -> None:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(SERVER_FIFO))


def _port_free(ip: str) -> bool:
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind((ip, FCI_PORT))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _fifo_allowed() -> bool:
    try:
        done = subprocess.run(["chrt", "-f", str(CLIENT_FIFO), "true"], capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


def _robot_side(probe_path: Path) -> dict[str, Any]:
    """What the robot saw, from the probe: per motion its start, lost cycles and end; the faults."""
    events = read_probe(probe_path)
    starts = move_to_first_command_ms(events)
    cycles = commands_lost(events)
    faults = {e.fields["kind"]: e for e in events if e.event == "fault"}
    dropped = sum(1 for e in events if e.event == "dropped")
    delays = [e.t_ns - e.fields["wire_t_ns"] for e in events if e.event == "delayed"]
    return {
        "motions": [
            {
                "move_to_first_command_ms": s.ms,
                "states_between": s.states_between,
                "cycles": m.cycles,
                "lost": m.lost,
                "lost_franka_sim": m.lost_franka_sim,
                "max_consecutive_lost": m.max_consecutive_lost,
                "end": m.end,
                "errors": list(m.errors),
            }
            for s, m in zip(starts, cycles, strict=True)
        ],
        "dead_t_ns": faults["dead"].t_ns if "dead" in faults else None,
        "dropped": dropped,
        "delay_p50_ms": float(np.median(delays)) / 1e6 if delays else None,
    }


def run_once(
    case: str, client: str, run: int, seed: int, raw: Path, fifo: bool, limiter: str = "motion"
) -> dict[str, Any]:
    name = f"{case}_{client}_{run + 1}"
    spec = CASES[case][1]
    faults = f"{spec} seed={seed}" if spec else ""
    probe = raw / f"{name}.jsonl"
    log = raw / f"{name}_franka_sim.log"
    result = raw / f"{name}.json"
    for path in (probe, log, result):
        path.unlink(missing_ok=True)
    server = Server(log, probe, faults, fifo)
    out: dict[str, Any] = {"case": case, "client": client, "run": run + 1, "faults": faults}
    t0 = time.monotonic()
    try:
        server.start()
        prefix = ["chrt", "-f", str(CLIENT_FIFO)] if fifo else []
        cmd = [
            *prefix, sys.executable, str(Path(__file__).resolve()), "--worker", client, "--ip", server.ip,
            "--case", case, "--server-pid", str(server.process.pid), "--result", str(result),
            "--limiter", limiter, "--seed", str(seed),
        ]  # fmt: skip
        env = dict(os.environ, JTAC_BENCH_FIFO="1" if fifo else "0")
        with open(raw / f"{name}_worker.log", "wb") as f:
            try:
                done = subprocess.run(
                    cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=env, timeout=WORKER_TIMEOUT_S
                )
                rc: Any = done.returncode
            except subprocess.TimeoutExpired:
                rc = f"timeout ({WORKER_TIMEOUT_S:.0f} s)"
        time.sleep(0.05)  # the probe's writer flushes every 10 ms
    finally:
        server.stop()
    out["wall_s"] = time.monotonic() - t0
    if result.exists():
        out.update(json.loads(result.read_text()))
    else:
        tail = (raw / f"{name}_worker.log").read_text(errors="replace").strip().splitlines()[-3:]
        out["not_measured"] = f"worker exited with {rc}: {' | '.join(tail)[-300:]}"
    out["robot"] = _robot_side(probe) if probe.exists() else {"motions": []}
    dead = out["robot"].get("dead_t_ns")
    if dead is not None and out.get("error_t_ns"):
        out["knew_after_dead_ms"] = (out["error_t_ns"] - dead) / 1e6
    return out


# ================================================================================ the table


def _cell_runs(values: list[str]) -> str:
    """'x' when every run says x, else the runs' values in order, 'x; y'."""
    return values[0] if len(set(values)) == 1 else "; ".join(values)


def _short(text: str | None) -> str:
    """The gist of a client's message: the reflexes it names, libfranka's network error, or its start."""
    if not text:
        return "-"
    reflexes = [
        name for group in re.findall(r"\[([^\]]*)\]", text) for name in re.findall(r'"([a-z_]+)"', group)
    ]
    if reflexes:
        return ", ".join(dict.fromkeys(reflexes))
    network = re.search(r"UDP receive: Timeout|TCP [a-z ]+: [A-Za-z/ ]+", text)
    return network.group(0) if network else text[:60]


def _or_dash(value: Any) -> str:
    return "-" if value is None else str(value)


def _row(case: str, client: str, runs: list[dict[str, Any]]) -> list[str]:
    measured = [r for r in runs if "not_measured" not in r]
    if not measured:
        return [CASES[case][0], CLIENTS[client], "not measured: " + runs[0]["not_measured"][:80]] + ["-"] * 8
    main = [r["robot"]["motions"][0] if r["robot"]["motions"] else {} for r in measured]
    reflex = [", ".join(m.get("errors") or []) or "none" for m in main]
    outcome = [
        "ok"
        if not r.get("error") and (client != "goal" or r.get("goal_ok"))
        else _short(r.get("outcome") or r.get("error"))
        for r in measured
    ]
    peak = [r.get("peak_tracking_mrad") for r in measured]
    lost = [f"{m.get('lost', '-')} ({m.get('max_consecutive_lost', '-')})" for m in main]
    first = [m.get("move_to_first_command_ms") for m in main]
    anomalous = gap = "-"
    if client != "bare":
        t = [r.get("timing") or {} for r in measured]
        anomalous = " / ".join(
            f"{x.get('anomalous_ticks', '-')}, {_or_dash(x.get('echo_resyncs'))}" for x in t
        )
        gap = " / ".join(
            f"{x['max_write_interval_ms']:.1f}" if "max_write_interval_ms" in x else "-" for x in t
        )
    knew = [r.get("knew_after_dead_ms") for r in measured]
    knew_cell = "-"
    if any(k is not None for k in knew):
        knew_cell = " / ".join("-" if k is None else f"{k:.0f}" for k in knew)
    recovery = []
    for r in measured:
        if "recovery_same" not in r:
            recovery.append("-")
            continue
        same = r["recovery_same"]
        text = f"same: ok {same['s']:.1f} s" if same["ok"] else f"same: {_short(same['error'])}"
        if "recovery_new" in r:
            new = r["recovery_new"]
            text += f", new: ok {new['s']:.1f} s" if new["ok"] else f", new: {_short(new['error'])}"
        recovery.append(text)
    return [
        CASES[case][0],
        CLIENTS[client],
        _cell_runs(reflex),
        _cell_runs(outcome),
        " / ".join("-" if p is None else f"{p:.1f}" for p in peak),
        " / ".join(lost),
        " / ".join("-" if f is None else f"{f:.1f}" for f in first),
        anomalous,
        gap,
        knew_cell,
        _cell_runs(recovery),
    ]


HEADER = [
    "case",
    "client",
    "reflex (franka-sim)",
    "client's outcome",
    "peak tracking error [mrad]",
    "cycles lost, robot (longest run)",
    "Move → 1st command [ms]",
    "jtac: anomalous ticks, echo resyncs",
    "jtac: largest command gap [ms]",
    "error known after link died [ms]",
    "recovery",
]


def table(results: dict[tuple[str, str], list[dict[str, Any]]]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    for (case, client), runs in results.items():
        lines.append("| " + " | ".join(_row(case, client, runs)) + " |")
    return "\n".join(lines)


def verdicts(results: dict[tuple[str, str], list[dict[str, Any]]]) -> list[str]:
    """The spec's expectations, checked: no reflex for jtac where the bare loop trips none; a dead link
    ends every pending goal within libfranka's timeout + 50 ms; recovery succeeds."""
    lines = []
    for case in dict.fromkeys(c for c, _ in results):
        bare = results.get((case, "bare"), [])
        bare_reflex = any(r["robot"]["motions"] and r["robot"]["motions"][0].get("errors") for r in bare)
        for client in ("goal", "stream", "chunks"):
            runs = [r for r in results.get((case, client), []) if "not_measured" not in r]
            if not runs:
                continue
            reflexes = [r for r in runs if r["robot"]["motions"] and r["robot"]["motions"][0].get("errors")]
            if not bare_reflex:
                verdict = (
                    "holds" if not reflexes else f"FAILS ({len(reflexes)} of {len(runs)} runs with a reflex)"
                )
                lines.append(
                    f"- ({case}) {CLIENTS[client]}: no reflex where the bare loop trips none: {verdict}"
                )
            if case == "e":
                late = [r.get("knew_after_dead_ms") for r in runs]
                limit_ms = (UDP_TIMEOUT_S + RESULT_MARGIN_S) * 1e3
                ok = all(k is not None and k <= limit_ms for k in late)
                what = "the goal's result" if client == "goal" else "the hardware error"
                measured = ", ".join("-" if k is None else f"{k:.0f} ms" for k in late)
                lines.append(
                    f"- (e) {CLIENTS[client]}: {what} within {limit_ms:.0f} ms of the link dying: "
                    f"{'holds' if ok else 'FAILS'} ({measured})"
                )
            recovered = [r for r in runs if "recovery_same" in r]
            if recovered:
                same = sum(r["recovery_same"]["ok"] for r in recovered)
                new = sum(r.get("recovery_new", {}).get("ok", False) for r in recovered)
                lines.append(
                    f"- ({case}) {CLIENTS[client]}: automatic_error_recovery() + a new Controller on the "
                    f"same arm: {same} of {len(recovered)}; where not, a new FrankaArm + Controller: "
                    f"{new} of {len(recovered) - same}"
                )
    return lines


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            return next(
                (line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "?"
            )
    except OSError:
        return "?"


def _write_readme(text: str) -> None:
    """Replaces the measured part of the README's section (between its markers), keeping the prose."""
    content = README.read_text()
    begin, end = content.find(README_BEGIN), content.find(README_END)
    if begin < 0 or end < begin:
        content = f"{content.rstrip()}\n\n{README_SECTION}\n\n{README_BEGIN}\n{README_END}\n"
        begin, end = content.find(README_BEGIN), content.find(README_END)
    content = content[: begin + len(README_BEGIN)] + "\n" + text + content[end:]
    README.write_text(content)


# ================================================================================ main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=2, help="runs per case and client (default 2)")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated, of " + ",".join(CASES))
    p.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated, of " + ",".join(CLIENTS))
    p.add_argument("--seed", type=int, default=1, help="run k of a case uses seed + k - 1")
    p.add_argument("--normal", action="store_true", help="no SCHED_FIFO even where it is allowed")
    p.add_argument("--out", type=Path, default=OUT_DIR, help="raw results")
    p.add_argument("--write-readme", action="store_true", help="put the table into bench/README.md")
    p.add_argument(
        "--limiter",
        choices=("motion", "ruckig"),
        default="motion",
        help="jtac's hardware limiter (default motion)",
    )
    # worker options (the parent passes them)
    p.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    p.add_argument("--ip", help=argparse.SUPPRESS)
    p.add_argument("--case", help=argparse.SUPPRESS)
    p.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    p.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        faulthandler.dump_traceback_later(WORKER_TIMEOUT_S - 5, exit=True)  # libfranka can wait for ever
        out = WORKERS[args.worker](args)
        args.result.write_text(json.dumps(out, default=str))
        return 0
    if not SIM_PYTHON.exists():
        print(f"not measured: {SIM_PYTHON} is missing: run scripts/setup_franka_sim.sh")
        return 0
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    raw = args.out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    fifo = not args.normal and _fifo_allowed()
    print(
        f"bench_franka_faults: cases {','.join(cases)} x clients {','.join(clients)} x {args.runs} runs, "
        f"limiter {args.limiter}; "
        f"{'franka-sim SCHED_FIFO 50, clients chrt -f 80' if fifo else 'normal priority'}"
    )
    t_all = time.monotonic()
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for case in cases:
        for client in clients:
            runs = []
            for run in range(args.runs):
                r = run_once(case, client, run, args.seed + run, raw, fifo, args.limiter)
                runs.append(r)
                motions = r["robot"]["motions"]
                reflex = ", ".join(motions[0].get("errors") or []) if motions else "?"
                activations = (r.get("timing") or {}).get("limiter_activations", "-")
                print(
                    f"  ({case}) {client:6s} run {run + 1}: {r['wall_s']:4.1f} s, reflex {reflex or 'none'}, "
                    f"{_short(r.get('outcome') or r.get('not_measured'))}, limiter activations {activations}"
                )
            results[(case, client)] = runs
    (args.out / "summary.json").write_text(
        json.dumps({f"{c}_{k}": v for (c, k), v in results.items()}, indent=1, default=str)
    )
    uname = " ".join(platform.uname()[i] for i in (0, 2, 4))
    when = datetime.date.today().isoformat()
    cpus = f"{os.cpu_count()} × {_cpu_model()}"
    body = table(results)
    checks = "\n".join(verdicts(results))
    text = (
        f"Measured {when} on {cpus} cores (`uname -srm`: {uname}), "
        f"{'franka-sim at SCHED_FIFO 50, clients under chrt -f 80' if fifo else 'normal priority'}, "
        f"{args.runs} runs per cell (seeds {args.seed}..{args.seed + args.runs - 1}; cells list the runs in "
        f"order), {time.monotonic() - t_all:.0f} s in all. "
        "`.venv/bin/python bench/bench_franka_faults.py` (see its docstring) measures it again.\n\n"
        f"{body}\n\nThe spec's expectations, checked:\n\n{checks}\n"
    )
    print()
    print(text)
    if args.write_readme:
        _write_readme(text)
        print(f"written to {README.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
