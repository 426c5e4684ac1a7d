"""The gripper front end: ``Gripper`` (commands that never wait on the hand, preemption, listeners, the
service thread) and ``GripperHandle`` (a command's result, plain and asyncio, like a goal's handle).

A backend speaks to one hand (``HandBackend``): the simulated hand of a MujocoDevice, the Franka Hand
over libfranka's gripper protocol, or none. It reports through the Gripper's ``_on_state``,
``_on_end`` and ``_on_lost`` from the gripper's thread: the service thread the Gripper runs for a
backend that must be polled (real time), the backend's own reader thread, or the thread that calls
``poll()`` (lockstep: Controller.step()). No lock is held while anything waits or a listener runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from jtac_py.gripper.no_hand import NoHand
from jtac_py.gripper.types import (
    GripperEvent,
    GripperResult,
    GripperResultCode,
    GripperState,
    HandLimits,
    check_command,
)
from jtac_py.results import wait_for

__all__ = ["POLL_PERIOD_S", "Gripper", "GripperHandle", "HandBackend"]

_log = logging.getLogger("jtac.gripper")

#: How often the service thread reads a polled hand (the simulated one) [s]: 100 Hz.
POLL_PERIOD_S = 0.01

#: The id of a handle whose command never reached a hand (no hand, the link down).
NOT_SENT_ID = 0

Code = GripperResultCode


class HandBackend(Protocol):
    """One hand as the Gripper drives it. Every method returns at once."""

    #: The hand's limits; None: no hand.
    limits: HandLimits | None
    #: True: the Gripper polls it (a service thread in real time, poll() in lockstep).
    needs_polling: bool
    #: True: open() never waits (the first command may open it); False: only open() connects.
    opens_at_once: bool

    def open(self, gripper: Gripper) -> None:
        """Starts reporting to `gripper` (connects, starts a reader thread where there is one)."""

    def issue(self, command: str, values: dict[str, float]) -> int:
        """Sends a checked command (the running one is replaced); its id (> 0), which the backend's
        reports carry. ConnectionError when the hand cannot be reached."""

    def state(self) -> GripperState:
        """The newest state (last_error None: the Gripper fills it in)."""

    def poll(self) -> None:
        """Reads the hand once and reports (polled backends only)."""

    def close(self) -> None:
        """Stops reporting (idempotent); the hand keeps what it holds."""


class GripperHandle:
    """A gripper command: done(), result(timeout), ``await handle``, add_done_callback(fn).

    command: "move" | "grasp" | "home" | "stop"; id: the hand's command id (0: it never reached a
    hand); issued_at_s: when it was issued, on the gripper's clock [s]."""

    def __init__(self, gripper: Gripper, command: str, command_id: int, issued_at_s: float) -> None:
        self.command = command
        self.id = command_id
        self.issued_at_s = issued_at_s
        self._gripper = gripper
        self._future: concurrent.futures.Future[GripperResult] = concurrent.futures.Future()

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: float | None = None) -> GripperResult:
        """The result; waits up to timeout seconds (lockstep: of simulated time, stepping the arm
        through its Controller). TimeoutError when it is not there in time (the command keeps
        running)."""
        step_until = self._gripper._step_until_or_none(self)
        return wait_for(self._future, timeout, step_until, f"gripper {self.command} {self.id} not finished")

    def __await__(self) -> Any:
        return self._wait().__await__()

    async def _wait(self) -> GripperResult:
        stepping = self._gripper._stepping
        if stepping is None:
            return await asyncio.wrap_future(self._future)
        step_chunk = stepping[1]
        while not self.done():  # lockstep: the simulation advances between two yields
            step_chunk()
            await asyncio.sleep(0)
        return self._future.result()

    def add_done_callback(self, fn: Callable[[GripperResult], Any]) -> None:
        """fn(result), once, from the gripper's thread (from the caller's for a command ended at once:
        preempted by the caller's new command, NO_HAND; at once, from this one, when already done)."""
        self._future.add_done_callback(lambda future: fn(future.result()))

    def _resolve(self, result: GripperResult) -> bool:
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            self._future.set_result(result)
            return True
        return False

    def __repr__(self) -> str:
        state = self._future.result().code.name if self.done() else "running"
        return f"GripperHandle({self.command!r}, id={self.id}, {state})"


