"""ROS time messages <-> seconds: builtin_interfaces Time and Duration, rclpy's Time, plain numbers."""

from __future__ import annotations

import math
import numbers
from typing import Any

from builtin_interfaces.msg import Duration, Time

__all__ = ["as_time_msg", "duration_to_s", "s_to_duration", "s_to_time", "seconds_between", "time_to_s"]


def _as_msg(stamp: Any) -> Any:
    """An rclpy Time/Duration as its message; anything else as is."""
    return stamp.to_msg() if hasattr(stamp, "to_msg") else stamp


def time_to_s(stamp: Any) -> float:
    """builtin_interfaces/Time (or an rclpy Time, or anything with sec and nanosec) -> seconds; a number
    is returned as a float."""
    if isinstance(stamp, numbers.Real):
        return float(stamp)
    stamp = _as_msg(stamp)
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


def duration_to_s(duration: Any) -> float:
    """builtin_interfaces/Duration -> seconds (sec may be negative; nanosec is always added)."""
    return time_to_s(duration)


def _sec_nanosec(seconds: float) -> tuple[int, int]:
    if not math.isfinite(seconds):
        raise ValueError(f"cannot represent {seconds!r} s as sec/nanosec")
    sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
    return int(sec), int(nanosec)


def s_to_duration(seconds: float) -> Duration:
    """Seconds -> builtin_interfaces/Duration (nanosec in [0, 1e9), rounded to the nanosecond)."""
    sec, nanosec = _sec_nanosec(float(seconds))
    return Duration(sec=sec, nanosec=nanosec)


def s_to_time(seconds: float) -> Time:
    """Seconds -> builtin_interfaces/Time (nanosec in [0, 1e9), rounded to the nanosecond)."""
    sec, nanosec = _sec_nanosec(float(seconds))
    return Time(sec=sec, nanosec=nanosec)


def as_time_msg(stamp: Any) -> Time:
    """A header stamp from a Time message, an rclpy Time or seconds."""
    return s_to_time(stamp) if isinstance(stamp, numbers.Real) else _as_msg(stamp)


def seconds_between(later: Any, earlier: Any) -> float:
    """later - earlier [s]; exact in integers when both are times (not plain seconds)."""
    later, earlier = _as_msg(later), _as_msg(earlier)
    if hasattr(later, "sec") and hasattr(earlier, "sec"):
        return (later.sec - earlier.sec) + (int(later.nanosec) - int(earlier.nanosec)) * 1e-9
    return time_to_s(later) - time_to_s(earlier)
