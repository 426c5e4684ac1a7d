"""The Python API without ROS: ``Controller(hardware, config)`` over the native control loop.

Threads: the hardware real-time thread (C++, 1 kHz) reads the robot, rate-matches the newest
controller command and writes; the controller thread (C++, ``update_rate``) runs the law in the
loop's slot; this module submits goals, cancels, parameters and tares through the core's
preallocated mailboxes, and the event pump (``jtac_py.event_pump``) takes the events and recorded
rows. Nothing native ever waits for Python.

With a lockstep ``SimulatedArm`` nothing runs by itself: ``step()`` advances the robot by 1 ms
packets on a virtual clock, and the blocking calls (``follow()``, ``GoalHandle.result()``,
``zero_fts()``) step the simulation until they are done, so a script reads the same in both modes.

The Controller is the API's one entry point and delegates: the arm is built by ``jtac_py.arms``,
the native parts by ``jtac_py.assembly``, the loop's one law slot (goals through the JTAC, streams,
custom laws, the hand-over between them) is ``jtac_py.law_slot``, results and handles are
``jtac_py.results``. Inputs are checked by the same code the ROS node uses: parameters by the schema
(ParameterError names parameter, value and rule), goals by the core (a rejected goal is a result,
INVALID_GOAL / INVALID_JOINTS naming field, joint and value, as an action client sees it).
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jtac_py import _native, goals, laws, parameters
from jtac_py import config as jtac_config
from jtac_py.arms import build_arm
from jtac_py.assembly import LIMIT_MARGIN, assemble, values_for_arm
from jtac_py.custom_law import CustomLawTenant
from jtac_py.event_pump import EventPump
from jtac_py.goal_intake import GoalIntake
from jtac_py.goals import Trajectory
from jtac_py.hardware import Arm
from jtac_py.law_slot import LawSlot, StreamTenant, stream_law
from jtac_py.recording import _TIP_FIELDS, RECORD_FIELDS, ControllerState, Recording
from jtac_py.results import GoalError, GoalHandle, GoalResult, TareResult, await_result, wait_for
from jtac_py.streaming import Stream

__all__ = [
    "LIMIT_MARGIN",
    "RECORD_FIELDS",
    "Controller",
    "ControllerState",
    "GoalError",
    "GoalHandle",
    "GoalResult",
    "Recording",
    "Stream",
    "TareResult",
    "Trajectory",
]

_log = logging.getLogger(__name__)

ResultCode = _native.ResultCode
StreamState = _native.StreamState
EventType = _native.EventType
ControllerMode = _native.ControllerMode

_LOCKSTEP_CHUNK = 10  # packets stepped between two pumps while a blocking call steps the simulation


class Controller:
    """Joint trajectory execution with Cartesian admittance on a native control loop.

    Args:
        hardware: any ``jtac_py.hardware.Arm`` (a SimulatedArm in real time or lockstep, a FrankaArm,
            another backend); None = the arm the configuration describes (``jtac_py.arms.build_arm``).
        config: parameter values (flat dotted names, nested dict) or a ROS params file; see
            docs/parameters.md. Validated by the schema (ParameterError names parameter and value).
        **overrides: parameter values on top of config.
    """

    def __init__(self, hardware: Arm | None = None, config: Any = None, **overrides: Any) -> None:
        if hardware is None:
            hardware = build_arm(jtac_config.resolve(config, **overrides))
        self.hardware = hardware
        self._values = values_for_arm(config, overrides, hardware)
        self._schema = parameters.default_schema()
        self._lockstep = bool(hardware.lockstep)
        parts = assemble(self._values, hardware)
        self._core, self._interface, self._loop = parts.core, parts.interface, parts.loop
        self._wrench_sources = parts.wrench_sources
        lock = threading.RLock()  # the goal table, the slot, recordings and the pump
        step_until = self._step_until if self._lockstep else None
        self._slot = LawSlot(self._loop, lock, lambda: self._values["stop_accelerations"], step_until)
        self._events = EventPump(self._core, self._loop, self._interface, hardware, self._slot, lock)
        self.events = self._events.events  # every core event since start, oldest first (bounded)
        self._intake = GoalIntake(
            self._core, self._slot, self._events, self.controller_time, self._wait_a_cycle, self
        )
        self._last_law: CustomLawTenant | None = None  # its error stays until the next use_law()
        self._started = False

    # ---------------------------------------------------------------------------- properties
    @property
    def joint_names(self) -> list[str]:
        return list(self._core.joint_names)

    @property
    def sensor_frames(self) -> list[str]:
        return list(self._core.sensor_frames)

    @property
    def num_tips(self) -> int:
        """Tips the controller has (one per sensor frame): the rows of the wrenches_* fields."""
        return int(self._core.num_tips)

    @property
    def wrench_sources(self) -> dict[str, str]:
        """Where each tip's wrench comes from, by sensor frame: "device" (the arm's sensor),
        "external" (readings handed over by feed_wrench) or "none" (no sensor: zero)."""
        return dict(zip(self.sensor_frames, self._wrench_sources, strict=True))

    @property
    def values(self) -> dict[str, Any]:
        """The parameter values in force (a copy)."""
        return dict(self._values)

    @property
    def lockstep(self) -> bool:
        return self._lockstep

    @property
    def running(self) -> bool:
        return self._started

    @property
    def update_rate_hz(self) -> int:
        return self._loop.update_rate_hz

    @property
    def hardware_error(self) -> str | None:
        """Why the hardware thread stopped by itself (e.g. a libfranka reflex), None while it runs."""
        return self._events.hardware_error

    # ---------------------------------------------------------------------------- start / stop
    def start(self) -> Controller:
        """Starts the hardware thread and the controller thread (lockstep: arms step())."""
        if self._started:
            return self
        error = self.hardware.last_error
        if error:
            raise RuntimeError(
                f"the hardware stopped with an error: {error}; clear it first "
                "(FrankaArm.automatic_error_recovery())"
            )
        self._started = True
        if not self._lockstep:
            self._start_threads()
        return self

    def _start_threads(self) -> None:
        cycles_before = self._loop.timing()["cycles"]
        self._interface.start()
        self._loop.start()
        # A real arm's motion starts only now, with the hardware thread already waiting for it: the
        # robot expects a command every millisecond from the Move on.
        try:
            # Just below the hardware thread: the handover from the Move to it is not preempted.
            self.hardware.start_motion(fifo_priority=max(0, int(self._values["realtime_priority"]) - 1))
        except BaseException:
            self._loop.stop()
            self._interface.stop()
            self._started = False
            raise
        self._events.start_thread()
        # After a restart the snapshot is still the last cycle before the stop: wait for a new one.
        deadline = time.monotonic() + 2.0
        while self._loop.timing()["cycles"] <= cycles_before:
            if time.monotonic() > deadline:
                error = self.hardware.last_error
                raise RuntimeError(
                    "no controller cycle within 2.0 s of start() "
                    f"(hardware: {self._interface.exit_status.name}{': ' + error if error else ''})"
                )
            time.sleep(0.001)

    def stop(self) -> None:
        """Stops both threads; a goal still running ends ABORTED (INVALID_STATE). A FrankaArm's motion
        ends with them (finish_motion()). Idempotent."""
        if not self._started:
            return
        if not self._lockstep:
            self._events.stop_thread()  # first: it may stop the controller thread itself
        self._loop.stop()
        if not self._lockstep:
            self._interface.stop()
            self.hardware.finish_motion()  # at once: a real arm without commands aborts after 20 ms
        self._events.pump()
        for recording in list(self._events.recordings):
            recording.stop()
        # The loop is stopped: the slot goes back to the JTAC without a hand-over (the next start()
        # begins from the robot's echo at rest).
        if self._slot.tenant is not None:
            self._slot.give_back(self._slot.tenant, wait=False, what="stop()")
        self._started = False

    def __enter__(self) -> Controller:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def step(self, packets: int = 1) -> Any:
        """Lockstep only: advance the robot by `packets` 1 ms packets (and the controller cycles due).

        Returns the DeviceStatus (OK, or the first status that is not).
        """
        if not self._lockstep:
            raise RuntimeError("step() needs a lockstep SimulatedArm (clock='lockstep')")
        self._require_started()
        status = self._loop.step(int(packets))
        self._events.pump()
        return status

    # ---------------------------------------------------------------------------- goals
    def follow(
        self,
        trajectory: Any,
        admittance: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        tolerances: Mapping[str, Any] | None = None,
        thresholds: Sequence[float] | None = None,
        *,
        joint_damping_per_s: float = 0.0,
        timeout: float | None = None,
        wait: bool = True,
    ) -> GoalResult | GoalHandle:
        """Executes a trajectory; returns its GoalResult (wait=True) or a GoalHandle (wait=False).

        trajectory: a Trajectory, or a dict {joint_names, points: [{positions, velocities,
            accelerations, time_from_start}, ...]} (the core's *_rad/_s names are accepted too).
        admittance: one tip's (or a list, one per tip) {mass, stiffness, damping, selected_axes,
            ee_pose_control, end_effector_frame, end_effector_mass_kg, end_effector_cog_m,
            absolute_force_torque_threshold}; 6-vectors [kg|kg·m², N/m|N·m/rad, N·s/m|N·m·s/rad] or
            scalars for all six axes. damping defaults to critical, selected_axes to all six.
        tolerances: {"path": rad, "goal": rad, "goal_time": s}, each a number or one per joint;
            math.inf = not checked. Missing = the parameter defaults.
        thresholds: [Fx Fy Fz Tx Ty Tz] absolute force/torque limits [N, N·m] for this goal.
        timeout: seconds to wait (lockstep: simulated seconds) before TimeoutError; the goal keeps
            running (cancel it through the handle: follow(..., wait=False)).
        """
        handle = self._submit(trajectory, admittance, tolerances, thresholds, joint_damping_per_s)
        return handle.result(timeout) if wait else handle

    async def follow_async(
        self,
        trajectory: Any,
        admittance: Any = None,
        tolerances: Mapping[str, Any] | None = None,
        thresholds: Sequence[float] | None = None,
        *,
        joint_damping_per_s: float = 0.0,
        timeout: float | None = None,
    ) -> GoalResult:
        """follow() for asyncio: awaits the result without blocking the event loop.

        A canceled task cancels the goal (the arm stops in minimum time).
        """
        handle = self._submit(trajectory, admittance, tolerances, thresholds, joint_damping_per_s)
        lockstep = (self._sim_time, lambda: self.step(_LOCKSTEP_CHUNK)) if self._lockstep else None
        return await await_result(handle, timeout, lockstep)

    def _submit(self, trajectory: Any, admittance: Any, tolerances: Any, thresholds: Any, damping: float):
        self._require_started()
        goal = goals.jtac_goal(
            trajectory,
            self.joint_names,
            admittance=admittance,
            tolerances=tolerances,
            thresholds=thresholds,
            joint_damping_per_s=damping,
        )
        return self.submit(goal)

    def submit(self, goal: Any) -> GoalHandle:
        """Submits a prepared core goal: a ``_native.JtacGoal`` (``jtac_py.goals.jtac_goal`` builds
        one with the defaults of follow(); the ROS node converts its messages to one), or, kept for
        compatibility, the dict of its constructor's arguments (trajectory, tips,
        joint_damping_per_s, absolute_force_torque_threshold; fields as given, no defaults). Returns
        the handle; a rejected goal's handle is already resolved with the core's code and message
        (INVALID_STATE while a stream or custom law holds the arm)."""
        self._require_started()
        return self._intake.submit(_native.JtacGoal(**goal) if isinstance(goal, Mapping) else goal)

    def cancel(self) -> None:
        """Cancels every goal not finished yet (each stops in minimum time; results follow)."""
        with self._events.lock:
            handles = [h for h in self._events.goals.values() if not h.done()]
        for handle in handles:
            handle.cancel()

    # ---------------------------------------------------------------------------- the law slot
    def stream(
        self,
        *,
        blend_window_s: float = 0.1,
        timeout_s: float = 0.5,
        ensemble_weight: float = 1.0,
        chunk_capacity: int = 64,
        admittance: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        thresholds: Sequence[float] | None = None,
        joint_damping_per_s: float = 0.0,
    ) -> Stream:
        """Switches the loop from trajectory execution to a streamed target (teleoperation, a policy):
        returns a Stream (send() single targets, send_chunk() action chunks, close()). Returns at once;
        the switch follows the hand-over rule (docs/python_api.md, "Switching between goals, streams
        and laws"): a goal still moving brakes to rest within stop_accelerations and ends INVALID_STATE,
        then the stream starts from that command. Goals, tares and time-scale changes are refused while
        it is open; RuntimeError while another stream or a custom law holds the arm.

        blend_window_s: shortest blend into a new chunk [s]; timeout_s: brake after this long without
        input [s]; ensemble_weight: the newest chunk's weight where chunks overlap (1 = none);
        chunk_capacity: most points in one chunk. admittance, thresholds, joint_damping_per_s: a
        compliant axis set, as follow() takes them (None: no admittance); validated as a goal's
        (ValueError naming field, tip and axis, and nothing changes)."""
        self._require_started()
        with self._events.lock:
            self._slot.require_jtac("stream()")
            options = {
                "chunk_capacity": int(chunk_capacity),
                "blend_window_s": float(blend_window_s),
                "timeout_s": float(timeout_s),
                "ensemble_weight": float(ensemble_weight),
            }
            stop_accelerations = self._values["stop_accelerations"]
            law = stream_law(
                self._loop,
                self.update_rate_hz,
                stop_accelerations,
                options,
                admittance,
                thresholds,
                joint_damping_per_s,
            )
            stream = Stream(self, law)
            self._slot.hand_to(StreamTenant(stream), law)
            return stream

    def _end_stream(self, stream: Stream, *, wait: bool = True) -> None:
        """Stream.close(): the slot back to the JTAC by the hand-over rule; with `wait`, returns once
        the JTAC runs again (the next goal and tare are accepted)."""
        tenant = self._slot.tenant
        if isinstance(tenant, StreamTenant) and tenant.stream is stream:
            self._slot.give_back(tenant, wait=wait, what="closing the stream")

    def use_law(
        self, law: laws.CompiledLaw | None, params: Sequence[float] | np.ndarray | None = None
    ) -> None:
        """Switches the loop to a custom law compiled by ``jtac_py.laws.compile()`` (from a stream:
        RuntimeError; from another law: at once); ``use_law(None)`` returns to trajectory execution
        and waits until the JTAC runs again. Both by the hand-over rule (docs/python_api.md): the
        running law brakes to rest within stop_accelerations, the next starts from that command.
        The law starts with its memory zeroed and `params` (default ``law.params``; ValueError for
        the wrong size or a non-finite value); its TCP pose and Jacobian are this controller's URDF's.
        A law that fails (a non-zero code, a non-finite command, an exception) stops the arm in
        minimum time and holds it: ``law_error`` says why (logged too; kept after use_law(None)
        until the next use_law)."""
        self._require_started()
        current = self._law_tenant()
        if law is None:
            if current is not None:
                self._slot.give_back(current, wait=True, what="use_law(None)")
            return
        with self._events.lock:
            if current is None:
                self._slot.require_jtac("use_law")
            tenant = CustomLawTenant.create(law, params, self.hardware, self._values, self.joint_names)
            self._slot.hand_to(tenant, tenant.native)
            tenant.claim()
            self._last_law = tenant

    def _law_tenant(self) -> CustomLawTenant | None:
        tenant = self._slot.tenant
        return tenant if isinstance(tenant, CustomLawTenant) else None

    @property
    def law(self) -> laws.CompiledLaw | None:
        """The custom law in use (use_law), None while the JTAC runs."""
        tenant = self._law_tenant()
        return None if tenant is None else tenant.law

    @property
    def law_error(self) -> str | None:
        """Why the custom law stopped the arm (function name, code, or joint and non-finite value),
        None while it runs without error. Kept after use_law(None) until the next use_law()."""
        return None if self._last_law is None else self._last_law.error()

    @property
    def law_calls(self) -> dict[str, float]:
        """The custom law's {calls, mean_ns, max_ns} (steady clock around each call); {} without one."""
        tenant = self._law_tenant()
        return {} if tenant is None else tenant.calls()

    # ---------------------------------------------------------------------------- parameters
    def set_parameters(self, updates: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        """Changes run-time parameters (flat names; read-only ones are refused), applied at the next
        controller cycle. ParameterError names the parameter, value and rule; a time-scale change is
        refused while a stream or custom law holds the arm (it applies to goals)."""
        changes = {**(updates or {}), **kwargs}
        new_values = self._schema.validate_update(self._values, changes)
        in_use = self._slot.in_use()
        if in_use and new_values["time_scale_percentage"] != self.time_scale:
            message = (
                f"time_scale_percentage: refused while {in_use}: the time scale applies to goals; "
                f"it stays {self.time_scale:g} %"
            )
            _log.warning(message)
            raise parameters.ParameterError(message)
        message = self._core.set_parameters(jtac_config.native_parameters(new_values))
        if message:
            raise parameters.ParameterError(message)
        self._values = new_values
        self._loop.set_stop_accelerations(list(new_values["stop_accelerations"]))

    @property
    def time_scale(self) -> float:
        """Trajectory speed [percent of nominal]; setting it ramps the speed (time_scale_filter_constant)."""
        return float(self._values["time_scale_percentage"])

    @time_scale.setter
    def time_scale(self, percent: float) -> None:
        self.set_parameters(time_scale_percentage=percent)

    # ---------------------------------------------------------------------------- sensors
    def zero_fts(self, sensor_frame: str | None = None, *, timeout: float = 2.0) -> TareResult:
        """Tares the sensor of `sensor_frame` (default the first tip's); waits for the outcome.

        ValueError for an unknown frame; RuntimeError when the core refuses (e.g. a goal is executing)
        or a stream or custom law holds the arm (only the JTAC tares, between goals, at rest).
        """
        self._require_started()
        frames = self.sensor_frames
        frame = sensor_frame if sensor_frame is not None else (frames[0] if frames else "")
        tip = self._tip(frame, "sensor_frame")
        if self._slot.in_use():
            raise RuntimeError(
                f"zero_fts({frame}): tare refused: {self._slot.in_use()}; zero the sensor with the arm "
                "idle and unloaded, before opening it or after closing it"
            )
        if self._lockstep and self._loop.snapshot() is None:
            self.step(self._loop.packets_per_cycle)  # the controller runs once, as in real time
        future: concurrent.futures.Future[TareResult] = concurrent.futures.Future()
        with self._events.lock:
            self._events.tares[tip] = future
        message = self._core.request_zero_fts(tip)
        if message:
            with self._events.lock:
                self._events.tares.pop(tip, None)
            raise RuntimeError(f"zero_fts({frame}): {message}")
        step_until = self._step_until if self._lockstep else None
        return wait_for(future, timeout, step_until, f"zero_fts({frame}) not done")

    def feed_wrench(self, sensor_frame: str, wrench_n_nm: Sequence[float]) -> None:
        """Hands over the newest reading of an external force/torque sensor: the tip of `sensor_frame`
        whose sensor is not the arm's (wrench_sources "external"). wrench_n_nm: [Fx Fy Fz Tx Ty Tz]
        [N, N·m] in the sensor frame's axes, about its origin; held until the next reading; a
        non-finite value is a sensor fault. Never waits; any thread. ValueError for an unknown frame,
        a tip that does not read an external sensor or a wrench that is not 6 numbers."""
        tip = self._tip(sensor_frame, "sensor_frame")
        source = self._wrench_sources[tip]
        if source != "external":
            reason = "reads the arm's own sensor" if source == "device" else "has no force/torque sensor"
            raise ValueError(
                f"feed_wrench({sensor_frame}): tip {tip} {reason}; only a tip whose sensor is not the "
                "arm's (ft_sensors.<frame>.name) takes readings"
            )
        wrench = np.asarray(wrench_n_nm, dtype=float).reshape(-1)
        if wrench.shape != (6,):
            raise ValueError(f"feed_wrench({sensor_frame}): wrench has {wrench.size} values, expected 6")
        self._loop.feed_wrench(tip, wrench)

    def _tip(self, frame: str, name: str) -> int:
        frames = self.sensor_frames
        if frame not in frames:
            raise ValueError(f"{name} '{frame}' is not a sensor frame of this controller: {frames}")
        return frames.index(frame)

    # ---------------------------------------------------------------------------- state
    @property
    def state(self) -> ControllerState | None:
        """The last controller cycle; None before the first."""
        snap = self._loop.snapshot()
        if snap is None:
            return None
        for name in _TIP_FIELDS:
            snap[name] = snap[name][: self.num_tips]
        return ControllerState(**snap)

    def controller_time(self) -> float:
        """The controller clock [s]: the robot time of the last cycle's state (goals' start times and
        results are on this clock)."""
        if self._lockstep and self._loop.snapshot() is None:
            self.step(self._loop.packets_per_cycle)
        snap = self._loop.snapshot()
        if snap is None:
            raise RuntimeError("no controller cycle yet: call start() first")
        return float(snap["time"])

    def timing(self) -> dict[str, Any]:
        """Loop timing: the controller's counters, the hardware thread's packet counters and dEXT."""
        return {
            "loop": self._loop.timing(),
            "hardware": self._interface.counters(),
            "dext": self._interface.latency(),
        }

    def packet_trace(self) -> dict[str, np.ndarray]:
        """The hardware thread's flight recorder: its last 256 packets (oldest first) as column arrays
        (see _native.AsyncInterface.packet_trace). After the thread stopped — stop(), or a device error
        such as a reflex, where it shows what the robot was sent just before. Raises while it runs."""
        return self._interface.packet_trace()

    def device_command(self) -> tuple[np.ndarray, np.ndarray]:
        """(q_d [rad], dq_d [rad/s]) of the last 1 kHz packet written to the robot, after rate matching
        and the limiter. Lockstep (or stopped) only: in real time the hardware thread owns it."""
        return self._interface.last_command()

    def record(self, fields: Iterable[str] | None = None, path: str | Path | None = None) -> Recording:
        """Starts recording every controller cycle; use as a context manager or call stop().

        fields: a subset of RECORD_FIELDS (default all). path: .npz written by stop().
        """
        chosen = tuple(RECORD_FIELDS if fields is None else fields)
        unknown = [f for f in chosen if f not in RECORD_FIELDS]
        if unknown:
            raise ValueError(f"record: unknown field(s) {unknown}; known: {list(RECORD_FIELDS)}")
        return self._events.add_recording(chosen, path)

    # ---------------------------------------------------------------------------- internals
    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("the controller is not started: call start() (or use it as a context manager)")

    def _wait_a_cycle(self) -> None:
        if self._lockstep:
            self.step(self._loop.packets_per_cycle)
        else:
            time.sleep(0.001)

    def _sim_time(self) -> float:
        return self._loop.packets * 0.001

    def _step_until(self, done: Any, timeout: float | None) -> None:
        deadline = None if timeout is None else self._loop.packets + math.ceil(timeout * 1000.0)
        while not done():
            if deadline is not None and self._loop.packets >= deadline:
                return
            status = self.step(_LOCKSTEP_CHUNK)
            if status != _native.DeviceStatus.OK:
                raise RuntimeError(f"the simulated arm stopped: {status.name}")

    def __repr__(self) -> str:
        state = "started" if self._started else "stopped"
        return f"Controller({self.hardware!r}, update_rate={self.update_rate_hz} Hz, {state})"