class Gripper:
    """The arm's hand: move, grasp, home and stop return a GripperHandle at once; a new command
    preempts the running one. ``state`` is a snapshot that never blocks. See docs/python_api.md,
    "The gripper".

    backend: the hand (None: no hand: every command's handle ends NO_HAND at once); lockstep: the
    hand is stepped with the arm (poll() reads it; no service thread)."""

    def __init__(self, backend: HandBackend | None = None, *, lockstep: bool = False) -> None:
        self._backend: HandBackend = NoHand() if backend is None else backend
        self.limits: HandLimits | None = self._backend.limits
        self.present = self.limits is not None
        self.lockstep = lockstep
        self._clock: Callable[[], float] = time.monotonic
        self.clock_is_robot_time = False
        self._lock = threading.Lock()  # the open handles and the listeners; never held while waiting
        self._open: dict[int, GripperHandle] = {}
        self._listeners: list[Callable[[GripperEvent], Any]] = []
        self._last_error: str | None = None
        self._opened = False
        self._lost = False  # the link broke: open() connects again
        self._open_lock = threading.Lock()  # opening and closing the backend
        self._thread: threading.Thread | None = None
        self._stop_thread = threading.Event()
        self._stepping: tuple[Callable[..., None], Callable[[], None]] | None = None

    # ------------------------------------------------------------------------------------ commands
    def move(self, width_m: float, speed_m_s: float = 0.1) -> GripperHandle:
        """Moves the fingers to width_m [m] at speed_m_s [m/s, width rate]: SUCCEEDED at the width,
        BLOCKED when something stops the fingers short of it."""
        return self._issue("move", width_m=width_m, speed_m_s=speed_m_s)

    def grasp(
        self,
        width_m: float,
        speed_m_s: float = 0.1,
        force_n: float = 20.0,
        epsilon_inner_m: float = 0.005,
        epsilon_outer_m: float = 0.005,
    ) -> GripperHandle:
        """Closes on an object of width_m [m] with force_n [N]: SUCCEEDED (grasped) when the fingers
        stop inside (width_m - epsilon_inner_m, width_m + epsilon_outer_m), NOT_GRASPED otherwise."""
        return self._issue(
            "grasp",
            width_m=width_m,
            speed_m_s=speed_m_s,
            force_n=force_n,
            epsilon_inner_m=epsilon_inner_m,
            epsilon_outer_m=epsilon_outer_m,
        )

    def home(self) -> GripperHandle:
        """Opens fully (the real hand measures its stroke on the way)."""
        return self._issue("home")

    def stop(self) -> GripperHandle:
        """Stops the fingers where they are (the running command ends PREEMPTED)."""
        return self._issue("stop")

    # ------------------------------------------------------------------------------------ state
    @property
    def state(self) -> GripperState:
        """The hand's newest state (never blocks; sim: the device's last tick)."""
        if not self.present:
            return self._backend.state()
        return dataclasses.replace(self._backend.state(), last_error=self._last_error)

    def now(self) -> float:
        """The gripper's clock [s]: the controller's time once a Controller owns the arm, else
        time.monotonic()."""
        return self._clock()

    def set_clock(self, now: Callable[[], float], *, robot_time: bool = True) -> None:
        """Measures times with now() (the Controller passes its time base: robot_time, the robot's
        tick times); the handles issued before keep their issue times."""
        self._clock = now
        self.clock_is_robot_time = robot_time

    def set_stepping(
        self, step_until: Callable[..., None] | None, step_chunk: Callable[[], None] | None
    ) -> None:
        """Lockstep: how result() and ``await`` advance the simulation (the Controller's stepper);
        None: they wait in real time."""
        self._stepping = None if step_until is None or step_chunk is None else (step_until, step_chunk)

    # ------------------------------------------------------------------------------------ listeners
    def add_listener(self, fn: Callable[[GripperEvent], Any]) -> None:
        """fn(GripperEvent) for every state sample the gripper's thread sees and every command and
        result, from the gripper's thread (a command, and the result of the one it preempts, from
        the thread that issued it)."""
        with self._lock:
            self._listeners.append(fn)
        self._ensure_open()

    def remove_listener(self, fn: Callable[[GripperEvent], Any]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._listeners.remove(fn)

    # ------------------------------------------------------------------------------------ service
    def poll(self) -> None:
        """Lockstep: reads the hand once and reports (Controller.step() calls it after stepping).
        Nothing where a thread serves the hand."""
        if self.present and self._backend.needs_polling and self._thread is None:
            self._ensure_open()
            self._backend.poll()

    def close(self) -> None:
        """Stops the service thread and the backend's link (idempotent); a command still open ends
        PREEMPTED ("closed"); the hand keeps what it holds. A later command opens it again."""
        with self._open_lock:
            self._stop_thread.set()
            thread, self._thread = self._thread, None
            if thread is not None and thread is not threading.current_thread():
                thread.join()
            if self._opened:
                self._backend.close()
                self._opened = False
        self._end_all(Code.PREEMPTED, "the gripper was closed before the command ended")

    def __enter__(self) -> Gripper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Gripper({type(self._backend).__name__}, present={self.present})"

    # ------------------------------------------------------------------------------------ reports
    def _on_state(self, state: GripperState) -> None:
        """A state sample (backends call it from the gripper's thread)."""
        if self._listeners:
            state = dataclasses.replace(state, last_error=self._last_error)
            self._fire(GripperEvent("state", state.time_s, state=state))

    def _on_end(
        self,
        command_id: int,
        code: GripperResultCode,
        message: str,
        width_m: float,
        time_s: float | None = None,
    ) -> None:
        """The hand ended command_id at time_s (None: now) on the gripper's clock; ignored when its
        handle already ended (e.g. preempted)."""
        with self._lock:
            handle = self._open.pop(command_id, None)
        if handle is not None:
            self._finish(handle, code, message, width_m, time_s)

    def _on_lost(self, message: str) -> None:
        """The link to the hand broke: every open command ends CONNECTION_LOST (and every new one,
        until open() connects again)."""
        self._lost = True
        self._last_error = message
        self._end_all(Code.CONNECTION_LOST, message)

    # ------------------------------------------------------------------------------------ internals
    def _issue(self, command: str, **values: float) -> GripperHandle:
        if not self.present:
            handle = GripperHandle(self, command, NOT_SENT_ID, self.now())
            self._finish(handle, Code.NO_HAND, "the arm has no hand", math.nan)
            return handle
        checked = check_command(self.limits, command, **values)  # type: ignore[arg-type]
        self._ensure_open()
        issued_at_s = self.now()
        try:
            with self._lock:  # the handle is registered before any report of its id can arrive
                command_id = self._backend.issue(command, checked)
                handle = GripperHandle(self, command, command_id, issued_at_s)
                replaced = list(self._open.values())
                self._open = {command_id: handle}
        except ConnectionError as error:
            handle = GripperHandle(self, command, NOT_SENT_ID, issued_at_s)
            self._last_error = str(error)
            self._finish(handle, Code.CONNECTION_LOST, str(error), math.nan)
            return handle
        width_m = self._backend.state().width_m
        for old in replaced:
            self._finish(old, Code.PREEMPTED, f"preempted by {command} {command_id}", width_m)
        self._fire(
            GripperEvent(
                "command",
                issued_at_s,
                command=command,
                id=command_id,
                width_m=checked.get("width_m"),
                speed_m_s=checked.get("speed_m_s"),
                force_n=checked.get("force_n"),
            )
        )
        return handle

    def _finish(
        self,
        handle: GripperHandle,
        code: GripperResultCode,
        message: str,
        width_m: float,
        end_s: float | None = None,
    ) -> None:
        end_s = self.now() if end_s is None else end_s
        result = GripperResult(code, handle.command, message, width_m, end_s - handle.issued_at_s)
        if code not in (Code.SUCCEEDED, Code.PREEMPTED, Code.NO_HAND):
            self._last_error = f"{handle.command} {handle.id}: {code.name}: {message}"
        if handle._resolve(result):
            self._fire(GripperEvent("result", end_s, command=handle.command, id=handle.id, result=result))

    def _end_all(self, code: GripperResultCode, message: str) -> None:
        with self._lock:
            handles, self._open = list(self._open.values()), {}
        for handle in handles:
            self._finish(handle, code, message, math.nan)

    def _fire(self, event: GripperEvent) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for fn in listeners:
            try:
                fn(event)
            except Exception:  # a listener's bug must not stop the gripper's thread
                _log.exception("gripper listener %r failed", fn)

    def open(self) -> None:
        """Opens the link to the hand now (idempotent; the first command, listener or poll() does it
        otherwise): a Franka Hand connects (ConnectionError when it does not answer within 2 s); a
        polled hand in real time gets its service thread. After a lost link it connects again (the
        only call that may wait, up to the connect timeout)."""
        if self._lost:
            self.close()
        if not self.present or self._opened:
            return
        with self._open_lock:
            if self._opened:
                return
            self._backend.open(self)
            self._opened = True
            self._lost = False
            if self._backend.needs_polling and not self.lockstep:
                self._stop_thread.clear()
                self._thread = threading.Thread(target=self._serve, name="jtac::gripper", daemon=True)
                self._thread.start()

    def _ensure_open(self) -> None:
        """open() where that never waits and the link was not lost (a command never waits to connect)."""
        if not self._opened and not self._lost and self._backend.opens_at_once:
            self.open()

    def _serve(self) -> None:
        """The service thread: reads the hand every POLL_PERIOD_S (waits without a lock)."""
        while not self._stop_thread.wait(POLL_PERIOD_S):
            try:
                self._backend.poll()
            except Exception:
                _log.exception("gripper: reading the hand failed")

    def _step_until_or_none(self, handle: GripperHandle) -> Callable[..., None] | None:
        if self._stepping is not None:
            return self._stepping[0]
        if self.lockstep and not handle.done():
            raise RuntimeError(
                "a lockstep arm's hand moves only while a Controller steps the arm: use controller.gripper"
            )
        return None
