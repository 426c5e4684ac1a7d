"""bench_gripper.py's clients, each run in a process of its own (bench_gripper.py --worker NAME):

    plf   a plain pylibfranka.Gripper used as its documentation shows: blocking move/grasp/stop and
          read_once, a replacement from a second thread
    jtac  jtac's Gripper (FrankaArm(ip, hand=True).gripper): every call returns at once with a handle
    arm   jtac's Controller on the same FrankaArm: 10 s joint goals with and without gripper traffic

Every client stamps with time.monotonic_ns(), the clock franka-sim's probe stamps with, and writes
its stamps as JSON; bench_gripper.py matches them with the probe's events. pylibfranka and jtac are
imported inside the functions.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

OPEN_M, HALF_M = 0.08, 0.04  # the stroke's ends of the timed moves [m]: open, and half closed
SPEED_M_S = 0.1  # the Franka Hand's top width rate (franka-sim's physics hand ignores it)
# The virtual object franka-sim holds between the fingers (bench_gripper.py starts it so): a grasp at
# this width succeeds, and it lies below HALF_M so that the timed moves are free.
OBJECT_M = 0.03
GRASP = {"epsilon_inner": 0.005, "epsilon_outer": 0.005, "force": 20.0}
# (b): the replacement comes this long after the move it replaces was issued [s]; franka-sim's fingers
# take ~2 ms to start and ~95 ms to close from OPEN_M to HALF_M, so it lands mid-way.
REPLACE_AFTER_S = 0.03
PAUSE_S = (0.04, 0.08)  # a seeded pause before each timed command: its phase to the 60 Hz broadcast
READ_PAUSE_S = (0.02, 0.2)  # (c): the pauses between two state reads
TICK_S = 0.001  # the ticker thread's sleep: a thread that wants to run every ms
IDLE_S = 1.5  # the ticker alone before the first timed command: its baseline
RESULT_TIMEOUT_S = 10.0
# (e): the arm's goal and the gripper's traffic beside it.
GOAL_S = 10.0
DELTA_RAD = np.array([0.2, -0.15, 0.15, 0.2, -0.2, 0.15, 0.3])  # as the other franka-sim benchmarks
TRAFFIC_PERIOD_S = 0.5  # grasp, then release, each 0.5 s after the last


def now_ns() -> int:
    return time.monotonic_ns()


class Ticker:
    """A thread that sleeps TICK_S and stamps each wake-up: a gap well over TICK_S is the time it was
    kept from running (the GIL held, or the CPU taken)."""

    def __init__(self) -> None:
        self.stamps_ns: list[int] = []
        self._running = True
        self._thread = threading.Thread(target=self._run, name="ticker", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        stamps = self.stamps_ns
        while self._running:
            stamps.append(time.monotonic_ns())
            time.sleep(TICK_S)

    def stop(self) -> list[int]:
        self._running = False
        self._thread.join()
        return self.stamps_ns


def normal_priority() -> None:
    """libfranka's Robot() sets the constructing thread to SCHED_FIFO 99 where allowed: back to normal,
    so that the ticker and jtac's Python threads run as an application's would."""
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


class Client:
    """The timed calls of one gripper client; subclasses say how each command is issued and awaited."""

    name = ""

    def __init__(self, args: argparse.Namespace) -> None:
        self.rng = np.random.default_rng(args.seed)
        self.repeats = args.repeats
        self.read_s = args.read_s

    # -- what differs: issue (returns when the caller gets control back) and await
    def issue(self, command: str, width_m: float) -> Any:
        raise NotImplementedError

    def wait(self, handle: Any) -> dict[str, Any]:
        raise NotImplementedError

    def read(self) -> dict[str, Any]:
        raise NotImplementedError

    def replace_mid_way(self, out: dict[str, Any]) -> None:
        raise NotImplementedError

    # -- the same for both
    def pause(self, bounds: tuple[float, float] = PAUSE_S) -> None:
        time.sleep(float(self.rng.uniform(*bounds)))

    def timed(self, command: str, width_m: float) -> dict[str, Any]:
        """One command: issued, returned to the caller, ended (stamps [ns]) and its outcome."""
        self.pause()
        t_issue = now_ns()
        handle = self.issue(command, width_m)
        t_return = now_ns()
        ended = self.wait(handle)
        return {
            "command": command,
            "width_m": width_m,
            "t_issue_ns": t_issue,
            "t_return_ns": t_return,
            **ended,
        }

    def run(self) -> dict[str, Any]:
        self.wait(self.issue("move", OPEN_M))
        ticker = Ticker()
        out: dict[str, Any] = {"client": self.name, "commands": [], "replacements": [], "reads": []}
        t0 = now_ns()
        time.sleep(IDLE_S)  # the ticker alone: its baseline gaps
        out["idle_ns"] = (t0, now_ns())
        for _ in range(self.repeats):
            out["commands"].append(self.timed("move", HALF_M))
            out["commands"].append(self.timed("move", OPEN_M))
        for _ in range(self.repeats):
            out["commands"].append(self.timed("grasp", OBJECT_M))
            out["commands"].append(self.timed("move", OPEN_M))
        for _ in range(self.repeats):
            self.pause()
            replacement: dict[str, Any] = {}
            self.replace_mid_way(replacement)
            out["replacements"].append(replacement)
            self.wait(self.issue("move", OPEN_M))
        t_end = now_ns() + int(self.read_s * 1e9)
        while now_ns() < t_end:
            self.pause(READ_PAUSE_S)
            out["reads"].append(self.read())
        out["ticks_ns"] = ticker.stop()
        return out


class PlainGripper(Client):
    """pylibfranka.Gripper as its documentation uses it: each command blocks until the hand answers."""

    name = "plf"

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(args)
        import pylibfranka

        self.gripper = pylibfranka.Gripper(args.ip)
        normal_priority()

    def issue(self, command: str, width_m: float) -> Any:
        if command == "move":
            return self.gripper.move(width_m, SPEED_M_S)
        if command == "grasp":
            g = GRASP
            return self.gripper.grasp(width_m, SPEED_M_S, g["force"], g["epsilon_inner"], g["epsilon_outer"])
        return self.gripper.stop()

    def wait(self, handle: Any) -> dict[str, Any]:
        return {"t_done_ns": now_ns(), "code": "SUCCEEDED" if handle else "UNSUCCESSFUL"}

    def read(self) -> dict[str, Any]:
        t_call = now_ns()
        state = self.gripper.read_once()
        t_return = now_ns()
        # libfranka's GripperState.time is the datagram's message_id in ms.
        return {
            "t_call_ns": t_call,
            "t_return_ns": t_return,
            "message_id": round(state.time.to_sec() * 1e3),
            "width_m": state.width,
        }

    def replace_mid_way(self, out: dict[str, Any]) -> None:
        """The move runs in this thread; a timer thread replaces it (stop, then the new move) as a
        program that must stay responsive would: it can only run once the move has given back the GIL."""

        def replace() -> None:
            out["t_replace_ns"] = now_ns()
            self.gripper.stop()
            self.gripper.move(OPEN_M, SPEED_M_S)
            out["t_replaced_done_ns"] = now_ns()

        out["t_issue_ns"] = now_ns()
        out["t_intent_ns"] = out["t_issue_ns"] + int(REPLACE_AFTER_S * 1e9)
        timer = threading.Timer(REPLACE_AFTER_S, replace)
        timer.start()
        self.gripper.move(HALF_M, SPEED_M_S)
        out["t_first_done_ns"] = now_ns()
        timer.join()
        out["first_code"] = "SUCCEEDED"


class JtacGripper(Client):
    """jtac's Gripper: every call returns a handle at once; a new command replaces the running one."""

    name = "jtac"

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(args)
        from jtac_py.hardware import FrankaArm

        self.arm = FrankaArm(args.ip, use_estimated_wrench=False, late_commands="applied", hand=True)
        normal_priority()
        self.gripper = self.arm.gripper

    def issue(self, command: str, width_m: float) -> Any:
        if command == "move":
            return self.gripper.move(width_m, SPEED_M_S)
        if command == "grasp":
            g = GRASP
            return self.gripper.grasp(
                width_m,
                SPEED_M_S,
                force_n=g["force"],
                epsilon_inner_m=g["epsilon_inner"],
                epsilon_outer_m=g["epsilon_outer"],
            )
        return self.gripper.stop()

    def wait(self, handle: Any) -> dict[str, Any]:
        result = handle.result(timeout=RESULT_TIMEOUT_S)
        return {
            "t_done_ns": now_ns(),
            "code": result.code.name,
            "message": result.message,
            "duration_s": result.duration_s,
            "end_width_m": result.width_m,
        }

    def read(self) -> dict[str, Any]:
        t_call = now_ns()
        state = self.gripper.state
        t_return = now_ns()
        return {
            "t_call_ns": t_call,
            "t_return_ns": t_return,
            "age_s": state.age_s,
            "time_s": state.time_s,
            "width_m": state.width_m,
        }

    def replace_mid_way(self, out: dict[str, Any]) -> None:
        out["t_issue_ns"] = now_ns()
        out["t_intent_ns"] = out["t_issue_ns"] + int(REPLACE_AFTER_S * 1e9)
        first = self.gripper.move(HALF_M, SPEED_M_S)
        time.sleep(max(out["t_intent_ns"] - now_ns(), 0) / 1e9)
        out["t_replace_ns"] = now_ns()
        second = self.gripper.move(OPEN_M, SPEED_M_S)
        out["t_replace_return_ns"] = now_ns()
        out["first_code"] = first.result(timeout=RESULT_TIMEOUT_S).code.name
        out["t_first_done_ns"] = now_ns()
        out["second_code"] = second.result(timeout=RESULT_TIMEOUT_S).code.name
        out["t_replaced_done_ns"] = now_ns()

    def close(self) -> None:
        self.arm.close()


