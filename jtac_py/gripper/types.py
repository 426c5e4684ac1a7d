"""The gripper's value types: the hand's limits, a command's result, the hand's state and the events
that listeners receive; and the checks of a command's values against the limits.
"""

from __future__ import annotations

import enum
import logging
import math
from dataclasses import dataclass, field

__all__ = [
    "COMMANDS",
    "FRANKA_HAND",
    "GripperEvent",
    "GripperResult",
    "GripperResultCode",
    "GripperState",
    "HandLimits",
    "check_command",
    "missed_band_message",
]

_log = logging.getLogger("jtac.gripper")

#: The commands a gripper takes, by the names results and events use.
COMMANDS = ("move", "grasp", "home", "stop")


@dataclass(frozen=True)
class HandLimits:
    """What a hand can do: stroke [m] (the width between the fingers), width rate [m/s], grasp force
    peak and continuous [N]."""

    max_width_m: float
    max_speed_m_s: float
    max_force_n: float
    continuous_force_n: float


#: The Franka Hand (Franka's datasheet): 0..0.08 m stroke, 0.1 m/s width rate (0.05 m/s per finger),
#: 70 N continuous and 140 N peak grasp force.
FRANKA_HAND = HandLimits(max_width_m=0.08, max_speed_m_s=0.1, max_force_n=140.0, continuous_force_n=70.0)


class GripperResultCode(enum.Enum):
    """How a gripper command ended."""

    SUCCEEDED = "succeeded"  # move/home reached its width, grasp holds an object in the band, stop done
    NOT_GRASPED = "not_grasped"  # grasp ran and the fingers stopped outside the band
    BLOCKED = "blocked"  # move stopped short of its width (an object in the way)
    PREEMPTED = "preempted"  # a newer command replaced it before it finished
    NO_HAND = "no_hand"  # the arm has no hand
    CONNECTION_LOST = "connection_lost"  # the link to the hand broke (real hand); the arm is unaffected
    FAILED = "failed"  # the hand refused or failed it (libfranka's kFail); the message says why


@dataclass(frozen=True)
class GripperResult:
    """How one gripper command ended."""

    code: GripperResultCode
    command: str  # "move" | "grasp" | "home" | "stop"
    message: str  # the library's / the hand's message, "" on success
    width_m: float  # width when it ended [m] (nan when unknown)
    duration_s: float  # issue -> end [s], on the gripper's clock

    @property
    def success(self) -> bool:
        return self.code is GripperResultCode.SUCCEEDED

    @property
    def grasped(self) -> bool:
        """A grasp that succeeded: the fingers hold an object inside the width band."""
        return self.command == "grasp" and self.success


@dataclass(frozen=True)
class GripperState:
    """The hand's state: a snapshot, never a blocking read."""

    width_m: float  # width between the fingers [m] (nan: unknown, no hand)
    max_width_m: float  # the widest the hand opens [m] (homing measures it on the real hand)
    is_grasped: bool  # the fingers hold an object (the last grasp succeeded and still holds)
    moving: bool  # the fingers move
    temperature_c: float  # the hand's temperature [°C] (nan: unknown)
    command: str | None  # the command running, None at rest
    last_error: str | None  # the last failure's message, None if none
    time_s: float  # when measured, on the gripper's clock [s]
    age_s: float  # how old the measurement was when `state` was read [s]
    present: bool = True  # False: the arm has no hand


@dataclass(frozen=True)
class GripperEvent:
    """What a listener receives: kind "state" (a state sample), "command" (a command issued) or
    "result" (a command ended). The fields of the other kinds are None."""

    kind: str
    time_s: float  # on the gripper's clock [s]
    state: GripperState | None = None
    command: str | None = None
    id: int | None = None
    width_m: float | None = None  # the command's target width [m]
    speed_m_s: float | None = None
    force_n: float | None = None
    result: GripperResult | None = field(default=None)


def missed_band_message(values: dict[str, float], width_m: float) -> str:
    """Why a grasp is NOT_GRASPED: where the fingers stopped and the band they missed [mm]."""
    low_m = values["width_m"] - values["epsilon_inner_m"]
    high_m = values["width_m"] + values["epsilon_outer_m"]
    return (
        f"the fingers stopped at {width_m * 1e3:.1f} mm, outside the grasp band "
        f"{low_m * 1e3:.1f}..{high_m * 1e3:.1f} mm"
    )


def check_command(limits: HandLimits, command: str, **values: float) -> dict[str, float]:
    """The command's values as floats, checked against the hand's limits: width 0..max_width, speed
    (0, max_speed], force (0, max_force], epsilons >= 0, all finite. ValueError naming the field and
    value (and logged on "jtac.gripper") for the first that is not."""
    checked = {}
    for name, value in values.items():
        number = _as_float(command, name, value)
        problem = _out_of_range(limits, name, number)
        if problem:
            _refuse(f"gripper {command}: {name}={value!r} {problem}")
        checked[name] = number
    return checked


def _as_float(command: str, name: str, value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        _refuse(f"gripper {command}: {name}={value!r} is not a number")
    if not math.isfinite(number):
        _refuse(f"gripper {command}: {name}={value!r} is not finite")
    return number


def _out_of_range(limits: HandLimits, name: str, value: float) -> str:
    """Why value is out of the field's range, "" when it is in."""
    if name == "width_m" and not 0.0 <= value <= limits.max_width_m:
        return f"is outside 0..{limits.max_width_m:g} m"
    if name == "speed_m_s" and not 0.0 < value <= limits.max_speed_m_s:
        return f"is outside (0, {limits.max_speed_m_s:g}] m/s"
    if name == "force_n" and not 0.0 < value <= limits.max_force_n:
        return f"is outside (0, {limits.max_force_n:g}] N"
    if name.startswith("epsilon") and value < 0.0:
        return "is negative"
    return ""


def _refuse(message: str) -> None:
    _log.warning(message)
    raise ValueError(message)
