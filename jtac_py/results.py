"""How a goal or a tare ends on the Python side: ``GoalResult`` (and ``GoalError``), ``TareResult``
and ``GoalHandle``, the handle of a submitted goal that the event pump resolves.

A rejected goal is a result, not an exception, exactly as an action client sees it; use
``result.ok`` or ``result.raise_for_code()``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jtac_py import _native

__all__ = ["GoalError", "GoalHandle", "GoalResult", "TareResult"]

ResultCode = _native.ResultCode


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


def wait_for(
    future: concurrent.futures.Future[Any],
    timeout: float | None,
    step_until: Callable[[Callable[[], bool], float | None], None] | None,
    what: str,
) -> Any:
    """future's result within timeout seconds: lockstep (`step_until` given) of simulated time,
    stepping the arm, else of wall time. TimeoutError "<what> after <timeout> s" when it is not
    there in time (`what`: e.g. "goal 3 not finished")."""
    if step_until is not None:
        step_until(future.done, timeout)
        if not future.done():
            raise TimeoutError(f"{what} after {timeout} s (simulated)")
        return future.result()
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        raise TimeoutError(f"{what} after {timeout} s") from None


class GoalHandle:
    """A submitted goal: result(timeout), done(), cancel(); awaitable through Controller.follow_async.

    cancel: asks the core to stop a goal by id; step_until: a lockstep arm's stepping (None in real
    time), through which result() waits."""

    def __init__(
        self,
        goal_id: int,
        cancel: Callable[[int], Any],
        step_until: Callable[[Callable[[], bool], float | None], None] | None,
    ) -> None:
        self.goal_id = goal_id
        self._cancel = cancel
        self._step_until = step_until
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
            self._cancel(self.goal_id)

    def result(self, timeout: float | None = None) -> GoalResult:
        """The result; waits up to timeout seconds (lockstep: of simulated time, stepping the arm).

        Raises TimeoutError when it is not there in time (the goal keeps running).
        """
        return wait_for(self._future, timeout, self._step_until, f"goal {self.goal_id} not finished")

    def _resolve(self, result: GoalResult) -> None:
        if not self._future.done():
            self._future.set_result(result)


async def await_result(
    handle: GoalHandle, timeout: float | None, lockstep: tuple[Callable[[], float], Callable[[], Any]] | None
) -> GoalResult:
    """handle's result for asyncio without blocking the event loop; a canceled task cancels the goal.

    lockstep: (simulated time [s], step a little) of a lockstep arm (None in real time): the timeout
    counts simulated seconds and the simulation is stepped between two yields to the event loop."""
    what = f"goal {handle.goal_id} not finished"
    try:
        if lockstep is None:
            return await asyncio.wait_for(asyncio.wrap_future(handle._future), timeout)
        sim_time_s, step = lockstep
        deadline_s = None if timeout is None else sim_time_s() + timeout
        while not handle.done():
            if deadline_s is not None and sim_time_s() >= deadline_s:
                raise TimeoutError(f"{what} after {timeout} s (simulated)")
            step()
            await asyncio.sleep(0)
        return handle._future.result()
    except asyncio.CancelledError:
        handle.cancel()
        raise
    except TimeoutError as error:
        if lockstep is not None:
            raise
        raise TimeoutError(f"{what} after {timeout} s") from error