def _timing(controller: Any) -> dict[str, Any]:
    hw = controller.timing()["hardware"]
    names = ("limiter_activations", "largest_command_gap", "late_reads", "late_commands", "device_errors")
    return {name: hw[name] for name in names} | {"max_write_interval_ms": hw["max_write_interval_s"] * 1e3}


def _traffic(gripper: Any, stop: threading.Event, log: list[dict[str, Any]]) -> Callable[[], None]:
    """Grasp the object, release it, each TRAFFIC_PERIOD_S after the last, until `stop`."""

    def run() -> None:
        k = 0
        next_s = time.monotonic()
        while not stop.is_set():
            t = now_ns()
            if k % 2 == 0:
                handle = gripper.grasp(OBJECT_M, SPEED_M_S, force_n=GRASP["force"])
            else:
                handle = gripper.move(OPEN_M, SPEED_M_S)
            log.append({"t_issue_ns": t, "t_return_ns": now_ns(), "handle": handle})
            k += 1
            next_s += TRAFFIC_PERIOD_S
            stop.wait(max(next_s - time.monotonic(), 0.0))

    return run


# (e), the traffic from another process: a plain pylibfranka.Gripper on franka-sim's gripper server, the
# same grasp/release every TRAFFIC_PERIOD_S for argv[2] seconds. It loads franka-sim as jtac's traffic
# does but leaves the arm's client process alone: what it changes is franka-sim's side.
PROCESS_TRAFFIC = """
import sys, time
import pylibfranka
gripper = pylibfranka.Gripper(sys.argv[1])
end_s = time.monotonic() + float(sys.argv[2])
next_s = time.monotonic()
k = 0
while time.monotonic() < end_s:
    if k % 2 == 0:
        gripper.grasp({object_m}, {speed}, {force}, 0.005, 0.005)
    else:
        gripper.move({open_m}, {speed})
    k += 1
    next_s += {period}
    time.sleep(max(next_s - time.monotonic(), 0.0))
""".format(object_m=OBJECT_M, open_m=OPEN_M, speed=SPEED_M_S, force=GRASP["force"], period=TRAFFIC_PERIOD_S)


