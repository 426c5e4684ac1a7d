"""The simulated Franka Hand: a backend over the native MujocoDevice's hand, whose own controller runs
inside the device's 1 ms tick. Commands go to ``device.hand_command`` (any thread, never waits); the
state is ``device.hand_state()``, a consistent snapshot of the last tick. The Gripper polls it (100 Hz
in real time, every Controller.step() in lockstep) and this backend turns the status of each command
id into its result.
"""

from __future__ import annotations

import math
import threading
from typing import Any

from jtac_py.gripper.types import (
    FRANKA_HAND,
    GripperResultCode,
    GripperState,
    HandLimits,
    missed_band_message,
)
from jtac_py.lockstep import PACKET_S

__all__ = ["SimulatedHand"]

Code = GripperResultCode

#: The device's command kinds by the Gripper's command names.
_KINDS = {"move": "move", "grasp": "grasp", "home": "homing", "stop": "stop"}
_COMMANDS = {kind: command for command, kind in _KINDS.items()}
#: Statuses after which a command has ended.
_ENDED = ("success", "unsuccessful", "blocked", "aborted")


class SimulatedHand:
    """The hand of a ``_native.MujocoDevice`` whose model has one (``device.has_hand``).

    period_s: the device's tick [s]: a state of tick n was measured at n·period_s on the robot's clock,
    the Controller's."""

    needs_polling = True
    opens_at_once = True

    def __init__(self, device: Any, limits: HandLimits = FRANKA_HAND, period_s: float = PACKET_S) -> None:
        if not device.has_hand:
            raise ValueError("SimulatedHand: the device's model has no hand (build it with hand=True)")
        self.limits = limits
        self._device = device
        self._period_s = period_s
        self._gripper: Any = None
        self._lock = threading.Lock()  # the pending commands: issuing thread and gripper's thread
        self._pending: dict[int, tuple[str, dict[str, float]]] = {}

    def open(self, gripper: Any) -> None:
        self._gripper = gripper

    def issue(self, command: str, values: dict[str, float]) -> int:
        try:
            command_id = int(self._device.hand_command(_KINDS[command], **values))
        except (TypeError, ValueError) as error:  # the device's own check, should ours miss one
            raise ValueError(f"gripper {command}: {error}") from error
        with self._lock:
            self._pending[command_id] = (command, values)
        return command_id

    def state(self) -> GripperState:
        return self._state(self._device.hand_state())

    def poll(self) -> None:
        """Reads the hand once: a state report, and the end of every pending command it shows."""
        raw = self._device.hand_state()
        gripper = self._gripper
        if gripper is None:
            return
        state = self._state(raw)
        gripper._on_state(state)
        for command_id, code, message in self._ended(raw):
            gripper._on_end(command_id, code, message, state.width_m, state.time_s)

    def close(self) -> None:
        self._gripper = None
        with self._lock:
            self._pending.clear()

    # ------------------------------------------------------------------------------------ internals
    def _ended(self, raw: Any) -> list[tuple[int, GripperResultCode, str]]:
        """The pending commands that `raw` shows ended: the newest by its status, older ones aborted."""
        newest_id, status = int(raw.command_id), _name(raw.status)
        ended = []
        with self._lock:
            for command_id in list(self._pending):
                if command_id < newest_id:
                    ended.append((command_id, Code.PREEMPTED, "aborted by a newer command"))
                elif command_id == newest_id and status in _ENDED:
                    command, values = self._pending[command_id]
                    ended.append((command_id, *_outcome(command, values, status, float(raw.width_m))))
            for command_id, _, _ in ended:
                del self._pending[command_id]
        return ended

    def _state(self, raw: Any) -> GripperState:
        gripper = self._gripper
        now_s = gripper.now() if gripper is not None else math.nan
        if gripper is not None and gripper.clock_is_robot_time:
            time_s = int(raw.tick) * self._period_s  # the tick's time on the robot's clock
            age_s = max(0.0, now_s - time_s)
        else:
            time_s, age_s = now_s, 0.0  # read now: the device's last tick, at most a period old
        running = _name(raw.status) == "running"
        return GripperState(
            width_m=float(raw.width_m),
            max_width_m=self.limits.max_width_m,
            is_grasped=bool(raw.is_grasped),
            moving=bool(raw.moving),
            temperature_c=float(_field(raw, "temperature_c", "temperature_C")),
            command=_COMMANDS.get(_name(raw.command_kind)) if running else None,
            last_error=None,
            time_s=time_s,
            age_s=age_s,
        )


def _outcome(command: str, values: dict[str, float], status: str, width_m: float) -> tuple[Code, str]:
    """A command's code and message from the hand's final status."""
    if status == "success":
        return Code.SUCCEEDED, ""
    if status == "aborted":
        return Code.PREEMPTED, "aborted by a newer command"
    if command == "grasp":
        return Code.NOT_GRASPED, missed_band_message(values, width_m)
    target_m = values.get("width_m", math.nan)
    return Code.BLOCKED, f"the fingers stopped at {width_m * 1e3:.1f} mm, short of {target_m * 1e3:.1f} mm"


def _name(value: Any) -> str:
    """An enum bound as a string or as a pybind11 enum, by its lower-case name."""
    return value if isinstance(value, str) else str(getattr(value, "name", value)).lower().lstrip("k")


def _field(raw: Any, *names: str) -> float:
    for name in names:
        if hasattr(raw, name):
            return getattr(raw, name)
    return math.nan
