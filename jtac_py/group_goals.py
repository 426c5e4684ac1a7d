"""A group goal's records: ``GroupGoalHandle`` (one goal per arm, started at one group instant),
``GroupResult`` (every arm's result and when each started on the group clock) and ``ArmFault``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jtac_py.results import GoalError, GoalHandle, GoalResult

if TYPE_CHECKING:
    from jtac_py.arm_group import ArmGroup


@dataclass(frozen=True)
class ArmFault:
    """An arm of the group that stopped by itself: its name and why (the hardware's message)."""

    arm: str
    message: str


@dataclass(frozen=True)
class GroupResult:
    """How a group goal ended: one GoalResult per arm, and when each arm's trajectory started on
    the group clock [s] (None where it never started): the instant asked for, as each arm's clock
    map placed it at submission (the core starts on the first cycle at or after it: within one
    robot period), or the goal's acceptance where that came later. What the robots received is
    measured robot side by bench/bench_pair.py."""

    results: dict[str, GoalResult]
    start_times_s: dict[str, float | None] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results.values())

    @property
    def message(self) -> str:
        return "; ".join(f"{arm}: {r.code.name}: {r.message}" for arm, r in self.results.items() if not r.ok)

    @property
    def start_skew_s(self) -> float | None:
        """The largest difference between the arms' start times [s] (None unless all started)."""
        starts = list(self.start_times_s.values())
        if not starts or any(s is None for s in starts):
            return None
        return float(max(starts) - min(starts))  # type: ignore[type-var]

    def raise_for_code(self) -> GroupResult:
        for result in self.results.values():
            if not result.ok:
                raise GoalError(result)
        return self


class GroupGoalHandle:
    """A group goal: one GoalHandle per arm, started at one group instant ``start_at_s``."""

    def __init__(
        self,
        group: ArmGroup,
        handles: dict[str, GoalHandle],
        start_at_s: float,
        arm_starts_s: dict[str, float],
    ) -> None:
        self._group = group
        self.handles = handles
        #: The group time the trajectories start at [s], and each arm's start on its own clock [s].
        self.start_at_s = start_at_s
        self.arm_starts_s = arm_starts_s

    def done(self) -> bool:
        return all(h.done() for h in self.handles.values())

    def cancel(self) -> None:
        """Cancels every arm's goal (each stops in minimum time)."""
        for handle in self.handles.values():
            handle.cancel()

    def result(self, timeout: float | None = None) -> GroupResult:
        """Every arm's result; waits up to timeout seconds in all (lockstep: simulated, stepping every
        arm). TimeoutError when one is not there in time (the goals keep running)."""
        deadline = None if timeout is None else self._group.now() + timeout
        results = {}
        for arm, handle in self.handles.items():
            left = None if deadline is None else max(0.0, deadline - self._group.now())
            results[arm] = handle.result(left)
        return GroupResult(results, {arm: self._start_s(arm, r) for arm, r in results.items()})

    def _start_s(self, arm: str, result: GoalResult) -> float | None:
        """When `arm`'s trajectory started on the group clock: the instant asked for, placed on the
        arm's clock when the goal was submitted (its core starts on the first cycle at or after it),
        unless the goal was taken later (then its acceptance, mapped now); None if it never started.
        Mapped at submission, not now: a robot clock that stalls or drifts (franka-sim's) moves the
        map meanwhile, and the start happened on the map of then."""
        if result.start_time_s is None:
            return None
        if result.start_time_s <= self.arm_starts_s[arm]:
            return self.start_at_s
        return self._group.group_time(arm, result.start_time_s)
