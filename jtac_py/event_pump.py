"""The Controller's event pump: the non-real-time side that takes the core's events (goal results,
tares, a compliant stream's stop) and the recorded rows, and notices a hardware thread that ended
by itself.

In real time a *pump* thread runs ``pump()`` about every 10 ms; in lockstep every ``step()`` pumps.
Nothing native ever waits for it: a Python thread that holds the GIL delays only this bookkeeping (a
recording's rows wait in the native ring, which holds ``record_buffer_cycles`` cycles, and drop,
counted, beyond).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jtac_py import _native, reflexes
from jtac_py.law_slot import LawSlot
from jtac_py.recording import _TIP_FIELDS, LOG_LEVELS, LogEvent, Recording
from jtac_py.reflexes import Explanation
from jtac_py.results import GoalHandle, GoalResult, TareResult

__all__ = ["EventPump"]

EventType = _native.EventType

_PUMP_PERIOD_S = 0.010  # the native ring holds seconds of rows; 10 ms keeps latency of results low
_MAX_EVENTS = 10000  # events kept in Controller.events; the older half goes when it is full
_GOAL_ENDS = (EventType.GOAL_SUCCEEDED, EventType.GOAL_ABORTED, EventType.GOAL_CANCELED)
#: A recorded event's rcl_interfaces/msg/Log level.
_LOG_LEVEL_OF_EVENT = {
    EventType.GOAL_STARTED: "INFO",
    EventType.GOAL_SUCCEEDED: "INFO",
    EventType.GOAL_CANCELED: "WARN",
    EventType.STOP_STARTED: "WARN",
    EventType.GOAL_ABORTED: "ERROR",
    EventType.TARE_SUCCEEDED: "INFO",
    EventType.TARE_FAILED: "ERROR",
}


class EventPump:
    """Goals waiting for results, tares waiting for outcomes, recordings, and the pump thread.

    Everything here is guarded by `lock` (shared with the law slot): a goal is registered under it
    from submission on, so the pump never sees a goal's events before its handle exists.
    """

    def __init__(self, core: Any, loop: Any, interface: Any, arm: Any, slot: LawSlot, lock: threading.RLock):
        self._core = core
        self._loop = loop
        self._interface = interface
        self._arm = arm
        self._slot = slot
        self.lock = lock
        self.goals: dict[int, GoalHandle] = {}
        self.tares: dict[int, concurrent.futures.Future[TareResult]] = {}
        self.recordings: list[Recording] = []
        self.events: list[Any] = []  # every core event since start, oldest first (bounded)
        #: Why the hardware thread stopped by itself, None while it runs.
        self.hardware_error: str | None = None
        #: Why a PEER_FAULT brake happened (which other arm of the group stopped, and its error),
        #: appended to the results it ended; set by the group (``jtac_py.arm_group``).
        self.peer_fault_reason: Callable[[], str] | None = None
        #: The last reflex explained (an arm with robot_reflexes), None before one.
        self.fault_explanation: Explanation | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------------------- the thread
    def start_thread(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="jtac-pump", daemon=True)
        self._thread.start()

    def stop_thread(self) -> None:
        """Joins the pump thread, then looks at the hardware once more (it may have died meanwhile)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.check_hardware()

    def _run(self) -> None:
        while not self._stop.wait(_PUMP_PERIOD_S):
            try:
                self.check_hardware()
                self.pump()
            except Exception as error:  # keep pumping: a lost pump would lose every later result
                warnings.warn(f"jtac pump: {error!r}", RuntimeWarning, stacklevel=1)

    def check_hardware(self) -> None:
        """The hardware thread ended by itself (a device error, e.g. a libfranka reflex): stops the
        controller thread, which resolves the pending goals (INVALID_STATE), and keeps the reason, with
        the device's own message, for their results. Real time only."""
        if self.hardware_error is not None or self._interface.running:
            return
        status = self._interface.exit_status
        if status == _native.DeviceStatus.OK:  # not started, or stopped by stop()
            return
        self.hardware_stopped(status)

    def hardware_stopped(self, status: Any) -> None:
        """The arm stopped by itself with `status`: keeps the reason (with the arm's own message) for
        the pending goals' results and stops the controller thread, which resolves them
        (INVALID_STATE). Real time (check_hardware), or a lockstep group that saw the status."""
        detail = self._arm.last_error
        reason = f"the hardware thread stopped: {status.name}"
        error = f"{reason}: {detail}" if detail else reason
        if getattr(self._arm, "robot_reflexes", False):
            self.fault_explanation = self._explain(detail or "")
            error = f"{error} — {self.fault_explanation.text()}"
        self.hardware_error = error
        self._loop.stop()
        self.pump()

    def _context(self) -> list[tuple[int, str]]:
        """What the controller did that a reflex's explanation may name: law switches, the stream's
        last input (host steady clock [ns], what)."""
        context = list(self._slot.switches)
        stream = getattr(self._slot.tenant, "stream", None)
        if stream is not None and stream.last_input_ns:
            context.append((stream.last_input_ns, "the stream's last input"))
        return context

    def _explain(self, message: str) -> Explanation:
        """The reflex explained from the flight recorder, whose trace is saved beside it (a trace that
        cannot be saved is said so in the advice; the explanation stands)."""
        detected_ns = time.monotonic_ns()  # the clock of the trace's read_ns
        trace = self._interface.packet_trace()
        robot = getattr(self._arm, "robot", "fr3")
        try:
            path: str | None = str(reflexes.save_trace(trace, message, robot, detected_ns=detected_ns))
            note = ""
        except OSError as error:
            path, note = None, f" (the trace could not be saved: {error})"
        explanation = reflexes.explain(
            message, trace, robot, trace_path=path, detected_ns=detected_ns, context=self._context()
        )
        if note:
            explanation = dataclasses.replace(explanation, advice=explanation.advice + note)
        return explanation

    # ---------------------------------------------------------------------------- the pump
    def pump(self) -> None:
        """Takes the core's events and the recorded rows (non-real-time side)."""
        with self.lock:
            if self.recordings:
                chunk = self._loop.drain()
                num_tips = int(self._core.num_tips)
                for name in _TIP_FIELDS:
                    chunk[name] = chunk[name][:, :num_tips]
                if len(chunk["time"]):
                    for recording in self.recordings:
                        recording._append(chunk)
            for event in self._core.poll_events():
                self._on_event(event)
            self._slot.poll()
            streamed = [r for r in self.recordings if r.streamed]
        for recording in streamed:  # a full chunk to disk, the lock released
            recording.write_pending()

    def cancel_goals(self) -> None:
        """Asks the core to stop every goal not finished yet (each stops in minimum time)."""
        with self.lock:
            handles = [h for h in self.goals.values() if not h.done()]
        for handle in handles:
            handle.cancel()

    # ---------------------------------------------------------------------------- tares
    def request_tare(self, tip: int, what: str) -> concurrent.futures.Future[TareResult]:
        """Asks the core to tare tip's sensor: the future resolves with the outcome's event.
        RuntimeError "<what>: <the core's message>" when the core refuses at once."""
        future: concurrent.futures.Future[TareResult] = concurrent.futures.Future()
        with self.lock:
            self.tares[tip] = future
        message = self._core.request_zero_fts(tip)
        if message:
            with self.lock:
                self.tares.pop(tip, None)
            raise RuntimeError(f"{what}: {message}")
        return future

    # ---------------------------------------------------------------------------- recordings
    @property
    def dropped_records(self) -> int:
        """Rows the native ring dropped since the loop was built."""
        return int(self._loop.dropped_records)

    def add_recording(
        self, fields: Sequence[str], path: str | Path | None, gripper: Any = None, **names: Any
    ) -> Recording:
        """A recording of `fields`; the hand's series among them come from `gripper`'s events; names:
        Recording's joint_names, sensor_frames, controller_time_s."""
        with self.lock:
            if not self.recordings:
                self._loop.drain()  # rows of an earlier recording's tail belong to nobody
                self._loop.start_recording()
            recording = Recording(self, fields, path, gripper, **names)
            self.recordings.append(recording)
        return recording

    def end_recording(self, recording: Recording) -> None:
        with self.lock:
            self.pump()
            recording.dropped = self.dropped_records - recording._dropped_at_start
            recording.active = False
            if recording in self.recordings:
                self.recordings.remove(recording)
            if not self.recordings:
                self._loop.stop_recording()

    # ---------------------------------------------------------------------------- events
    def _on_event(self, event: Any) -> None:
        self.events.append(event)
        if self.recordings:
            logged = self._log_event(event)
            for recording in self.recordings:
                recording._on_event(logged)
        if len(self.events) > _MAX_EVENTS:
            del self.events[: _MAX_EVENTS // 2]
        if event.type in (EventType.TARE_SUCCEEDED, EventType.TARE_FAILED):
            self._tare_done(event)
        elif event.goal_id == 0 and event.type == EventType.GOAL_ABORTED:
            # A compliant stream's stop (threshold, non-finite reading or offset): the stream brakes.
            self._slot.stopped(event.message)
        elif event.goal_id in self.goals:
            self._goal_event(self.goals[event.goal_id], event)

    def _log_event(self, event: Any) -> LogEvent:
        """The event as a recording keeps it: "<TYPE> goal <id>: <the result's text>" (no goal: a
        stream's stop or a tare, "<TYPE>: <text>")."""
        handle = self.goals.get(event.goal_id)
        ends_goal = event.type in _GOAL_ENDS and handle is not None
        text = self._result_message(handle, event) if ends_goal else event.message
        subject = f"{event.type.name} goal {event.goal_id}" if event.goal_id else event.type.name
        level = _LOG_LEVEL_OF_EVENT[event.type]
        return LogEvent(float(event.time_s), LOG_LEVELS[level], "jtac", f"{subject}: {text}", event.goal_id)

    def _tare_done(self, event: Any) -> None:
        future = self.tares.pop(event.joint, None)  # the event's joint field carries the tip
        if future is not None and not future.done():
            ok = event.type == EventType.TARE_SUCCEEDED
            future.set_result(TareResult(ok, event.message, float(event.value) if ok else math.nan))

    def _goal_event(self, handle: GoalHandle, event: Any) -> None:
        handle.events.append(event)
        if event.type == EventType.GOAL_STARTED:
            handle.start_time_s = event.time_s
        elif event.type == EventType.STOP_STARTED:
            handle.stop_time_s = event.time_s
            handle.predicted_stop_duration_s = event.stop_duration_s
        elif event.type in _GOAL_ENDS:
            handle._resolve(
                GoalResult(
                    code=event.code,
                    message=self._result_message(handle, event),
                    goal_id=event.goal_id,
                    canceled=event.type == EventType.GOAL_CANCELED,
                    start_time_s=handle.start_time_s,
                    end_time_s=event.time_s,
                    stop_time_s=handle.stop_time_s,
                    predicted_stop_duration_s=handle.predicted_stop_duration_s,
                )
            )
            del self.goals[event.goal_id]

    def _result_message(self, handle: GoalHandle, event: Any) -> str:
        """The core's message with why it was handed over, the hardware's error and intake's warning."""
        message = event.message
        if event.detail == _native.EventDetail.HANDED_OVER and self._slot.handover_reason:
            message = f"{message}: {self._slot.handover_reason}"
        if event.detail == _native.EventDetail.PEER_FAULT and self.peer_fault_reason is not None:
            message = f"{message}: {self.peer_fault_reason()}"
        if self.hardware_error is not None and event.type != EventType.GOAL_SUCCEEDED:
            message = f"{message} ({self.hardware_error})"
        if handle.warning:
            message = f"{message} (warning: {handle.warning})" if message else f"warning: {handle.warning}"
        return message
