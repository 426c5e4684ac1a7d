"""The Python API without ROS: ``Controller(hardware, config)`` over the native control loop.

The hardware thread (C++, 1 kHz) and the controller thread (C++, ``update_rate``) never wait for
Python, which talks to them through preallocated mailboxes. On a lockstep ``SimulatedArm`` nothing
runs by itself: ``step()`` advances the robot 1 ms at a time and the blocking calls step it until
they are done. The Controller is the API's one entry point and delegates: arms (``arms``), native
parts (``assembly``), the loop's one law slot and its tenants (``law_slot``, ``stream_tenant``,
``custom_law``), goals (``goal_intake``, ``results``), events (``event_pump``), stepping
(``lockstep``), the read side (``loop_view``). Parameters are checked by the schema, goals by the core.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Mapping, Sequence
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
from jtac_py.gripper import Gripper
from jtac_py.hardware import Arm
from jtac_py.law_slot import LawSlot
from jtac_py.lockstep import PACKET_S, Stepper
from jtac_py.loop_view import LoopView
from jtac_py.recording import RECORD_FIELDS, ControllerState, Recording
from jtac_py.results import GoalError, GoalHandle, GoalResult, TareResult, await_result, wait_for
from jtac_py.stream_tenant import StreamTenant, stream_law
from jtac_py.streaming import Stream

_STREAM_DEFAULTS = _native.STREAM_DEFAULTS  # C++ ChunkStreamConfig's, not repeated in Python

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


class Controller(LoopView):
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
        parts = assemble(self._values, hardware)
        lock = threading.RLock()  # the goal table, the slot, recordings and the pump
        stepper = None
        if hardware.lockstep:
            stepper = Stepper(parts.loop, self._after_steps, self._require_started)
        step_until = stepper.step_until if stepper else None
        self._slot = LawSlot(parts.loop, lock, lambda: self._values["stop_accelerations"], step_until)
        super().__init__(
            parts, EventPump(parts.core, parts.loop, parts.interface, hardware, self._slot, lock), stepper
        )
        self.events = self._events.events  # every core event since start, oldest first (bounded)
        wait_a_cycle = stepper.step_cycle if stepper else lambda: time.sleep(0.001)
        self._intake = GoalIntake(
            self._core, self._slot, self._events, self.controller_time, wait_a_cycle, step_until
        )
        self._last_law: CustomLawTenant | None = None  # its error stays until the next use_law()
        self._device = hardware.device  # the one its hardware thread drives, for its life
        self._gripper = getattr(hardware, "gripper", None) or Gripper()  # no hand: NO_HAND results
        self._attach_gripper()
        self._started = False

    # ---------------------------------------------------------------------------- properties
    @property
    def values(self) -> dict[str, Any]:
        """The parameter values in force (a copy)."""
        return dict(self._values)

    @property
    def running(self) -> bool:
        return self._started

    @property
    def gripper(self) -> Gripper:
        """The arm's hand (``hardware.gripper``) on the controller's clock; lockstep: stepped with the
        arm, and its handles' result() steps the arm. Without a hand every command ends NO_HAND."""
        return self._gripper

    # ---------------------------------------------------------------------------- start / stop
    def start(self) -> Controller:
        """Starts the hardware thread and the controller thread (lockstep: arms step())."""
        if self._started:
            return self
        if self.hardware.device is not self._device:
            raise RuntimeError(
                f"{self.hardware!r} has a new device since this Controller was built (a FrankaArm serves "
                "one motion per device: stop() or automatic_error_recovery() gave it a new one): build a "
                "new Controller on the arm"
            )
        error = self.hardware.last_error
        if error:
            raise RuntimeError(
                f"the hardware stopped with an error: {error}; clear it first "
                "(FrankaArm.automatic_error_recovery())"
            )
        self._events.hardware_error = None  # a fault cleared (last_error None): the next is news
        if self._stepper is None:
            cycles_before = self._parts.start_threads(self.hardware, int(self._values["realtime_priority"]))
            self._started = True  # before the wait: a start that times out is stopped by stop()
            self._events.start_thread()
            self._parts.wait_for_cycle_after(cycles_before, self.hardware)
        else:
            self._interface.begin_lockstep_run()  # from the echo at rest, as a thread's start does
        self._started = True
        self._attach_gripper()
        self._gripper.open()  # a Franka Hand closed by an earlier stop() connects again
        return self

    def stop(self) -> None:
        """Stops both threads; a goal still running ends ABORTED (INVALID_STATE). A FrankaArm's motion
        ends with them (finish_motion()). Idempotent."""
        if not self._started:
            return
        if isinstance(self._slot.tenant, StreamTenant):
            self._slot.tenant.stop_gripper()  # the pumps below must not issue its pending target
        if self._stepper is not None:
            self._loop.stop()
        else:
            self._events.stop_thread()  # first: it may stop the controller thread itself
            self._parts.stop_threads(self.hardware)
        self._events.pump()
        for recording in list(self._events.recordings):
            recording.stop()
        self._gripper.close()  # its thread and link; the hand keeps what it holds
        self._gripper.set_clock(time.monotonic, robot_time=False)  # the arm's own again
        self._gripper.set_stepping(None, None)
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
        if self._stepper is None:
            raise RuntimeError("step() needs a lockstep SimulatedArm (clock='lockstep')")
        return self._stepper.step(packets)

    # ---------------------------------------------------------------------------- goals
    def follow(
        self,
        trajectory: Any,
        admittance: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        tolerances: Mapping[str, Any] | None = None,
        thresholds: Sequence[float] | None = None,
        *,
        joint_damping_per_s: float = goals.DEFAULT_JOINT_DAMPING_PER_S,
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
        joint_damping_per_s: float = goals.DEFAULT_JOINT_DAMPING_PER_S,
        timeout: float | None = None,
    ) -> GoalResult:
        """follow() for asyncio: awaits the result without blocking the event loop.

        A canceled task cancels the goal (the arm stops in minimum time).
        """
        handle = self._submit(trajectory, admittance, tolerances, thresholds, joint_damping_per_s)
        lockstep = (self._stepper.time_s, self._stepper.step_chunk) if self._stepper else None
        return await await_result(handle, timeout, lockstep)

    def _submit(self, trajectory: Any, *goal_options: Any) -> GoalHandle:
        self._require_started()
        return self._intake.submit_trajectory(trajectory, self.joint_names, *goal_options)

    def submit(self, goal: Any) -> GoalHandle:
        """Submits a prepared core goal: a ``jtac_py.AdmittanceGoal`` (``jtac_py.admittance_goal`` builds
        one with the defaults of follow(); the ROS node converts its messages to one), or, kept for
        compatibility, the dict of its constructor's arguments (trajectory, tips,
        joint_damping_per_s, absolute_force_torque_threshold; fields as given, no defaults;
        ``jtac_py.goals.as_jtac_goal`` types it). Returns the handle; a rejected goal's handle is
        already resolved with the core's code and message (INVALID_STATE while a stream or custom law
        holds the arm)."""
        self._require_started()
        return self._intake.submit(goal)

    def cancel(self) -> None:
        """Cancels every goal not finished yet (each stops in minimum time; results follow)."""
        self._events.cancel_goals()

    # ---------------------------------------------------------------------------- the law slot
    def stream(
        self,
        *,
        blend_window_s: float = _STREAM_DEFAULTS["blend_window_s"],
        timeout_s: float = _STREAM_DEFAULTS["timeout_s"],
        ensemble_weight: float = _STREAM_DEFAULTS["ensemble_weight"],
        chunk_capacity: int = _STREAM_DEFAULTS["chunk_capacity"],
        admittance: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        thresholds: Sequence[float] | None = None,
        joint_damping_per_s: float = goals.DEFAULT_JOINT_DAMPING_PER_S,
        gripper_units: str = "width_m",
        gripper_speed_m_s: float = 0.1,
        gripper_force_n: float = 20.0,
    ) -> Stream:
        """Switches the loop from trajectory execution to a streamed target (teleoperation, a policy):
        returns a Stream (send(), send_chunk(), close()) at once; the switch follows the hand-over
        rule (docs/python_api.md, "Switching between goals, streams and laws"). Goals, tares and
        time-scale changes are refused while it is open; RuntimeError while another stream or a
        custom law holds the arm.

        blend_window_s: shortest blend into a new chunk [s]; timeout_s: brake after this long without
        input [s]; ensemble_weight: the newest chunk's weight where chunks overlap (1 = none);
        chunk_capacity: most points in one chunk. admittance, thresholds, joint_damping_per_s: a
        compliant axis set, as follow() takes them (None: no admittance); validated as a goal's
        (ValueError naming field, tip and axis, and nothing changes). gripper_units: what the gripper
        values of send()/send_chunk() are, "width_m" [m] or "fraction" (0 open, 1 closed);
        gripper_speed_m_s, gripper_force_n: the speed [m/s] of the commands that follow them and the
        force [N] of a grasp (ValueError outside the hand's limits, and nothing changes)."""
        self._require_started()
        Stream.check_gripper_options(self.gripper, gripper_units, gripper_speed_m_s, gripper_force_n)
        with self._events.lock:
            self._slot.require_jtac("stream()")
            law = stream_law(
                self._loop,
                self.update_rate_hz,
                self._values["stop_accelerations"],
                admittance=admittance,
                thresholds=thresholds,
                joint_damping_per_s=joint_damping_per_s,
                chunk_capacity=int(chunk_capacity),
                blend_window_s=float(blend_window_s),
                timeout_s=float(timeout_s),
                ensemble_weight=float(ensemble_weight),
            )
            stream = Stream(
                self,
                law,
                gripper_units=gripper_units,
                gripper_speed_m_s=gripper_speed_m_s,
                gripper_force_n=gripper_force_n,
            )
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
        """Switches the loop to a custom law compiled by ``jtac_py.laws.compile()`` (RuntimeError while
        a stream is open); ``use_law(None)`` returns to trajectory execution and waits until the JTAC
        runs again; both by the hand-over rule (docs/python_api.md). The law starts with its memory
        zeroed and `params` (default ``law.params``; ValueError for the wrong size or a non-finite
        value). A law that fails stops the arm in minimum time and holds it; ``law_error`` says why."""
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
        if frame not in frames:
            raise ValueError(f"sensor_frame '{frame}' is not a sensor frame of this controller: {frames}")
        if self._slot.in_use():
            raise RuntimeError(
                f"zero_fts({frame}): tare refused: {self._slot.in_use()}; zero the sensor with the arm "
                "idle and unloaded, before opening it or after closing it"
            )
        if self._stepper and self._loop.snapshot() is None:
            self._stepper.step_cycle()  # the controller runs once, as in real time
        future = self._events.request_tare(frames.index(frame), f"zero_fts({frame})")
        return wait_for(
            future,
            timeout,
            self._stepper.step_until if self._stepper else None,
            f"zero_fts({frame}) not done",
        )

    def feed_wrench(self, sensor_frame: str, wrench_n_nm: Sequence[float]) -> None:
        """Hands over the newest reading of an external force/torque sensor: the tip of `sensor_frame`
        whose sensor is not the arm's (wrench_sources "external"). wrench_n_nm: Fx Fy Fz Tx Ty Tz
        [N, N·m] in the sensor frame's axes, about its origin; held until the next reading; a
        non-finite value is a sensor fault. Never waits; any thread. ValueError for an unknown frame,
        a tip that does not read an external sensor or a wrench that is not 6 numbers."""
        tip, wrench = jtac_config.external_tip(
            self.sensor_frames, self._parts.wrench_sources, sensor_frame, wrench_n_nm
        )
        self._loop.feed_wrench(tip, wrench)

    # ---------------------------------------------------------------------------- internals
    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError("the controller is not started: call start() (or use it as a context manager)")

    def _after_steps(self) -> None:
        """Lockstep, after each step: the events, then the hand's state and results."""
        self._events.pump()
        self._gripper.poll()

    def _attach_gripper(self) -> None:
        """The hand on this controller's clock, stepped with a lockstep arm."""
        self._gripper.set_clock(self._gripper_time)
        if self._stepper is not None:
            self._gripper.set_stepping(self._stepper.step_until, self._stepper.step_chunk)

    # ---------------------------------------------------------------------------- clocks
    def controller_time_at(self, host_s: float | None = None) -> float:
        """The controller time [s] (the clock of ``state.time``, of ``sampled_at_s`` and
        ``observed_at_s``) at host time ``host_s`` [s] on ``time.monotonic()`` (default: now).

        Stamp what was sampled on the host's clock with it (a camera frame, a policy's observation, a
        target from another process): ``stream.send(q, sampled_at_s=c.controller_time_at(t_host))``.
        The controller's clock is the robot's (a real FR3's runs within ppm of the host's, franka-sim's
        up to 1 % slow), so a shift read once drifts by as much; this maps through the smooth clock map
        fitted to every cycle's state arrival (continuous, it never steps: stamps keep their spacing).
        Lockstep: the simulated time is both clocks (``host_s``, or now). RuntimeError before the first
        cycle; ValueError for a non-finite ``host_s``."""
        if host_s is not None and not math.isfinite(float(host_s)):
            raise ValueError(f"Controller.controller_time_at: host_s must be finite, got {host_s!r}")
        if self._stepper is not None:
            return self._sim_time() if host_s is None else float(host_s)
        host = time.monotonic() if host_s is None else float(host_s)
        t = float(self._loop.controller_time_at(round(host * 1e9)))
        if t != t:  # NaN: no cycle has run
            raise RuntimeError("Controller.controller_time_at: no controller cycle yet (start() first)")
        return t

    def _gripper_time(self) -> float:
        """The gripper's clock: the robot time of the last cycle's state (0 before the first)."""
        snap = self._loop.snapshot()
        return 0.0 if snap is None else float(snap["time"])

    def _sim_time(self) -> float:
        """Stream.now() in lockstep: the simulated time [s]."""
        return self._loop.packets * PACKET_S

    def __repr__(self) -> str:
        state = "started" if self._started else "stopped"
        return f"Controller({self.hardware!r}, update_rate={self.update_rate_hz} Hz, {state})"
