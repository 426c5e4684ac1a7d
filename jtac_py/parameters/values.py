"""What jtac reads from a validated value set beyond single parameters: tips' sensors, per-joint defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def tip_ft_sensor_names(values: Mapping[str, Any]) -> list[str]:
    """The F/T sensor of each tip, in sensor_frames order ("" = that tip has no sensor, no admittance)."""
    return [
        values.get(f"ft_sensors.{frame}.name") or values.get("ft_sensor_name", "")
        for frame in values.get("sensor_frames", [])
    ]


def admittance_enabled(values: Mapping[str, Any]) -> bool:
    """True if at least one tip has a force/torque sensor, i.e. the controller runs its admittance."""
    return any(tip_ft_sensor_names(values))


def default_joint_tolerances(values: Mapping[str, Any]) -> tuple[list[float], list[float]]:
    """Default (path, goal) tolerance of each joint in joints order [rad], per-joint values over global."""
    path = [
        values.get(f"constraints.{joint}.path_tolerance") or values["default_path_tolerance"]
        for joint in values["joints"]
    ]
    goal = [
        values.get(f"constraints.{joint}.goal_tolerance") or values["default_goal_tolerance"]
        for joint in values["joints"]
    ]
    return path, goal
