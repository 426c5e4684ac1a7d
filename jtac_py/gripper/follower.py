"""A stream's gripper channel: the hand's target over time, and the follower that turns its changes
into gripper commands (``Stream.send(..., gripper=)``, ``Stream.send_chunk(..., gripper=)``).

The target is read at the controller's time: from the newest chunk, the value of the point whose
time has come (each point's value holds until the next point's: a gripper command is a step, not a
path), the last point's held after it; from send(), the newest value. The follower issues a
command when the target differs from the last command's width by more than ``WIDTH_THRESHOLD_M``,
and never sooner than ``MIN_COMMAND_INTERVAL_S`` after the previous command. Opening (the target at
or above the measured width) is a move; closing is a grasp whose band accepts any object the
fingers close on — franka_ros2's GripperCommand server makes the same choice between move and grasp
(franka_gripper/src/gripper_action_server.cpp, onExecuteGripperCommand: move when the target width
>= the current width, else grasp). docs/gripper.md, "Streams and recording".

The follower runs where the Controller's pump runs (``StreamTenant.poll``): the pump thread, every
10 ms, in real time; every ``step()`` in lockstep, so a lockstep stream's commands are deterministic.
Gripper calls return at once, so the pump is never held up by the hand.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from jtac_py.gripper.types import FRANKA_HAND, HandLimits

__all__ = [
    "FINGERS_CLOSED_M",
    "FRACTION_THRESHOLD",
    "MIN_COMMAND_INTERVAL_S",
    "WIDTH_THRESHOLD_M",
    "GripperChannel",
    "GripperFollower",
]

_log = logging.getLogger("jtac.gripper")

#: A target that differs from the last command's width by no more than this is not sent [m]: 5 mm
#: (1/16 of the stroke) is above a policy's jitter between chunks and below any change of grasp it
#: means.
WIDTH_THRESHOLD_M = 0.005
#: The same threshold for a channel given as a 0..1 fraction of the Franka Hand's 0.08 m stroke
#: (0.0625; the follower compares widths: a fraction is turned into one first).
FRACTION_THRESHOLD = WIDTH_THRESHOLD_M / FRANKA_HAND.max_width_m
#: The least time between two commands [s]: the hand's command/response round trip with margin. On
#: franka-sim a command moves the fingers 2 ms after it is issued, but the state that shows it comes
#: with the next 60 Hz datagram, 10-27 ms old when read (docs/gripper_figures.md); on the real hand a
#: new command is a Stop and then the command, each answered over TCP. 0.1 s lets a command show
#: its motion in several states before the next may preempt it, the fingers cover 10 mm (two
#: thresholds) at 0.1 m/s meanwhile, and a policy stepping at 10-15 Hz still gets a command per step.
MIN_COMMAND_INTERVAL_S = 0.1
#: Fingers closer than this have closed on nothing [m]: the lower edge of a follower grasp's band. The
#: simulated hand's closed fingers rest within 0.2 mm of 0 at 140 N; an object thinner than 1 mm is
#: not one a stream's grasp can tell from none.
FINGERS_CLOSED_M = 0.001
#: Slack on the interval for clock times that are sums of 1 ms packets [s].
_CLOCK_SLACK_S = 1e-9


class GripperChannel:
    """The hand's target over the controller's time, in width [m] (any thread; a lock guards it).

    units: "width_m" or "fraction" (0 open, 1 closed: width = max_width · (1 − fraction)).
    """

    def __init__(self, units: str, max_width_m: float) -> None:
        self.units = units
        self.max_width_m = float(max_width_m)
        self._lock = threading.Lock()
        self._times_s = np.zeros(0)  # absolute controller times of the chunk's points [s]
        self._widths_m = np.zeros(0)
        self._before_m: float | None = None  # the target before the chunk's first point [m]

    def to_width_m(self, values: np.ndarray) -> np.ndarray:
        """Values in the channel's units -> widths [m]."""
        values = np.asarray(values, dtype=float)
        return self.max_width_m * (1.0 - values) if self.units == "fraction" else values

    def set_chunk(self, times_s: np.ndarray, values: np.ndarray, now_s: float) -> None:
        """A chunk's points at absolute controller times; replaces the schedule from now on."""
        widths = self.to_width_m(values)
        with self._lock:
            before = self._sample(now_s)
            self._times_s, self._widths_m = np.array(times_s, dtype=float), widths
            self._before_m = before

    def set_value(self, value: float) -> None:
        """One target (send()): in force from now on."""
        with self._lock:
            self._times_s, self._widths_m = np.zeros(1), self.to_width_m(np.array([value]))
            self._before_m = None

    def freeze(self, now_s: float) -> None:
        """The target stays at what it is now: a chunk without a gripper channel ends the future of
        the previous one."""
        with self._lock:
            self._hold(self._sample(now_s))

    def hold(self, width_m: float | None) -> None:
        """The target is width_m [m] from now on (None: no target, nothing to follow)."""
        with self._lock:
            self._hold(width_m)

    def _hold(self, width_m: float | None) -> None:
        self._times_s = np.zeros(0 if width_m is None else 1)
        self._widths_m = np.zeros(0) if width_m is None else np.array([float(width_m)])
        self._before_m = None

    def target_at(self, t_s: float) -> float | None:
        """The target width at controller time t_s [m]; None while nothing was ever sent."""
        with self._lock:
            return self._sample(t_s)

    def _sample(self, t_s: float) -> float | None:
        if self._widths_m.size == 0:
            return None
        index = int(np.searchsorted(self._times_s, t_s, side="right")) - 1
        if index < 0:
            return self._before_m if self._before_m is not None else float(self._widths_m[0])
        return float(self._widths_m[index])


