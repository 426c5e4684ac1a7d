"""The one place that builds an arm from parameter values (``hardware``, ``robot``, ``robot_ip``,
``late_commands``, ``hand``): the Controller without an arm given and the ROS node both call ``build_arm``.
``hand`` may be absent (a mapping written before it existed): no hand.

A new backend is a builder in ``ARM_BUILDERS`` (and its name in the ``hardware`` parameter's
``one_of`` in ``params/``); what it returns must implement ``jtac_py.hardware.Arm``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jtac_py.hardware import Arm, FrankaArm, SimulatedArm

__all__ = ["ARM_BUILDERS", "build_arm"]


def _simulated_arm(values: Mapping[str, Any]) -> Arm:
    """The simulated arm on its own 1 kHz clock, as a real one runs (lockstep is built by hand); with
    ``hand`` the Franka Hand is in its model."""
    return SimulatedArm(values["robot"], clock="realtime", hand=bool(values.get("hand", False)))


def _franka_arm(values: Mapping[str, Any]) -> Arm:
    """Connects to the control unit at robot_ip (and with ``hand`` to its hand); the motion starts
    with Controller.start()."""
    return FrankaArm(
        values["robot_ip"],
        robot=values["robot"],
        late_commands=values["late_commands"],
        hand=bool(values.get("hand", False)),
    )


#: The builder of each value of the ``hardware`` parameter: parameter values -> a connected Arm.
ARM_BUILDERS: dict[str, Callable[[Mapping[str, Any]], Arm]] = {
    "sim": _simulated_arm,
    "franka": _franka_arm,
}


def build_arm(values: Mapping[str, Any]) -> Arm:
    """The arm the parameter values describe (resolved values, e.g. ``jtac_py.config.resolve()``'s).

    ValueError for a ``hardware`` value no builder knows (the schema refuses it earlier)."""
    hardware = values["hardware"]
    builder = ARM_BUILDERS.get(hardware)
    if builder is None:
        raise ValueError(f"hardware must be one of {sorted(ARM_BUILDERS)}, got {hardware!r}")
    return builder(values)
