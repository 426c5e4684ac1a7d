"""A stream in the loop's slot (``Controller.stream()``): the native StreamLaw built from the
stream's options, and the tenant that stands for it in ``jtac_py.law_slot``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from jtac_py import _native, goals

__all__ = ["StreamTenant", "stream_law"]

_log = logging.getLogger(__name__)


class StreamTenant:
    """A stream in the slot (jtac_py.streaming.Stream over a native StreamLaw)."""

    release_hint = "close it"
    handover_reason = "a stream was opened (Controller.stream())"

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    @property
    def in_use(self) -> str:
        kind = "a stream with admittance" if self.stream.compliant else "a stream"
        return f"{kind} is open (Controller.stream())"

    @property
    def busy_reason(self) -> str:
        return "a stream is open (Controller.stream())"

    def released(self) -> None:
        """The stream's gripper channel issues nothing more (the hand stays as it is); the Stream
        handle marks itself closed."""
        self.stream._stop_gripper()

    def stop_gripper(self) -> None:
        """The stream's gripper channel issues nothing more (Controller.stop(), before its last pump:
        a stop never moves the hand)."""
        self.stream._stop_gripper()

    def poll(self) -> None:
        """The gripper channel's follower looks at its target (the stream's counters are read on
        demand): every pump, so every 10 ms in real time and every step() in lockstep."""
        self.stream._poll_gripper()

    def stopped(self, message: str) -> None:
        self.stream._stop_gripper()
        if self.stream.compliant:
            self.stream._stop_message = message
        _log.warning("stream stopped: %s", message)


def stream_law(
    loop: Any,
    update_rate_hz: int,
    stop_accelerations_rad_s2: Sequence[float],
    *,
    admittance: Any,
    thresholds: Sequence[float] | None,
    joint_damping_per_s: float,
    **options: Any,
) -> Any:
    """The native StreamLaw of Controller.stream() (options: its chunk_capacity, blend_window_s,
    timeout_s and ensemble_weight); with an admittance set, thresholds or joint damping the law is
    compliant, its set validated as a goal's (ValueError naming field, tip and axis)."""
    compliance: dict[str, Any] = {}
    if admittance is not None or thresholds is not None or joint_damping_per_s:
        compliance = {
            "loop": loop,
            "tips": goals.tip_goals(admittance),
            "joint_damping_per_s": float(joint_damping_per_s),
            "absolute_force_torque_threshold": None if thresholds is None else list(thresholds),
        }
    law = _native.StreamLaw(
        1.0 / update_rate_hz,
        stop_accelerations_rad_s2=list(stop_accelerations_rad_s2),
        **options,
        **compliance,
    )
    if law.admittance_warning:
        _log.warning("stream admittance accepted with a warning: %s", law.admittance_warning)
    return law
