"""The Python API without ROS: ``Controller(hardware, config)`` over the native control loop.

Threads (what runs where):

- the hardware real-time thread (C++, 1 kHz): reads the robot, rate-matches the newest controller
  command, writes; never waits on anything else;
- the controller thread (C++, ``update_rate``): runs the JTAC core and hands its command over;
- this module (Python): submits goals, cancels, changes parameters and tares through the core's
  preallocated mailboxes, and a *pump* thread takes the core's events (goal results, tares) and the
  recorded rows about every 10 ms. Nothing native ever waits for Python: a Python thread that holds
  the GIL or an event loop that blocks delays only this module's bookkeeping (a recording's rows wait
  in the native ring, which holds ``record_buffer_cycles`` cycles, and drop, counted, beyond).

With a lockstep ``SimulatedArm`` there are no threads at all: ``step()`` advances the robot by 1 ms
packets on a virtual clock (and runs the controller cycles that fall due), and the blocking calls
(``follow()``, ``GoalHandle.result()``, ``zero_fts()``) step the simulation themselves until they
are done, so a script reads the same in both modes.

Inputs are checked by the same code the ROS node uses: parameters by the schema of ``params/``
(``jtac_py.config`` / ``jtac_py.parameters``, ParameterError naming parameter, value and rule), goals
by the core's validation (a rejected goal's result is INVALID_GOAL / INVALID_JOINTS with a message
naming the field, the joint and the value). A rejected goal is a result, not an exception, exactly as
an action client sees it; use ``result.ok`` or ``result.raise_for_code()``.

Length: over 600 lines because Controller is the API's one entry point (start/stop, goals, streams,
custom laws, tares, recording, the pump); goal building (goals.py), the cycle record and recordings
(recording.py), the configuration (config.py) and the arms (hardware.py) live apart.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import threading
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jtac_py import _native, goals, laws, parameters, robots
from jtac_py import config as jtac_config
from jtac_py.arms import build_arm
from jtac_py.goals import Trajectory
from jtac_py.hardware import Arm
from jtac_py.recording import _TIP_FIELDS, RECORD_FIELDS, ControllerState, Recording
from jtac_py.streaming import Stream

__all__ = [
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

#: Fraction of the robot's published velocity/acceleration/jerk limits the hardware thread's final
#: limiter allows (the rest is margin for the robot's own reflexes).
LIMIT_MARGIN = 0.8

_PUMP_PERIOD_S = 0.010  # the native ring holds seconds of rows; 10 ms keeps latency of results low
_LOCKSTEP_CHUNK = 10  # packets stepped between two pumps while a blocking call steps the simulation


# ================================================================================ results and goals


class GoalError(RuntimeError):
    """A goal that did not succeed, raised by GoalResult.raise_for_code()."""

    def __init__(self, result: GoalResult) -> None:
        super().__init__(f"goal {result.goal_id}: {result.code.name} ({int(result.code)}): {result.message}")
        self.result = result


@dataclass(frozen=True)
class GoalResult:
    """How a goal ended: the result code (MoveIt Pro's numbers) and the core's message."""

    code: Any  # _native.ResultCode
    message: str
    goal_id: int
    canceled: bool = False
    start_time_s: float | None = None  # controller time the trajectory started
    end_time_s: float | None = None  # controller time of the result (the arm at rest)
    stop_time_s: float | None = None  # when a stop began (path/threshold/cancel …), if one did
    predicted_stop_duration_s: float | None = None  # the stop's predicted time to standstill

    @property
    def ok(self) -> bool:
        return self.code == ResultCode.SUCCESSFUL and not self.canceled

    @property
    def error_code(self) -> int:
        return int(self.code)

    def raise_for_code(self) -> GoalResult:
        if not self.ok:
            raise GoalError(self)
        return self


@dataclass(frozen=True)
class TareResult:
    """Outcome of zero_fts(): ok, the core's message, and |offset force| [N]."""

    ok: bool
    message: str
    offset_force_n: float


# ================================================================================ goal handles


class GoalHandle:
    """A submitted goal: result(timeout), done(), cancel(); awaitable through Controller.follow_async."""

    def __init__(self, controller: Controller, goal_id: int) -> None:
        self._controller = controller
        self.goal_id = goal_id
        self._future: concurrent.futures.Future[GoalResult] = concurrent.futures.Future()
        self.start_time_s: float | None = None
        self.stop_time_s: float | None = None
        self.predicted_stop_duration_s: float | None = None
        self.events: list[Any] = []
        # What goal intake accepted but warned about (an admittance axis with little damping); it is
        # also logged and appended to the result's message.
        self.warning = ""

    def done(self) -> bool:
        return self._future.done()

    def cancel(self) -> None:
        """Ask the controller to stop this goal (a minimum-time stop; the result follows at rest)."""
        if not self.done():
            self._controller._core.request_cancel(self.goal_id)

    def result(self, timeout: float | None = None) -> GoalResult:
        """The result; waits up to timeout seconds (lockstep: of simulated time, stepping the arm).

        Raises TimeoutError when it is not there in time (the goal keeps running).
        """
        if self._controller._lockstep:
            self._controller._step_until(self._future.done, timeout)
            if not self._future.done():
                raise TimeoutError(f"goal {self.goal_id} not finished after {timeout} s (simulated)")
            return self._future.result()
        try:
            return self._future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"goal {self.goal_id} not finished after {timeout} s") from None

    def _resolve(self, result: GoalResult) -> None:
        if not self._future.done():
            self._future.set_result(result)


