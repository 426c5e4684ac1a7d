"""Trajectory time of the sampled reference, for ``time_from_start`` in the state and the feedback.

ros2_controllers' JTC fills ``time_from_start`` of its reference with where in the trajectory the
sample lies; clients (rqt_joint_trajectory_controller, progress bars, loggers that align a run with
its plan) read it. The core advances that time τ itself (trajectory time runs at the speed scale s:
dτ = s·dt) and the loop's state carries it (``ControllerState.trajectory_time``, the τ at which the
state's reference was sampled), so it is exact also while ``time_scale_percentage`` ramps. What JTC
shows is that τ with two rules on top, applied here:

- 0 while no goal runs (idle, inactive) and while a goal waits for a future start;
- never beyond the last point's time (the core's τ may pass it by a cycle's step when the goal
  ends or settles).

While a goal settles or brakes the core's τ stands still, and so does time_from_start.
"""

from __future__ import annotations

import threading
from typing import Any

from jtac_py import _native

__all__ = ["TrajectoryTime"]

_Mode = _native.ControllerMode
_RUNNING = (_Mode.EXECUTING, _Mode.SETTLING, _Mode.STOPPING)


class TrajectoryTime:
    """τ [s] of the reference in a ControllerState (see the module docstring). Thread-safe: the state
    timer and the feedback loops of the goals share one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._durations: dict[int, float] = {}

    def register(self, goal_id: int, handle: Any, duration_s: float) -> None:
        """A goal handed to the core (its id, its jtac_py GoalHandle, its last point's time [s])."""
        del handle  # the state carries the goal's τ itself
        with self._lock:
            self._durations[int(goal_id)] = float(duration_s)

    def forget(self, goal_id: int) -> None:
        """The goal has its result: nothing more to track."""
        with self._lock:
            self._durations.pop(int(goal_id), None)

    def at(self, state: Any) -> float:
        """τ [s] of the reference in `state` (goal_id, mode, trajectory_time); 0 when no goal runs."""
        goal_id = int(state.goal_id)
        if goal_id == 0 or state.mode not in _RUNNING:
            return 0.0
        tau_s = max(float(state.trajectory_time), 0.0)
        with self._lock:
            duration_s = self._durations.get(goal_id)
        return tau_s if duration_s is None else min(tau_s, duration_s)
