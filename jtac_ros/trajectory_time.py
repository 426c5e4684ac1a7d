"""Trajectory time of the sampled reference, for ``time_from_start`` in the state and the feedback.

ros2_controllers' JTC fills ``time_from_start`` of its reference with where in the trajectory the
sample lies; clients (rqt_joint_trajectory_controller, progress bars, loggers that align a run with
its plan) read it. The core advances that time τ itself (trajectory time runs at the speed scale
s: dτ = s·dt), but the loop's state snapshot does not carry it, so it is reconstructed here from what
the snapshots do carry:

- the goal's start, from its GOAL_STARTED event: taken at controller time t₀ with the trajectory's
  τ = 0 at ``start_s`` (its stamp; the taking time for a zero stamp), so τ(t₀) = t₀ − start_s at a
  constant scale;
- then τ += ∫ s dt between snapshots (trapezoidal on the snapshots' ``time_scale``) while the goal
  executes; frozen while it settles or brakes; 0 while it waits for a future start and while no goal
  runs; never beyond the trajectory's duration.

At a constant speed scale (the usual case) this is the core's τ exactly; while
``time_scale_percentage`` ramps it is the trapezoidal integral over the snapshots the node read (at
``state_publish_rate``), within a millisecond for the filter's ramps; a goal stamped in the past
while the scale was not 100 % starts from (t₀ − start_s)·s instead of the scale's history.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from jtac_py import _native

__all__ = ["TrajectoryTime"]

_Mode = _native.ControllerMode
_GOAL_STARTED = _native.EventType.GOAL_STARTED


@dataclass
class _Goal:
    handle: Any  # jtac_py.controller.GoalHandle: its events carry GOAL_STARTED
    duration_s: float  # time_from_start of the last point [s]
    taken_s: float | None = None  # controller time the core took the goal [s]
    start_s: float | None = None  # controller time of the trajectory's τ = 0 [s]

    def started(self) -> bool:
        if self.taken_s is None:
            for event in list(self.handle.events):
                if event.type == _GOAL_STARTED:
                    self.taken_s = float(event.time_s)
                    self.start_s = float(event.value)
                    break
        return self.taken_s is not None


class TrajectoryTime:
    """τ [s] of the reference in a ControllerState (see the module docstring). Thread-safe: the state
    timer and the feedback loops of the goals share one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._goals: dict[int, _Goal] = {}
        self._goal_id = 0
        self._tau_s = 0.0
        self._time_s = 0.0
        self._scale = 1.0

    def register(self, goal_id: int, handle: Any, duration_s: float) -> None:
        """A goal handed to the core (its id, its jtac_py GoalHandle, its last point's time [s])."""
        with self._lock:
            self._goals[int(goal_id)] = _Goal(handle, float(duration_s))

    def forget(self, goal_id: int) -> None:
        """The goal has its result: nothing more to track."""
        with self._lock:
            self._goals.pop(int(goal_id), None)

    def at(self, state: Any) -> float:
        """τ [s] of the reference in `state` (time, mode, goal_id, time_scale); 0 when no goal runs."""
        with self._lock:
            return self._at(state)

    def _at(self, state: Any) -> float:
        goal_id, mode = int(state.goal_id), state.mode
        t_s, scale = float(state.time), float(state.time_scale)
        if goal_id == 0 or mode in (_Mode.IDLE, _Mode.INACTIVE):
            self._goal_id = 0
            return 0.0
        goal = self._goals.get(goal_id)
        if goal is None or not goal.started():
            return 0.0  # a goal this node did not send, or its start event is not pumped yet
        assert goal.taken_s is not None and goal.start_s is not None
        if goal_id != self._goal_id:
            self._goal_id = goal_id
            self._tau_s = (goal.taken_s - goal.start_s) * (scale if goal.taken_s > goal.start_s else 1.0)
            self._time_s = goal.taken_s
            self._scale = scale
        if t_s < self._time_s:  # an older snapshot (a feedback loop behind the timer): step back
            back = (self._time_s - t_s) * scale if mode == _Mode.EXECUTING else 0.0
            return min(max(self._tau_s - back, 0.0), goal.duration_s)
        dt_s = t_s - self._time_s
        if mode == _Mode.WAITING:
            self._tau_s = t_s - goal.start_s
        elif mode == _Mode.EXECUTING:
            if self._tau_s < 0.0:  # the start passed between two snapshots
                self._tau_s = max(self._tau_s + dt_s, 0.0) * scale
            else:
                self._tau_s += dt_s * 0.5 * (self._scale + scale)
        # SETTLING and STOPPING: the core's τ stands still.
        self._time_s, self._scale = t_s, scale
        self._tau_s = min(self._tau_s, goal.duration_s)
        return max(self._tau_s, 0.0)
