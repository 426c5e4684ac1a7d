"""An action chunk: H timed joint targets of a learned policy, validated once when it is built.

Every sender builds its chunk here (``Stream.send_chunk`` from its arguments, the ROS node from a
``~/joint_trajectory`` message while it streams), so a chunk is checked in Python exactly once and
then handed to the stream's law as it is. The native law checks it again as its real-time guard
(it refuses rather than follows a malformed chunk); that is not a second Python validation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jtac_py.gripper.types import FRANKA_HAND

__all__ = ["GRIPPER_UNITS", "Chunk", "check_gripper_values"]

#: How a stream's gripper channel is given: "width_m", the width between the fingers [m]
#: (0..the hand's max width), or "fraction", 0..1 as DROID records it (0 open, 1 closed).
GRIPPER_UNITS = ("width_m", "fraction")


def _frozen(values: np.ndarray) -> np.ndarray:
    """A private read-only copy: a Chunk is immutable, its arrays included."""
    copy = np.array(values, dtype=float, copy=True)
    copy.flags.writeable = False
    return copy


def _check_times(times: np.ndarray) -> None:
    if times.ndim != 1 or times.size == 0:
        raise ValueError(f"stream times_s must be a non-empty 1-D sequence, got shape {times.shape}")
    for k, t in enumerate(times):
        if not math.isfinite(t) or t < 0.0:
            raise ValueError(f"stream times_s[{k}] must be finite and >= 0, got {t}")
        if k and t <= times[k - 1]:
            raise ValueError(
                f"stream times_s must increase strictly: times_s[{k}] = {t} after {times[k - 1]}"
            )


def check_joint_values(
    name: str, value: np.ndarray, shape: tuple[int, ...], joint_names: Sequence[str]
) -> None:
    """ValueError naming `name`, the point (for a table) and the joint when `value` is not of `shape`
    or holds a non-finite value."""
    if value.shape != shape:
        raise ValueError(f"stream {name} must have shape {shape}, got {value.shape}")
    finite = np.isfinite(value)
    if finite.all():  # every send passes here: argwhere (tens of µs) only to name a bad joint
        return
    index = tuple(int(i) for i in np.argwhere(~finite)[0])
    joint = joint_names[index[-1]]
    where = f"[{index[0]}]" if len(index) == 2 else ""
    raise ValueError(f"stream {name}{where}: joint '{joint}' is {value[index]}")


def gripper_upper_bound(units: str, max_width_m: float) -> float:
    """The largest gripper value in `units` (ValueError naming an unknown unit)."""
    if units not in GRIPPER_UNITS:
        raise ValueError(f"stream gripper_units must be one of {GRIPPER_UNITS}, got {units!r}")
    return 1.0 if units == "fraction" else float(max_width_m)


def check_gripper_values(values: np.ndarray, shape: tuple[int, ...], units: str, max_width_m: float) -> None:
    """ValueError naming the field, the point (for a chunk) and the value when `values` is not of
    `shape`, or holds a value that is not finite or outside 0..1 ("fraction") or 0..max_width_m
    ("width_m")."""
    upper = gripper_upper_bound(units, max_width_m)
    if values.shape != shape:
        raise ValueError(f"stream gripper must have shape {shape}, got {values.shape}")
    bad = np.flatnonzero(~(np.isfinite(values) & (values >= 0.0) & (values <= upper)))
    if bad.size:
        where = f"[{int(bad[0])}]" if values.ndim else ""
        value = values.flat[bad[0]]
        unit = "" if units == "fraction" else " m"
        raise ValueError(f"stream gripper{where} is {value}: must be finite and within 0..{upper:g}{unit}")


@dataclass(frozen=True, eq=False)  # arrays have no single truth value: a Chunk equals only itself
class Chunk:
    """H joint targets at times after an observation, in the controller's joint order.

    times_s: (H,) [s] after the observation, strictly increasing, >= 0;
    positions_rad: (H, n) [rad]; velocities_rad_s: (H, n) [rad/s] or None (the stream's spline
    gives them); observed_at_s: the controller time [s] of the observation the chunk was computed
    from, or None (the time the stream takes it); gripper: (H,) the hand's target at each point, in
    ``gripper_units`` ("width_m" [m] or "fraction", 0 open .. 1 closed), or None (the chunk leaves the
    hand as it is). Build it with ``Chunk.build``, which checks it.
    """

    times_s: np.ndarray
    positions_rad: np.ndarray
    velocities_rad_s: np.ndarray | None = None
    observed_at_s: float | None = None
    gripper: np.ndarray | None = None
    gripper_units: str = "width_m"

    @classmethod
    def build(
        cls,
        times_s: Sequence[float],
        positions_rad: Any,
        velocities_rad_s: Any = None,
        *,
        joint_names: Sequence[str],
        observed_at_s: float | None = None,
        gripper: Sequence[float] | None = None,
        gripper_units: str = "width_m",
        gripper_max_width_m: float = FRANKA_HAND.max_width_m,
    ) -> Chunk:
        """A checked Chunk for the joints `joint_names`; ValueError naming the field, the point, the
        joint and the value for a malformed or non-finite one. `gripper` (optional, one value per
        point) is checked against 0..1 ("fraction") or 0..gripper_max_width_m ("width_m")."""
        observed = None if observed_at_s is None else float(observed_at_s)
        if observed is not None and not math.isfinite(observed):
            raise ValueError(f"stream observed_at_s must be finite, got {observed}")
        times = np.asarray(times_s, dtype=float)
        _check_times(times)
        shape = (times.size, len(joint_names))
        q = np.asarray(positions_rad, dtype=float)
        check_joint_values("positions_rad", q, shape, joint_names)
        dq = None
        if velocities_rad_s is not None:
            dq = np.asarray(velocities_rad_s, dtype=float)
            check_joint_values("velocities_rad_s", dq, shape, joint_names)
        hand = None
        if gripper is not None:
            hand = np.asarray(gripper, dtype=float)
            check_gripper_values(hand, (times.size,), gripper_units, gripper_max_width_m)
        else:
            gripper_upper_bound(gripper_units, gripper_max_width_m)  # the unit's name checked alike
        frozen_dq = None if dq is None else _frozen(dq)
        frozen_hand = None if hand is None else _frozen(hand)
        return cls(_frozen(times), _frozen(q), frozen_dq, observed, frozen_hand, gripper_units)

    @property
    def duration_s(self) -> float:
        """The last point's time after the observation [s]."""
        return float(self.times_s[-1])
