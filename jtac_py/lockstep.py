"""Stepping a lockstep arm: nothing runs by itself, so every wait of the Python API (a goal's
result, a tare, a hand-over) advances the simulation by 1 ms packets on the virtual clock until it
is done, and pumps the events between two chunks of packets. Timeouts count simulated seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from jtac_py import _native

__all__ = ["CHUNK_PACKETS", "PACKET_S", "Stepper"]

#: One packet of the simulated robot [s], and packets per second.
PACKET_S = 0.001
PACKETS_PER_S = 1000
#: Packets stepped between two pumps while a blocking call steps the simulation.
CHUNK_PACKETS = 10


class Stepper:
    """Advances a lockstep loop and pumps its events (``pump``: the event pump's ``pump``;
    ``require_started``: raises unless the owner is started, as every step needs)."""

    def __init__(self, loop: Any, pump: Callable[[], None], require_started: Callable[[], None]) -> None:
        self._loop = loop
        self._pump = pump
        self._require_started = require_started
        self._group_step: Callable[[int], Any] | None = None

    def join(self, group_step: Callable[[int], Any] | None) -> None:
        """Steps through `group_step(packets)` from now on (None: alone again): a lockstep group
        (``jtac_py.arm_group``) advances all its arms together, whichever arm's call waits; it
        returns this arm's DeviceStatus."""
        self._group_step = group_step

    def step(self, packets: int) -> Any:
        """`packets` 1 ms packets (and the controller cycles due), then a pump; the DeviceStatus."""
        self._require_started()
        if self._group_step is not None:
            return self._group_step(int(packets))
        return self.step_alone(packets)

    def step_alone(self, packets: int) -> Any:
        """step() of this arm only, whether or not it is in a group."""
        status = self._loop.step(int(packets))
        self._pump()
        return status

    @property
    def packets(self) -> int:
        """Packets stepped so far."""
        return int(self._loop.packets)

    def step_chunk(self) -> None:
        self.step(CHUNK_PACKETS)

    def step_cycle(self) -> None:
        """Until the controller has run its next cycle (a mailbox it serves once a cycle)."""
        self.step(self._loop.packets_per_cycle)

    def time_s(self) -> float:
        """The simulated time [s]: packets stepped so far."""
        return self._loop.packets * PACKET_S

    def step_until(self, done: Callable[[], bool], timeout_s: float | None) -> None:
        """Steps until done() or timeout_s of simulated time; RuntimeError when the arm stops."""
        deadline = None if timeout_s is None else self._loop.packets + math.ceil(timeout_s * PACKETS_PER_S)
        while not done():
            if deadline is not None and self._loop.packets >= deadline:
                return
            status = self.step(CHUNK_PACKETS)
            if status != _native.DeviceStatus.OK and not done():  # what stopped it may have ended it
                raise RuntimeError(f"the simulated arm stopped: {status.name}")