def _goal(arm: Any, k: int, traffic: str | None, ip: str) -> dict[str, Any]:
    """One 10 s goal (there for even k, back for odd k) on a Controller of its own, with the gripper's
    traffic beside it from `traffic`: None (none), "jtac" (controller.gripper, from a thread of this
    process) or "process" (PROCESS_TRAFFIC)."""
    from jtac_py.controller import Controller, Trajectory

    # jtac's threads at their default priorities (SCHED_FIFO where allowed), as on a real robot.
    controller = Controller(arm, update_rate=1000).start()
    try:
        q0 = np.asarray(controller.state.q_cmd)
        target = q0 + (DELTA_RAD if k % 2 == 0 else -DELTA_RAD)
        stop, log = threading.Event(), []
        thread = threading.Thread(target=_traffic(controller.gripper, stop, log), name="traffic")
        other = None
        if traffic == "process":
            other = subprocess.Popen([sys.executable, "-c", PROCESS_TRAFFIC, ip, str(GOAL_S)])
        t_start = now_ns()
        if traffic == "jtac":
            thread.start()
        result = controller.follow(Trajectory.quintic(q0, target, GOAL_S), timeout=GOAL_S + 10.0)
        stop.set()
        if traffic == "jtac":
            thread.join()
        if other is not None:
            other.wait(timeout=RESULT_TIMEOUT_S)
        codes = [entry.pop("handle").result(timeout=RESULT_TIMEOUT_S).code.name for entry in log]
        return {
            "traffic": traffic,
            "t_start_ns": t_start,
            "t_end_ns": now_ns(),
            "goal": result.code.name,
            "message": result.message,
            "hardware_error": controller.hardware_error,
            "timing": _timing(controller),
            "gripper_calls": log,
            "gripper_codes": codes,
        }
    finally:
        controller.stop()