# ================================================================================ the controller


class Controller:
    """Joint trajectory execution with Cartesian admittance on a native control loop.

    Args:
        hardware: a SimulatedArm (real time or lockstep) or a FrankaArm; None = the configuration's
            `hardware`: SimulatedArm(robot), or FrankaArm(robot_ip) for `franka`.
        config: parameter values (flat dotted names, nested dict) or a ROS params file; see
            docs/parameters.md. Validated by the schema (ParameterError names parameter and value).
        **overrides: parameter values on top of config.
    """

    def __init__(self, hardware: Arm | None = None, config: Any = None, **overrides: Any) -> None:
        given = jtac_config.resolve(config, **overrides)
        if hardware is None:
            hardware = build_arm(given)
        # The arm decides the robot (hence joint and frame names) and, having a sensor, the F/T sensor
        # name, unless the caller set them on purpose.
        implied = {}
        set_by_caller = set(overrides) | _keys(config)
        if given["robot"] != hardware.robot and "robot" not in set_by_caller:
            implied["robot"] = hardware.robot
        if not given["ft_sensor_name"] and "ft_sensor_name" not in set_by_caller:
            implied["ft_sensor_name"] = hardware.ft_sensor_name
        if implied:
            given = jtac_config.resolve(config, **{**implied, **overrides})
        self.hardware = hardware
        self._values = given
        self._schema = parameters.default_schema()
        self._lockstep = hardware.lockstep
        self._core = jtac_config.make_controller(given, urdf_xml=hardware.urdf_xml)
        priority = int(given["realtime_priority"])
        cpus = list(given["cpu_affinity"])
        spec = robots.robot_spec(hardware.robot)
        self._interface = _native.AsyncInterface(
            hardware.device,
            limit_margin=LIMIT_MARGIN,
            fifo_priority=priority,
            cpu=cpus[0] if cpus else -1,
            dq_max_rad_s=spec.dq_max_rad_s,
            ddq_max_rad_s2=spec.ddq_max_rad_s2,
            dddq_max_rad_s3=spec.dddq_max_rad_s3,
            late_commands=hardware.late_commands,
            # The FR3's position-based velocity envelope (franka_hw/README.md); the Panda has none.
            position_based_velocity_limits=spec.velocity_bound_coeffs is not None,
        )
        self._loop = _native.ControlLoop(
            self._interface,
            self._core,
            update_rate_hz=int(given["update_rate"]),
            # Below the hardware thread: a late controller must never hold a robot packet off.
            fifo_priority=max(0, priority - 10) if priority > 0 else 0,
            cpu=cpus[-1] if cpus else -1,
            record_capacity=int(given["record_buffer_cycles"]),
        )
        # Every law's brakes use the stop_accelerations in force (the JTAC reads its own parameter).
        self._loop.set_stop_accelerations(list(given["stop_accelerations"]))
        # Each tip's wrench: the arm's sensor, an external one (feed_wrench) or none (config.py).
        self._wrench_sources = jtac_config.wrench_sources(given, hardware.ft_sensor_name)
        self._loop.set_wrench_sources(self._wrench_sources)
        self._lock = threading.RLock()  # goal table, recordings, pump
        self._goals: dict[int, GoalHandle] = {}
        self._tares: dict[int, concurrent.futures.Future[TareResult]] = {}
        self._recordings: list[Recording] = []
        self._stream: Stream | None = None
        # Why the JTAC last handed the arm over (a goal it ended says so in its result).
        self._handover_reason = ""
        # A compiled custom law in force (use_law), its native side, and every law the loop has held:
        # the loop may call a law's code until the cycle after the switch away, so none is freed.
        self._law: laws.CompiledLaw | None = None
        self._native_law: Any = None
        self._laws_used: list[Any] = []
        self._law_error: str | None = None
        self._law_error_logged = False
        self._started = False
        self._pump_stop = threading.Event()
        self._pump_thread: threading.Thread | None = None
        self.events: list[Any] = []  # every core event since start, oldest first (bounded)
        self._hardware_error: str | None = None  # why the hardware thread stopped by itself

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
        return self._hardware_error

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
            self._pump_stop.clear()
            self._pump_thread = threading.Thread(target=self._pump_loop, name="jtac-pump", daemon=True)
            self._pump_thread.start()
            self._wait_for_first_cycle(cycles_before, timeout_s=2.0)
        return self

    def stop(self) -> None:
        """Stops both threads; a goal still running ends ABORTED (INVALID_STATE). A FrankaArm's motion
        ends with them (finish_motion()). Idempotent."""
        if not self._started:
            return
        if not self._lockstep:
            # The pump first: it may stop the controller thread itself (_check_hardware).
            self._pump_stop.set()
            if self._pump_thread is not None:
                self._pump_thread.join()
                self._pump_thread = None
            self._check_hardware()
        self._loop.stop()
        if not self._lockstep:
            self._interface.stop()
            self.hardware.finish_motion()  # at once: a real arm without commands aborts after 20 ms
        self._pump()
        for recording in list(self._recordings):
            recording.stop()
        # The loop is stopped: the slot goes back to the JTAC without a hand-over (the next start()
        # begins from the robot's echo at rest).
        if self._stream is not None:
            self._end_stream(self._stream, wait=False)
        if self._law is not None:
            self._end_law(wait=False)
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
        self._pump()
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
        if not wait:
            return handle
        return handle.result(timeout)

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
        try:
            if self._lockstep:
                deadline = None if timeout is None else self._sim_time() + timeout
                while not handle.done():
                    if deadline is not None and self._sim_time() >= deadline:
                        message = f"goal {handle.goal_id} not finished after {timeout} s (simulated)"
                        raise TimeoutError(message)
                    self.step(_LOCKSTEP_CHUNK)
                    await asyncio.sleep(0)
                return handle._future.result()
            return await asyncio.wait_for(asyncio.wrap_future(handle._future), timeout)
        except asyncio.CancelledError:
            handle.cancel()
            raise
        except TimeoutError:
            raise TimeoutError(f"goal {handle.goal_id} not finished after {timeout} s") from None

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
        """Switches the loop from trajectory execution to following a streamed target (teleoperation,
        a policy): returns a Stream whose send() hands over single targets and send_chunk() action
        chunks. Returns at once; the switch follows the hand-over rule (docs/python_api.md, "Switching
        between goals, streams and laws"): a goal still moving brakes to rest within
        stop_accelerations and ends ABORTED (INVALID_STATE, "handed over ... a stream was opened"; a
        goal already braking for a cancel ends CANCELED), then the stream starts from that command at
        rest and catches up with its first inputs within stop_accelerations. Inputs sent
        meanwhile are taken at the stream's first cycle. Goals, tares and time_scale changes are
        refused while the stream is open.

        blend_window_s: shortest blend from the executing future into a new chunk [s]; timeout_s: brake
        when no input came for this long [s]; ensemble_weight: weight of the newest chunk where chunks
        overlap (1 = none; e.g. 0.3 averages with exponential weights); chunk_capacity: most points in
        one chunk. Braking uses the controller's stop_accelerations.

        admittance, thresholds, joint_damping_per_s: a compliant axis set for the stream, as follow()
        takes them for a goal (same types and defaults: damping critical, selected_axes all six when
        mass and stiffness are given); None (default) = the stream without admittance. The set is
        validated as a goal's, stability at update_rate included: ValueError with the same message
        (naming field, tip and axis), and nothing changes. With it, the stream's command is the
        reference of the admittance, the thresholds are watched (exceeded: the stream brakes and
        stops, Stream.stop_code / stop_message), record rows carry the wrenches and the joint offset as
        for goals, and zero_fts() is refused while the stream is open."""
        self._require_started()
        with self._lock:
            if self._stream is not None:
                raise RuntimeError("a stream is already open: close it first")
            if self._law is not None:
                raise RuntimeError(f"a custom law is in use ({self._law.name}): call use_law(None) first")
            compliance: dict[str, Any] = {}
            if admittance is not None or thresholds is not None or joint_damping_per_s:
                compliance = {
                    "loop": self._loop,
                    "tips": goals.tip_goals(admittance),
                    "joint_damping_per_s": float(joint_damping_per_s),
                    "absolute_force_torque_threshold": None if thresholds is None else list(thresholds),
                }
            law = _native.StreamLaw(
                1.0 / self.update_rate_hz,
                chunk_capacity=int(chunk_capacity),
                blend_window_s=float(blend_window_s),
                timeout_s=float(timeout_s),
                stop_accelerations_rad_s2=list(self._values["stop_accelerations"]),
                ensemble_weight=float(ensemble_weight),
                **compliance,
            )
            if law.admittance_warning:
                _log.warning("stream admittance accepted with a warning: %s", law.admittance_warning)
            self._handover_reason = "a stream was opened (Controller.stream())"
            self._loop.use_law(law)
            self._stream = Stream(self, law)
            return self._stream

    def _end_stream(self, stream: Stream, *, wait: bool = True) -> None:
        """The slot back to the JTAC: the stream brakes to rest first (hand-over), and with `wait`
        this returns once the JTAC runs again, so the next goal and tare are accepted."""
        with self._lock:
            if self._stream is not stream:
                return
            self._loop.use_law(None)
        if wait:
            self._wait_for_handover(lambda: self._loop.jtac_active, "closing the stream")
        with self._lock:
            if self._stream is stream:
                self._stream = None

    def _end_law(self, *, wait: bool = True) -> None:
        """use_law(None): the law brakes to rest (hand-over) and the JTAC takes over."""
        with self._lock:
            if self._law is None:
                return
            self._law_error = self.law_error
            self._loop.use_law(None)
        if wait:
            self._wait_for_handover(lambda: self._loop.jtac_active, "use_law(None)")
        with self._lock:
            if self._law is not None:
                self._law._native = None
            self._law = None
            self._native_law = None

    def _wait_for_handover(self, done: Any, what: str) -> None:
        """Until the hand-over completed (`done()`): lockstep steps the arm, real time polls. The brake
        takes at most max|dq_cmd| / min(stop_accelerations); a loop that stopped (a hardware error)
        ends the wait, as does twice that bound plus 2 s (RuntimeError)."""
        if not self._started:
            return
        state = self.state
        speed = float(np.max(np.abs(state.dq_cmd))) if state is not None else 0.0
        bound_s = 2.0 + 2.0 * speed / float(min(self._values["stop_accelerations"]))
        if self._lockstep:
            self._step_until(done, bound_s)
        else:
            deadline = time.monotonic() + bound_s
            while not done() and time.monotonic() < deadline and self._loop.running:
                time.sleep(0.001)
        if not done() and (self._lockstep or self._loop.running):
            raise RuntimeError(f"{what}: the hand-over did not complete within {bound_s:.1f} s")

    def use_law(
        self, law: laws.CompiledLaw | None, params: Sequence[float] | np.ndarray | None = None
    ) -> None:
        """Switches the loop to a custom control law compiled by ``jtac_py.laws.compile()``;
        ``use_law(None)`` returns to trajectory execution (the JTAC).

        Both follow the hand-over rule (docs/python_api.md, "Switching between goals, streams and
        laws"): a goal still moving brakes to rest within stop_accelerations and ends ABORTED
        (INVALID_STATE, "handed over ... the custom law was put in use"), then the law starts from that
        command; ``use_law(None)`` stops calling the law, brakes its command to rest and returns once
        the JTAC runs again (the next goal and tare are accepted). Goals, tares and time_scale changes
        are refused while the law is in use, as while a stream is open. The law starts with its memory
        zeroed and `params` (default: the law's current set, ``law.params``); the TCP pose and
        Jacobian it sees are those of this controller's URDF (base_frame to the robot's TCP frame).

        A law that returns a non-zero code, commands a non-finite value or raises stops the arm in minimum
        time (``stop_accelerations``) and holds it: ``law_error`` says why (logged too; it stays after
        use_law(None), the next use_law(law) clears it). RuntimeError while a stream is open; ValueError
        for params of the wrong size or non-finite (naming index and value)."""
        self._require_started()
        with self._lock:
            if law is None:
                if self._law is not None:
                    self._end_law()
                return
            if not isinstance(law, laws.CompiledLaw):
                raise TypeError(
                    f"use_law: expected a jtac_py.laws.CompiledLaw or None, got {type(law).__name__}"
                )
            if self._stream is not None:
                raise RuntimeError("use_law: a stream is open (Controller.stream()): close it first")
            values = law.params if params is None else laws._as_params(params, law.n_params, law.name)
            spec = robots.robot_spec(self.hardware.robot)
            native = _native.CallbackLaw(
                law.address,
                name=law.name,
                num_params=law.n_params,
                num_memory=law.n_memory,
                params=values,
                stop_accelerations_rad_s2=list(self._values["stop_accelerations"]),
                urdf_xml=self.hardware.urdf_xml,
                base_frame=self._values["base_frame"],
                joint_names=self.joint_names,
                tcp_frame=spec.tcp_frame,
            )
            if self._law is not None:
                self._law._native = None
            law.params = values
            law._native = native
            self._laws_used.append((law, native))
            self._handover_reason = f"the custom law '{law.name}' was put in use (Controller.use_law())"
            self._loop.use_law(native)
            self._law = law
            self._native_law = native
            self._law_error = None
            self._law_error_logged = False

    @property
    def law(self) -> laws.CompiledLaw | None:
        """The custom law in use (use_law), None while the JTAC runs."""
        return self._law

    @property
    def law_error(self) -> str | None:
        """Why the custom law stopped the arm (the law's function name, its code, or the joint and the
        non-finite value it commanded), None while it runs without error. Kept after use_law(None) until
        the next use_law()."""
        if self._native_law is not None:
            error = self._native_law.error
            return None if error is None else str(error["message"])
        return self._law_error

    @property
    def law_calls(self) -> dict[str, float]:
        """The custom law's calls and the time spent in its function (steady clock around each call):
        {calls, mean_ns, max_ns}; empty while none is in use."""
        native = self._native_law
        if native is None:
            return {}
        calls = int(native.calls)
        return {
            "calls": calls,
            "mean_ns": native.call_ns_total / calls if calls else math.nan,
            "max_ns": float(native.call_ns_max),
        }

    def cancel(self) -> None:
        """Cancels every goal not finished yet (each stops in minimum time; results follow)."""
        with self._lock:
            handles = [h for h in self._goals.values() if not h.done()]
        for handle in handles:
            handle.cancel()

    # ---------------------------------------------------------------------------- parameters
    def set_parameters(self, updates: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        """Changes run-time parameters (flat names; read-only ones are refused), applied at the next
        controller cycle. ParameterError names the parameter, value and rule."""
        changes = {**(updates or {}), **kwargs}
        new_values = self._schema.validate_update(self._values, changes)
        if "time_scale_percentage" in changes and new_values["time_scale_percentage"] != self.time_scale:
            holder = self._slot_holder()
            if holder:
                # Streams and laws run on the controller clock: a trajectory's time scale has no meaning
                # for them, and applying it later to the next goal would surprise.
                message = (
                    f"time_scale_percentage: refused while {holder}: the time scale applies to goals; "
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

        ValueError for an unknown frame; RuntimeError when the core refuses (e.g. a goal is executing).
        """
        self._require_started()
        frames = self.sensor_frames
        frame = sensor_frame if sensor_frame is not None else (frames[0] if frames else "")
        if frame not in frames:
            raise ValueError(f"sensor_frame '{frame}' is not a sensor frame of this controller: {frames}")
        tip = frames.index(frame)
        holder = self._slot_holder()
        if holder:
            # Only the JTAC tares (between goals, at rest); nothing else would answer the request.
            raise RuntimeError(
                f"zero_fts({frame}): tare refused: {holder}; zero the sensor with the arm idle and "
                "unloaded, before opening it or after closing it"
            )
        if self._lockstep and self._loop.snapshot() is None:
            self.step(self._loop.packets_per_cycle)  # the controller runs once, as in real time
        future: concurrent.futures.Future[TareResult] = concurrent.futures.Future()
        with self._lock:
            self._tares[tip] = future
        message = self._core.request_zero_fts(tip)
        if message:
            with self._lock:
                self._tares.pop(tip, None)
            raise RuntimeError(f"zero_fts({frame}): {message}")
        if self._lockstep:
            self._step_until(future.done, timeout)
            if not future.done():
                raise TimeoutError(f"zero_fts({frame}) not done after {timeout} s (simulated)")
            return future.result()
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise TimeoutError(f"zero_fts({frame}) not done after {timeout} s") from None

    def feed_wrench(self, sensor_frame: str, wrench_n_nm: Sequence[float]) -> None:
        """Hands over the newest reading of an external force/torque sensor: the tip of `sensor_frame`
        whose sensor is not the arm's (wrench_sources "external").

        wrench_n_nm: [Fx Fy Fz Tx Ty Tz] [N, N·m] in the sensor frame's axes, about its origin (the
        wrench the tool side exerts on the sensor). The next controller cycle takes it and holds it
        until the next reading; a non-finite value is a sensor fault (a running goal stops with
        ADMITTANCE_ERROR). Never waits on the controller; any thread. ValueError for an unknown
        frame, a tip that does not read an external sensor or a wrench that is not 6 numbers.
        """
        frames = self.sensor_frames
        if sensor_frame not in frames:
            raise ValueError(
                f"sensor_frame '{sensor_frame}' is not a sensor frame of this controller: {frames}"
            )
        tip = frames.index(sensor_frame)
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

    # ---------------------------------------------------------------------------- state
    @property
    def state(self) -> ControllerState | None:
        """The last controller cycle; None before the first."""
        snap = self._loop.snapshot()
        if snap is None:
            return None
        n = self.num_tips
        for name in _TIP_FIELDS:
            snap[name] = snap[name][:n]
        return ControllerState(**snap)

    def timing(self) -> dict[str, Any]:
        """Loop timing: the controller's counters, the hardware thread's packet counters and dEXT."""
        return {
            "loop": self._loop.timing(),
            "hardware": self._interface.counters(),
            "dext": self._interface.latency(),
        }

    def packet_trace(self) -> dict[str, np.ndarray]:
        """The hardware thread's flight recorder: its last 256 packets (oldest first) as column arrays
        (packet, tick, read_ns, write_ns, step_periods, flags, q_d_echo, q_cmd, dq_cmd; see
        _native.AsyncInterface.packet_trace). After the thread stopped — stop(), or a device error such
        as a reflex, where it shows what the robot was sent just before. Raises while it runs."""
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
        with self._lock:
            if not self._recordings:
                self._loop.drain()  # rows of an earlier recording's tail belong to nobody
                self._loop.start_recording()
            recording = Recording(self, chosen, path)
            self._recordings.append(recording)
        return recording

    # ---------------------------------------------------------------------------- internals
    def _slot_holder(self) -> str:
        """What holds the loop's law slot instead of the JTAC, in words ("" when the JTAC runs)."""
        if self._stream is not None:
            kind = "a stream with admittance" if self._stream.compliant else "a stream"
            return f"{kind} is open (Controller.stream())"
        if self._law is not None:
            return f"the custom law '{self._law.name}' is in use (Controller.use_law())"
        return ""

    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("the controller is not started: call start() (or use it as a context manager)")

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

    def _wait_for_first_cycle(self, cycles_before: int, timeout_s: float) -> None:
        """Until the controller thread has run a cycle of this start (after a restart the snapshot
        is still the last cycle before the stop)."""
        deadline = time.monotonic() + timeout_s
        while self._loop.timing()["cycles"] <= cycles_before:
            if time.monotonic() > deadline:
                error = self.hardware.last_error
                raise RuntimeError(
                    f"no controller cycle within {timeout_s} s of start() "
                    f"(hardware: {self._interface.exit_status.name}{': ' + error if error else ''})"
                )
            time.sleep(0.001)

    def controller_time(self) -> float:
        """The controller clock [s]: the robot time of the last cycle's state (goals' start times and
        results are on this clock)."""
        snap = self._loop.snapshot()
        if snap is None:
            if self._lockstep:
                self.step(self._loop.packets_per_cycle)
                snap = self._loop.snapshot()
            if snap is None:
                raise RuntimeError("no controller cycle yet: call start() first")
        return float(snap["time"])

    def _submit(
        self,
        trajectory: Any,
        admittance: Any,
        tolerances: Mapping[str, Any] | None,
        thresholds: Sequence[float] | None,
        joint_damping_per_s: float,
    ) -> GoalHandle:
        self._require_started()
        goal = goals.jtac_goal(
            trajectory,
            self.joint_names,
            admittance=admittance,
            tolerances=tolerances,
            thresholds=thresholds,
            joint_damping_per_s=joint_damping_per_s,
        )
        return self.submit(goal)

    def submit(self, goal: Any) -> GoalHandle:
        """Submits a prepared core goal: a ``_native.JtacGoal`` (``jtac_py.goals.jtac_goal`` builds
        one with the defaults of follow(); the ROS node converts its messages to one), or, kept for
        compatibility, the dict of its constructor's arguments (trajectory, tips,
        joint_damping_per_s, absolute_force_torque_threshold; fields as given, no defaults). Returns
        the handle; a rejected goal's handle is already resolved with the core's code and message."""
        self._require_started()
        if isinstance(goal, Mapping):
            goal = _native.JtacGoal(**goal)
        if self._stream is not None:
            handle = GoalHandle(self, 0)
            message = "a stream is open (Controller.stream()): close it before sending goals"
            handle._resolve(GoalResult(ResultCode.INVALID_STATE, message, 0))
            return handle
        if self._law is not None:
            handle = GoalHandle(self, 0)
            message = f"a custom law is in use ({self._law.name}): call use_law(None) before sending goals"
            error = self.law_error
            if error:
                message = f"{message}; {error}"
            handle._resolve(GoalResult(ResultCode.INVALID_STATE, message, 0))
            return handle
        # Holding the lock from submission to registration: the pump must not see this goal's events
        # (a goal can end within a cycle: stitched away, or aborted at once) before its handle exists.
        with self._lock:
            for _attempt in range(1000):
                result = self._core.submit_goal(goal, self.controller_time())
                if not result.busy:
                    break
                # The previous goal is still in the mailbox: the controller takes it at its next cycle.
                if self._lockstep:
                    self.step(self._loop.packets_per_cycle)
                else:
                    time.sleep(0.001)
            handle = GoalHandle(self, result.goal_id)
            if result.code != ResultCode.SUCCESSFUL or result.busy:
                message = result.message or "the goal mailbox stayed busy"
                if self._hardware_error is not None:
                    message = f"{message} ({self._hardware_error})"
                handle._resolve(GoalResult(result.code, message, result.goal_id))
                return handle
            handle.warning = result.warning
            if result.warning:
                _log.warning("goal %d accepted with a warning: %s", result.goal_id, result.warning)
            self._goals[result.goal_id] = handle
        return handle

    def _end_recording(self, recording: Recording) -> None:
        with self._lock:
            self._pump()
            recording.dropped = self._loop.dropped_records - recording._dropped_at_start
            recording.active = False
            if recording in self._recordings:
                self._recordings.remove(recording)
            if not self._recordings:
                self._loop.stop_recording()

    def _pump_loop(self) -> None:
        while not self._pump_stop.wait(_PUMP_PERIOD_S):
            try:
                self._check_hardware()
                self._pump()
            except Exception as error:  # keep pumping: a lost pump would lose every later result
                warnings.warn(f"jtac pump: {error!r}", RuntimeWarning, stacklevel=1)

    def _check_hardware(self) -> None:
        """The hardware thread ended by itself (a device error, e.g. a libfranka reflex): stops the
        controller thread, which resolves the pending goals (INVALID_STATE), and keeps the reason, with
        the device's own message, for their results. The pump thread, or stop() once it has joined it."""
        if self._lockstep or self._hardware_error is not None or self._interface.running:
            return
        status = self._interface.exit_status
        if status == _native.DeviceStatus.OK:  # not started, or stopped by stop()
            return
        detail = self.hardware.last_error
        reason = f"the hardware thread stopped: {status.name}"
        self._hardware_error = f"{reason}: {detail}" if detail else reason
        self._loop.stop()

    def _pump(self) -> None:
        """Takes the core's events and the recorded rows (non-real-time side)."""
        with self._lock:
            if self._recordings:
                chunk = self._loop.drain()
                n = self.num_tips
                for name in _TIP_FIELDS:
                    chunk[name] = chunk[name][:, :n]
                if len(chunk["time"]):
                    for recording in self._recordings:
                        recording._append(chunk)
            for event in self._core.poll_events():
                self._on_event(event)
            if self._native_law is not None and not self._law_error_logged and self._native_law.failed:
                self._law_error_logged = True
                _log.error("custom law stopped the arm: %s", self.law_error)

    def _on_event(self, event: Any) -> None:
        self.events.append(event)
        if len(self.events) > 10000:
            del self.events[:5000]
        if event.type in (EventType.TARE_SUCCEEDED, EventType.TARE_FAILED):
            future = self._tares.pop(event.joint, None)
            if future is not None and not future.done():
                ok = event.type == EventType.TARE_SUCCEEDED
                future.set_result(TareResult(ok, event.message, float(event.value) if ok else math.nan))
            return
        if event.goal_id == 0 and event.type == EventType.GOAL_ABORTED:
            # A compliant stream's stop (threshold, non-finite reading or offset): the stream brakes.
            if self._stream is not None and self._stream.compliant:
                self._stream._stop_message = event.message
            _log.warning("stream stopped: %s", event.message)
            return
        handle = self._goals.get(event.goal_id)
        if handle is None:
            return
        handle.events.append(event)
        if event.type == EventType.GOAL_STARTED:
            handle.start_time_s = event.time_s
        elif event.type == EventType.STOP_STARTED:
            handle.stop_time_s = event.time_s
            handle.predicted_stop_duration_s = event.stop_duration_s
        elif event.type in (EventType.GOAL_SUCCEEDED, EventType.GOAL_ABORTED, EventType.GOAL_CANCELED):
            message = event.message
            if event.detail == _native.EventDetail.HANDED_OVER and self._handover_reason:
                message = f"{message}: {self._handover_reason}"
            if self._hardware_error is not None and event.type != EventType.GOAL_SUCCEEDED:
                message = f"{message} ({self._hardware_error})"
            if handle.warning:
                message = (
                    f"{message} (warning: {handle.warning})" if message else f"warning: {handle.warning}"
                )
            handle._resolve(
                GoalResult(
                    code=event.code,
                    message=message,
                    goal_id=event.goal_id,
                    canceled=event.type == EventType.GOAL_CANCELED,
                    start_time_s=handle.start_time_s,
                    end_time_s=event.time_s,
                    stop_time_s=handle.stop_time_s,
                    predicted_stop_duration_s=handle.predicted_stop_duration_s,
                )
            )
            del self._goals[event.goal_id]

    def __repr__(self) -> str:
        return (
            f"Controller({self.hardware!r}, update_rate={self.update_rate_hz} Hz, "
            f"{'started' if self._started else 'stopped'})"
        )


def _keys(config: Any) -> set[str]:
    return set(config) if isinstance(config, Mapping) else set()
