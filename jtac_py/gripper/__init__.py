"""The arm's hand: ``Gripper`` and its handles, results, state and events (docs/python_api.md, "The
gripper"). Every command returns a ``GripperHandle`` at once and a new one preempts the running one.

Backends: ``simulated_hand.SimulatedHand`` (the simulated arm's hand, inside the MujocoDevice),
``franka_hand.FrankaHand`` (the Franka Hand over libfranka's gripper protocol,
``franka_protocol``), ``no_hand.NoHand`` (an arm without a hand).
"""

from jtac_py.gripper.gripper import Gripper, GripperHandle, HandBackend
from jtac_py.gripper.types import (
    FRANKA_HAND,
    GripperEvent,
    GripperResult,
    GripperResultCode,
    GripperState,
    HandLimits,
)

__all__ = [
    "FRANKA_HAND",
    "Gripper",
    "GripperEvent",
    "GripperHandle",
    "GripperResult",
    "GripperResultCode",
    "GripperState",
    "HandBackend",
    "HandLimits",
]