def run_arm(args: argparse.Namespace) -> dict[str, Any]:
    """(e): jtac's 10 s joint goals on the arm, alternately there and back, without and with the
    gripper's traffic (order: without, with, with, without; under 5 repeats: without, with). Worker
    "arm": the traffic through jtac's Gripper of this arm; "arm-process": from another process (the arm
    without a hand). A goal that ends in a reflex is recorded and cleared (automatic_error_recovery)
    before the next."""
    from jtac_py.hardware import FrankaArm

    source = "jtac" if args.worker == "arm" else "process"
    arm = FrankaArm(args.ip, use_estimated_wrench=False, late_commands="applied", hand=source == "jtac")
    normal_priority()
    plan = [False, True] if args.repeats < 5 else [False, True, True, False]
    goals = []
    ticker = Ticker()  # what any Python thread of this process waits meanwhile, goal by goal
    try:
        for k, with_traffic in enumerate(plan):
            goals.append(_goal(arm, k, source if with_traffic else None, args.ip))
            if goals[-1]["hardware_error"]:
                arm.automatic_error_recovery()
    finally:
        arm.close()
    return {"client": args.worker, "goals": goals, "ticks_ns": ticker.stop()}


def run_worker(args: argparse.Namespace) -> dict[str, Any]:
    if args.worker.startswith("arm"):
        return run_arm(args)
    client = PlainGripper(args) if args.worker == "plf" else JtacGripper(args)
    try:
        return client.run()
    finally:
        if isinstance(client, JtacGripper):
            client.close()