class GripperFollower:
    """Issues gripper commands that follow a channel's target (see the module's doc).

    gripper: the Controller's Gripper; now: the controller clock [s]; speed_m_s, force_n: every
    command's speed and a grasp's force. ``commands`` keeps the handles issued, oldest first.
    """

    def __init__(
        self,
        gripper: Any,
        channel: GripperChannel,
        now: Callable[[], float],
        *,
        speed_m_s: float,
        force_n: float,
        limits: HandLimits,
    ) -> None:
        self.gripper = gripper
        self.channel = channel
        self._now = now
        self.speed_m_s = float(speed_m_s)
        self.force_n = float(force_n)
        self._limits = limits
        self.commands: list[Any] = []
        self.active = True
        self._last_issue_s: float | None = None
        self._reference_m = self._starting_reference()

    def _starting_reference(self) -> float | None:
        """The hand's width when the stream opens, as if it had been commanded; None when it is
        unknown (the first target is then always sent)."""
        width_m = float(self.gripper.state.width_m)
        return width_m if math.isfinite(width_m) else None

    def poll(self) -> None:
        """One look at the target at the controller's time; a command when it is due."""
        if not self.active:
            return
        now_s = self._now()
        target_m = self.channel.target_at(now_s)
        if target_m is None or not self._changed(target_m) or not self._interval_passed(now_s):
            return
        state = self.gripper.state
        if state.is_grasped and target_m < state.width_m:
            return  # a closing target that the hand's hold already meets: no second grasp
        self._issue(target_m, float(state.width_m), now_s)

    def _changed(self, target_m: float) -> bool:
        return self._reference_m is None or abs(target_m - self._reference_m) > WIDTH_THRESHOLD_M

    def _interval_passed(self, now_s: float) -> bool:
        if self._last_issue_s is None:
            return True
        return now_s - self._last_issue_s >= MIN_COMMAND_INTERVAL_S - _CLOCK_SLACK_S

    def _issue(self, target_m: float, measured_m: float, now_s: float) -> None:
        """Opening (at or above the measured width; the last command's when it is unknown) moves,
        closing grasps."""
        reference = measured_m if math.isfinite(measured_m) else self._reference_m
        if reference is not None and target_m >= reference:
            handle = self.gripper.move(target_m, self.speed_m_s)
        else:
            # The band (FINGERS_CLOSED_M, target + max width): the grasp holds whatever the fingers
            # close on; only closing all the way (nothing between them) is NOT_GRASPED.
            width_m = max(target_m, FINGERS_CLOSED_M)
            handle = self.gripper.grasp(
                width_m,
                self.speed_m_s,
                self.force_n,
                epsilon_inner_m=width_m - FINGERS_CLOSED_M,
                epsilon_outer_m=self._limits.max_width_m,
            )
        handle.add_done_callback(_log_failure)
        self.commands.append(handle)
        self._reference_m = target_m
        self._last_issue_s = now_s

    def stop(self) -> None:
        """No command from now on; the hand stays as it is (its running command goes on)."""
        self.active = False

    def brake(self) -> None:
        """The stream braked: the target holds the last command's width (no command until the next
        input)."""
        self.channel.hold(self._reference_m)


def _log_failure(result: Any) -> None:
    """A command the hand failed is worth a line; NOT_GRASPED (closed on nothing), PREEMPTED (a newer
    target) and BLOCKED are what following a policy does."""
    if result.code.name in ("FAILED", "CONNECTION_LOST"):
        _log.warning("stream gripper %s: %s %s", result.command, result.code.name, result.message)
