"""The backend of an arm without a hand: every command's handle ends NO_HAND at once (the Gripper
never sends one here), and the state says nothing is there."""

from __future__ import annotations

import math
from typing import Any

from jtac_py.gripper.types import GripperState

__all__ = ["NO_HAND_STATE", "NoHand"]

#: The state of a missing hand: width and temperature unknown, nothing held, present False.
NO_HAND_STATE = GripperState(
    width_m=math.nan,
    max_width_m=math.nan,
    is_grasped=False,
    moving=False,
    temperature_c=math.nan,
    command=None,
    last_error=None,
    time_s=math.nan,
    age_s=math.nan,
    present=False,
)


class NoHand:
    """No hand (limits None)."""

    limits = None
    needs_polling = False
    opens_at_once = True

    def open(self, gripper: Any) -> None:
        """Nothing to open."""

    def issue(self, command: str, values: dict[str, float]) -> int:
        raise RuntimeError("NoHand: the Gripper never sends a command to a missing hand")

    def state(self) -> GripperState:
        return NO_HAND_STATE

    def poll(self) -> None:
        """Nothing to read."""

    def close(self) -> None:
        """Nothing to close."""
