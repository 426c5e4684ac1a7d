"""Streaming: the handle of a stream of joint targets or timed chunks (``Controller.stream()``).

The stream's law (StreamLaw, jtac_loop) runs in the controller thread; this handle checks and hands over
what a sender gives it and reads the law's counters. See docs/python_api.md (stream()).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from jtac_py import _native
from jtac_py.chunks import Chunk, check_gripper_values, check_joint_values, gripper_upper_bound
from jtac_py.gripper.follower import GripperChannel, GripperFollower
from jtac_py.gripper.types import FRANKA_HAND, HandLimits

if TYPE_CHECKING:
    from jtac_py.controller import Controller

__all__ = ["Stream"]

ResultCode = _native.ResultCode

_log = logging.getLogger(__name__)


class Stream:
    """A streamed joint target in force (Controller.stream()); a context manager.

    Two kinds of input, both placed at their times on the controller clock (``controller.state.time``)
    and joined into one command whose position, velocity and acceleration are continuous
    (jtac_loop/chunk_stream.hpp):

    * send_chunk(): an action chunk of a learned policy — H future points with times relative to the
      observation the policy computed it from. The part already past when it arrives is skipped; the
      rest replaces the executing future, blended in over ``blend_window_s`` (C²), never re-anchored
      on the measured state.
    * send(): a single target (teleoperation, a planner), stamped with the controller time at which it
      is sent and placed one sender interval (+ its jitter) later, so a 10–125 Hz source with
      millisecond jitter reaches the robot smooth.

    When inputs stop (the future runs out, or none for ``timeout_s``) or a chunk arrives entirely in the
    past, the command brakes to rest within the controller's stop_accelerations (counted in brakes,
    stale_chunks); brake() does the same on demand. close() (or the end of the ``with`` block, an
    exception included) brakes to rest and returns the loop to trajectory execution.

    With ``admittance`` (Controller.stream(admittance=...)), the stream's command is the reference of
    the controller's admittance, as a goal's trajectory is: the tool yields to a push along the
    compliant axes and returns when it ends. A threshold exceeded, a non-finite reading or integrator
    output brakes the stream to rest and ends it: ``stop_code`` and ``stop_message`` say why, and
    send()/send_chunk() raise RuntimeError from then on (open a new stream to continue).

    A gripper channel (``gripper=`` of send() and send_chunk()): the hand's target, a width [m] or,
    with ``Controller.stream(gripper_units="fraction")``, 0..1 (0 open, 1 closed, as DROID records
    it), followed by gripper commands when it changes by more than 5 mm, at most every 0.1 s
    (``jtac_py.gripper.follower``). close() and brake() leave the hand as it is. On an arm without a
    hand the channel is checked, then ignored with one warning: the arm follows the joints.
    """

    def __init__(
        self,
        controller: Controller,
        law: Any,
        *,
        gripper_units: str = "width_m",
        gripper_speed_m_s: float = 0.1,
        gripper_force_n: float = 20.0,
    ) -> None:
        self._controller = controller
        self._law = law
        self._names = controller.joint_names
        self._send_lock = threading.Lock()  # one writer at a time into the native mailboxes
        self.active = True
        #: When the last target or chunk was handed over (host steady clock [ns]; 0 before one): the
        #: context a reflex's explanation names.
        self.last_input_ns = 0
        self._stop_message = ""  # the controller's event for stop_code, set by the pump
        hand = controller.gripper
        limits = Stream.check_gripper_options(hand, gripper_units, gripper_speed_m_s, gripper_force_n)
        #: "width_m" or "fraction": what the gripper values of send() and send_chunk() are.
        self.gripper_units = gripper_units
        self._gripper_max_width_m = limits.max_width_m
        self._gripper_ignored = False  # warned once that an arm without a hand ignores the channel
        self._channel = GripperChannel(gripper_units, limits.max_width_m)
        self._follower: GripperFollower | None = None
        if hand.present:
            self._follower = GripperFollower(
                hand,
                self._channel,
                self.now,
                speed_m_s=gripper_speed_m_s,
                force_n=gripper_force_n,
                limits=limits,
            )

    @staticmethod
    def check_gripper_options(hand: Any, units: str, speed_m_s: float, force_n: float) -> HandLimits:
        """The hand's limits (the Franka Hand's for an arm without one) after checking the stream's
        gripper options; ValueError naming the option and its value."""
        gripper_upper_bound(units, 0.0)
        limits = hand.limits if hand.limits is not None else FRANKA_HAND
        speed, force = float(speed_m_s), float(force_n)
        if not 0.0 < speed <= limits.max_speed_m_s:  # false for nan too
            raise ValueError(
                f"stream gripper_speed_m_s={speed_m_s!r} is outside (0, {limits.max_speed_m_s:g}] m/s"
            )
        if not 0.0 < force <= limits.max_force_n:
            raise ValueError(f"stream gripper_force_n={force_n!r} is outside (0, {limits.max_force_n:g}] N")
        return limits

    def _check_open(self) -> None:
        if not self.active:
            raise RuntimeError("this stream is closed")
        if self._law.stop_code != ResultCode.SUCCESSFUL:
            reason = self.stop_message or self._law.stop_code.name
            raise RuntimeError(f"this stream stopped ({reason}): open a new stream to continue")

    def now(self) -> float:
        """The controller time now [s] (the clock of ``controller.state.time``, of chunk times and of
        ``observed_at_s``)."""
        if self._controller.lockstep:
            return self._controller._sim_time()
        t = self._law.controller_time_s()
        if math.isnan(t):  # the law has not run a cycle yet: the last cycle's time
            state = self._controller.state
            return float(state.time) if state is not None else 0.0
        return float(t)

    def send(
        self,
        q_rad: Sequence[float],
        dq_rad_s: Sequence[float] | None = None,
        *,
        sampled_at_s: float | None = None,
        gripper: float | None = None,
    ) -> None:
        """The newest target [rad] (and its velocity [rad/s], optional), in the controller's joint
        order, for controller time ``sampled_at_s`` (default: now). ValueError for a wrong shape or a
        non-finite value (nothing reaches the robot). ``gripper``: the hand's target in the stream's
        gripper_units, in force at once (ValueError, nothing sent, when not finite or out of range).

        A sender that computes its target for an instant (a trajectory sampled at a time, a
        teleoperation device read at a time) passes that instant, read with now() before computing:
        the target is placed exactly there. Without it the target is stamped when send() runs, which
        is later by however long the computation took and the GIL waited — tens of µs, now and then
        milliseconds — and at speed that moves a target off its time (0.2 rad/s × 20 µs = 4 µrad, a
        jerk of a few hundred rad/s³ between targets 8 ms apart)."""
        stamp = self.now() if sampled_at_s is None else float(sampled_at_s)
        if not math.isfinite(stamp):
            raise ValueError(f"stream sampled_at_s must be finite, got {stamp}")
        self._check_open()
        n = len(self._names)
        q = np.asarray(q_rad, dtype=float)
        dq = None if dq_rad_s is None else np.asarray(dq_rad_s, dtype=float)
        check_joint_values("q_rad", q, (n,), self._names)
        if dq is not None:
            check_joint_values("dq_rad_s", dq, (n,), self._names)
        hand = None
        if gripper is not None:
            hand = np.asarray(gripper, dtype=float)
            check_gripper_values(hand, (), self.gripper_units, self._gripper_max_width_m)
        with self._send_lock:
            self._law.set_target(q, dq, stamp)
            self.last_input_ns = time.monotonic_ns()
            if hand is not None and self._gripper_taken():
                self._channel.set_value(float(hand))

    def send_chunk(
        self,
        times_s: Sequence[float] | Chunk,
        positions_rad: Any = None,
        velocities_rad_s: Any = None,
        *,
        observed_at_s: float | None = None,
        gripper: Any = None,
    ) -> None:
        """An action chunk: H joint targets ``positions_rad`` (H, n) [rad] (and velocities (H, n)
        [rad/s], optional) at ``times_s`` (H,) [s] — strictly increasing, >= 0 — after
        ``observed_at_s``, the controller time of the observation the chunk was computed from
        (``controller.state.time`` when it was read; default now). ValueError naming the field, point,
        joint and value for a malformed or non-finite chunk (nothing reaches the robot). ``gripper``
        (H,): the hand's target at each point in the stream's gripper_units (ValueError naming the
        point and value, nothing sent, when one is not finite or out of range); each point's value
        holds until the next point's time, the last one's after it. Without it the hand's target
        stays what it is when the chunk arrives.

        A ``Chunk`` (already checked by ``Chunk.build``) may be passed alone instead of the arrays."""
        self._check_open()
        if isinstance(times_s, Chunk):
            chunk = times_s
            if any(v is not None for v in (positions_rad, velocities_rad_s, observed_at_s, gripper)):
                raise TypeError("send_chunk(chunk) takes the Chunk alone (its fields hold the rest)")
            self._check_built_chunk(chunk)
        else:
            chunk = Chunk.build(
                times_s,
                positions_rad,
                velocities_rad_s,
                joint_names=self._names,
                observed_at_s=observed_at_s,
                gripper=gripper,
                gripper_units=self.gripper_units,
                gripper_max_width_m=self._gripper_max_width_m,
            )
        now = self.now()
        observed = now if chunk.observed_at_s is None else chunk.observed_at_s
        times = observed + chunk.times_s
        with self._send_lock:
            self._law.set_chunk(times, chunk.positions_rad, chunk.velocities_rad_s)
            self.last_input_ns = time.monotonic_ns()
            self._chunk_gripper(times, chunk.gripper, now)

    def _check_built_chunk(self, chunk: Chunk) -> None:
        if chunk.positions_rad.shape[1] != len(self._names):
            raise ValueError(
                f"stream positions_rad must have {len(self._names)} columns (one per joint), "
                f"got {chunk.positions_rad.shape[1]}"
            )
        if chunk.gripper is not None and chunk.gripper_units != self.gripper_units:
            raise ValueError(
                f"stream gripper: the chunk's values are in {chunk.gripper_units!r}, the stream's in "
                f"{self.gripper_units!r} (Controller.stream(gripper_units=...))"
            )
        if chunk.gripper is not None:
            check_gripper_values(
                chunk.gripper, chunk.times_s.shape, self.gripper_units, self._gripper_max_width_m
            )

    def _chunk_gripper(self, times_s: np.ndarray, values: np.ndarray | None, now_s: float) -> None:
        """A chunk's gripper channel into the target (under the send lock). A chunk entirely in the
        past brakes the arm (stale_chunks): its gripper values are dropped with it."""
        if values is None:
            self._channel.freeze(now_s)
        elif times_s[-1] <= now_s:
            if self._follower is not None:
                self._follower.brake()
        elif self._gripper_taken():
            self._channel.set_chunk(times_s, values, now_s)

    def _gripper_taken(self) -> bool:
        """True when the arm has a hand; else warns once that the channel is ignored."""
        if self._follower is None and not self._gripper_ignored:
            self._gripper_ignored = True
            _log.warning(
                "stream gripper values ignored: the arm has no hand (the stream follows the joints only)"
            )
        return self._follower is not None

    def _poll_gripper(self) -> None:
        """The pump's call (StreamTenant.poll): the follower looks at the target once."""
        if self._follower is not None and self.active and self._law.stop_code == ResultCode.SUCCESSFUL:
            self._follower.poll()

    def _stop_gripper(self) -> None:
        """No gripper command from now on; the hand stays as it is."""
        if self._follower is not None:
            self._follower.stop()

    @property
    def gripper_commands(self) -> list[Any]:
        """The GripperHandles of the commands the gripper channel issued, oldest first."""
        return [] if self._follower is None else list(self._follower.commands)

    def gripper_target_m(self, t_s: float | None = None) -> float | None:
        """The hand's target width at controller time t_s (default now) [m]; None without one (no
        gripper value yet, or no hand)."""
        if self._follower is None:
            return None
        return self._channel.target_at(self.now() if t_s is None else float(t_s))

    @property
    def chunks_taken(self) -> int:
        return self._law.chunks_taken

    @property
    def stale_chunks(self) -> int:
        """Chunks that arrived entirely in the past (each braked the arm)."""
        return self._law.stale_chunks

    @property
    def brakes(self) -> int:
        """Times the command braked to rest while it followed an input (timeout, run out, stale chunk)."""
        return self._law.brakes

    @property
    def refused(self) -> int:
        """Inputs the native side refused (none pass the checks above; a full target queue)."""
        return self._law.targets_refused

    @property
    def state(self) -> Any:
        """StreamState: HOLDING (nothing in force), FOLLOWING or BRAKING."""
        return self._law.state

    @property
    def target_delay_s(self) -> float:
        """How long after its send time a single target is reached [s] (sender interval + jitter)."""
        return self._law.target_delay_s

    @property
    def targets_taken(self) -> int:
        return self._law.targets_taken

    @property
    def late_targets(self) -> int:
        """Single targets that reached the loop after, or less than an interval before, their place
        (each joined along its own continuation an interval later)."""
        return self._law.late_targets

    @property
    def catch_ups(self) -> int:
        """Times the command caught up with the stream within the stop accelerations because joining
        it directly needed more: a stream opened on a motion already under way, a first target ahead
        of the arm, an input after a brake (docs/python_api.md, switching rule 2)."""
        return self._law.catch_ups

    @property
    def holding(self) -> bool:
        """True while no target is in force (none yet, or the stream timed out)."""
        return self._law.holding

    @property
    def compliant(self) -> bool:
        """True when the stream runs with an admittance set (Controller.stream(admittance=...))."""
        return self._law.compliant

    @property
    def admittance_warning(self) -> str:
        """What intake accepted but warned about in the admittance set (as GoalHandle.warning)."""
        return self._law.admittance_warning

    @property
    def stop_code(self) -> Any:
        """ResultCode of what stopped a compliant stream (FORCE_TORQUE_THRESHOLD_EXCEEDED,
        ADMITTANCE_ERROR); SUCCESSFUL while nothing has."""
        return self._law.stop_code

    @property
    def stop_message(self) -> str:
        """The controller's message for stop_code, naming tip, axis, reading and threshold ("" while
        nothing stopped the stream, or until the next pump)."""
        return self._stop_message

    def brake(self) -> None:
        """Brakes to rest now, within the controller's stop_accelerations, and drops the inputs not yet
        taken; the stream stays open and follows the next input sent after this call (from rest,
        caught up within stop_accelerations). Never waits: the next controller cycle already brakes.
        For a teleoperation dead-man switch or a policy that lost its observation."""
        self._check_open()
        self._law.request_brake()
        if self._follower is not None:
            self._follower.brake()

    def close(self) -> None:
        """Ends the stream by the hand-over rule: the command brakes to rest within stop_accelerations
        (inputs in flight are dropped), then trajectory execution takes over from it. Returns once
        it has (lockstep: after stepping the arm there), so the next goal and tare are accepted.
        Idempotent."""
        if self.active:
            self.active = False
            self._stop_gripper()
            self._controller._end_stream(self)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
