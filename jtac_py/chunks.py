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

__all__ = ["Chunk"]


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
    bad = np.argwhere(~np.isfinite(value))
    if bad.size:
        index = tuple(int(i) for i in bad[0])
        joint = joint_names[index[-1]]
        where = f"[{index[0]}]" if len(index) == 2 else ""
        raise ValueError(f"stream {name}{where}: joint '{joint}' is {value[index]}")


@dataclass(frozen=True, eq=False)  # arrays have no single truth value: a Chunk equals only itself
class Chunk:
    """H joint targets at times after an observation, in the controller's joint order.

    times_s: (H,) [s] after the observation, strictly increasing, >= 0;
    positions_rad: (H, n) [rad]; velocities_rad_s: (H, n) [rad/s] or None (the stream's spline
    gives them); observed_at_s: the controller time [s] of the observation the chunk was computed
    from, or None (the time the stream takes it). Build it with ``Chunk.build``, which checks it.
    """

    times_s: np.ndarray
    positions_rad: np.ndarray
    velocities_rad_s: np.ndarray | None = None
    observed_at_s: float | None = None

    @classmethod
    def build(
        cls,
        times_s: Sequence[float],
        positions_rad: Any,
        velocities_rad_s: Any = None,
        *,
        joint_names: Sequence[str],
        observed_at_s: float | None = None,
    ) -> Chunk:
        """A checked Chunk for the joints `joint_names`; ValueError naming the field, the point, the
        joint and the value for a malformed or non-finite one."""
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
        return cls(_frozen(times), _frozen(q), None if dq is None else _frozen(dq), observed)

    @property
    def duration_s(self) -> float:
        """The last point's time after the observation [s]."""
        return float(self.times_s[-1])
