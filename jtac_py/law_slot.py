"""The control loop's one law slot seen from Python: which law holds it, handing it over and
waiting for the hand-over (jtac_loop/README.md: one law at a time, one hand-over rule).

The JTAC (trajectory execution) holds the slot unless a *tenant* does: a stream
(``Controller.stream()``, ``stream_tenant.py``) or a custom law (``Controller.use_law()``,
``custom_law.py``). Every switch is the same
contract, written once here: the running law brakes to rest within the stop accelerations in force,
the next law starts from that command at rest (the loop does it; a goal still moving ends
INVALID_STATE, "handed over: <the tenant's reason>"). While a tenant holds the slot, what only the
JTAC answers (goals, tares, time-scale changes) is refused with the tenant's own words.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

__all__ = ["LawSlot", "Tenant"]

_log = logging.getLogger(__name__)

#: Added to the hand-over's brake bound [s] before a wait gives up (scheduling, the first cycle).
_HANDOVER_SLACK_S = 2.0
#: Switches kept for a reflex's explanation (the flight recorder spans 256 ms).
SWITCH_HISTORY = 16


class Tenant(Protocol):
    """What holds the slot instead of the JTAC."""

    #: The tenant in words, for the refusal of a tare or time-scale change:
    #: "a stream is open (Controller.stream())".
    in_use: str
    #: The tenant in short, for the refusal of a goal or another switch: "a stream is open".
    busy_reason: str
    #: How the caller gives the slot back: "close it".
    release_hint: str
    #: Why the JTAC handed over, for the result of a goal the switch ended.
    handover_reason: str

    def released(self) -> None:
        """The JTAC holds the slot again (or the loop stopped): the tenant's native law is idle."""

    def poll(self) -> None:
        """The event pump's call, about every 10 ms: the tenant's own bookkeeping (a failure logged)."""

    def stopped(self, message: str) -> None:
        """The JTAC's admittance side stopped the tenant (a compliant stream): the core's message."""


class LawSlot:
    """Which law holds the loop's slot, and the switches between them (thread-safe under `lock`).

    Args:
        loop: the native ControlLoop.
        lock: the lock that also guards the goal table (a switch and a goal submission never interleave).
        stop_accelerations: the stop_accelerations in force [rad/s²] (the hand-over's brake bound).
        step_until: lockstep only (None in real time): steps the arm until done() or timeout_s.
    """

    def __init__(
        self,
        loop: Any,
        lock: threading.RLock,
        stop_accelerations: Callable[[], Sequence[float]],
        step_until: Callable[[Callable[[], bool], float | None], None] | None,
    ) -> None:
        self._loop = loop
        self._lock = lock
        self._stop_accelerations = stop_accelerations
        self._step_until = step_until
        self.tenant: Tenant | None = None
        #: Why the JTAC last handed the slot over ("" before the first switch).
        self.handover_reason = ""
        #: The last switches asked for: (host steady clock [ns], what), newest last — the context a
        #: reflex's explanation names (jtac_py.reflexes).
        self.switches: collections.deque[tuple[int, str]] = collections.deque(maxlen=SWITCH_HISTORY)
        # Every native law the loop has held: it may call a law's code until the cycle after the
        # switch away, so none is freed while the loop lives.
        self._held: list[Any] = []

    def in_use(self) -> str:
        """What holds the slot instead of the JTAC, in words ("" while the JTAC does)."""
        return "" if self.tenant is None else self.tenant.in_use

    def poll(self) -> None:
        """The event pump's call: the tenant's own bookkeeping."""
        if self.tenant is not None:
            self.tenant.poll()

    def stopped(self, message: str) -> None:
        """The core stopped what holds the slot (an event of no goal): the tenant hears it."""
        if self.tenant is not None:
            self.tenant.stopped(message)
        else:
            _log.warning("stream stopped: %s", message)

    def require_jtac(self, what: str) -> None:
        """RuntimeError "<what>: <tenant>: <how to free it> first" while a tenant holds the slot."""
        tenant = self.tenant
        if tenant is not None:
            raise RuntimeError(f"{what}: {tenant.busy_reason}: {tenant.release_hint} first")

    def hand_to(self, tenant: Tenant, native_law: Any) -> None:
        """Puts native_law in the slot for tenant (replacing any tenant); returns at once, the loop
        hands over by the rule."""
        with self._lock:
            self._held.append(native_law)
            self.handover_reason = tenant.handover_reason
            self.switches.append((time.monotonic_ns(), f"a switch asked for: {tenant.handover_reason}"))
            previous, self.tenant = self.tenant, tenant
            self._loop.use_law(native_law)
        if previous is not None and previous is not tenant:
            previous.released()

    def give_back(self, tenant: Tenant, *, wait: bool, what: str) -> None:
        """The slot back to the JTAC from tenant (nothing when tenant does not hold it): its law
        brakes to rest first; with `wait`, returns once the JTAC runs again (RuntimeError naming
        `what` when that takes longer than the brake's bound)."""
        with self._lock:
            if self.tenant is not tenant:
                return
            self._loop.use_law(None)
            self.switches.append((time.monotonic_ns(), f"a switch back to trajectory execution ({what})"))
        if wait:
            self._wait_for_jtac(what)
        with self._lock:
            if self.tenant is not tenant:
                return
            self.tenant = None
        tenant.released()

    def _wait_for_jtac(self, what: str) -> None:
        """Until the JTAC runs: lockstep steps the arm, real time polls. The brake takes at most
        max|dq_cmd| / min(stop_accelerations); a loop that stopped (a hardware error) ends the wait,
        as does twice that bound plus the slack."""
        done = lambda: self._loop.jtac_active  # noqa: E731
        snapshot = self._loop.snapshot()
        speed_rad_s = float(np.max(np.abs(snapshot["dq_cmd"]))) if snapshot is not None else 0.0
        bound_s = _HANDOVER_SLACK_S + 2.0 * speed_rad_s / float(min(self._stop_accelerations()))
        if self._step_until is not None:
            self._step_until(done, bound_s)
        else:
            deadline = time.monotonic() + bound_s
            while not done() and time.monotonic() < deadline and self._loop.running:
                time.sleep(0.001)
        if not done() and (self._step_until is not None or self._loop.running):
            raise RuntimeError(f"{what}: the hand-over did not complete within {bound_s:.1f} s")
