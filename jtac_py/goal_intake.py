"""Goal intake on the Python side: a prepared core goal into the core's goal mailbox, its handle
registered with the event pump before the pump can see the goal's events (a goal can end within a
cycle: stitched away, or aborted at once).

A goal is refused while a stream or a custom law holds the loop's slot (INVALID_STATE, naming it);
a goal the core rejects is a resolved handle with the core's code and message, never an exception.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jtac_py import _native, goals
from jtac_py.event_pump import EventPump
from jtac_py.law_slot import LawSlot
from jtac_py.results import GoalHandle, GoalResult

__all__ = ["GoalIntake"]

_log = logging.getLogger(__name__)

ResultCode = _native.ResultCode

#: Attempts while the previous goal is still in the mailbox (the controller takes it at its next
#: cycle; one wait of about a cycle between two attempts).
_SUBMIT_ATTEMPTS = 1000


class GoalIntake:
    """Submits goals to the core for the Controller.

    Args:
        core: the configured core (``_native.JtacController``).
        slot, pump: the loop's law slot and the Controller's event pump.
        now_s: the controller time of the last cycle [s] (a goal's time of receipt).
        wait_a_cycle: lets the controller run a cycle (lockstep: steps the arm; real time: sleeps).
        step_until: a lockstep arm's stepping (None in real time), through which a handle waits.
    """

    def __init__(
        self,
        core: Any,
        slot: LawSlot,
        pump: EventPump,
        now_s: Callable[[], float],
        wait_a_cycle: Callable[[], None],
        step_until: Callable[[Callable[[], bool], float | None], None] | None,
    ) -> None:
        self._core = core
        self._slot = slot
        self._pump = pump
        self._now_s = now_s
        self._wait_a_cycle = wait_a_cycle
        self._step_until = step_until

    def submit_trajectory(
        self,
        trajectory: Any,
        joint_names: Sequence[str],
        admittance: Any,
        tolerances: Mapping[str, Any] | None,
        thresholds: Sequence[float] | None,
        joint_damping_per_s: float,
    ) -> GoalHandle:
        """A goal built by ``jtac_py.goals.jtac_goal`` with follow()'s defaults, submitted."""
        goal = goals.jtac_goal(
            trajectory,
            list(joint_names),
            admittance=admittance,
            tolerances=tolerances,
            thresholds=thresholds,
            joint_damping_per_s=joint_damping_per_s,
        )
        return self.submit(goal)

    def submit(self, goal: Any) -> GoalHandle:
        """The goal's handle: registered with the pump, or already resolved when refused. `goal`: a
        JtacGoal or the mapping of its constructor's arguments (``goals.as_jtac_goal``)."""
        goal = goals.as_jtac_goal(goal)
        with self._pump.lock:
            tenant = self._slot.tenant
            if tenant is not None:
                message = f"{tenant.busy_reason}: {tenant.release_hint} before sending goals"
                return self._resolved(GoalResult(ResultCode.INVALID_STATE, message, 0))
            result = self._core.submit_goal(goal, self._now_s())
            for _attempt in range(_SUBMIT_ATTEMPTS):
                if not result.busy:
                    break
                self._wait_a_cycle()
                result = self._core.submit_goal(goal, self._now_s())
            if result.code != ResultCode.SUCCESSFUL or result.busy:
                message = result.message or "the goal mailbox stayed busy"
                if self._pump.hardware_error is not None:
                    message = f"{message} ({self._pump.hardware_error})"
                return self._resolved(GoalResult(result.code, message, result.goal_id))
            handle = GoalHandle(result.goal_id, self._core.request_cancel, self._step_until)
            handle.warning = result.warning
            if result.warning:
                _log.warning("goal %d accepted with a warning: %s", result.goal_id, result.warning)
            self._pump.goals[result.goal_id] = handle
        return handle

    def _resolved(self, result: GoalResult) -> GoalHandle:
        handle = GoalHandle(result.goal_id, self._core.request_cancel, self._step_until)
        handle._resolve(result)
        return handle
