"""A stream on every arm of an ArmGroup (``ArmGroup.stream()``): all the group's joints, one group time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from jtac_py.chunks import check_joint_values
from jtac_py.streaming import Stream

if TYPE_CHECKING:
    from jtac_py.arm_group import ArmGroup

__all__ = ["GroupStream"]


class GroupStream:
    """A stream on every arm of the group (ArmGroup.stream()), taking targets and chunks for all the
    group's joints (``joint_names``) with one time on the group clock, split and mapped to each arm's
    controller clock. A context manager; close() closes every arm's stream.

    When an arm stops by itself, send() and send_chunk() raise RuntimeError naming it (with the
    "brake" policy the other arms' streams have braked to rest and must be opened anew)."""

    def __init__(self, group: ArmGroup, streams: dict[str, Stream]) -> None:
        self._group = group
        self.streams = streams

    def now(self) -> float:
        """The group time now [s] (the clock of sampled_at_s and observed_at_s)."""
        return self._group.now()

    @property
    def active(self) -> bool:
        return all(s.active for s in self.streams.values())

    def _check(self) -> None:
        fault = self._group.fault
        if fault is not None:
            raise RuntimeError(
                f"arm '{fault.arm}' of the group stopped by itself ({fault.message}): "
                "close this stream and recover that arm first"
            )

    def send(
        self,
        q_rad: Sequence[float],
        dq_rad_s: Sequence[float] | None = None,
        *,
        sampled_at_s: float | None = None,
        gripper: Any = None,
    ) -> None:
        """Stream.send() for all the group's joints [rad] (and velocities [rad/s]) at group time
        ``sampled_at_s`` (default now); ``gripper``: one value per arm (or {arm: value}). Everything is
        checked before any arm gets its part (ValueError naming the group's joint, nothing sent)."""
        stamp = self.now() if sampled_at_s is None else float(sampled_at_s)
        self._check()
        names = self._group.joint_names
        q = np.asarray(q_rad, dtype=float)
        check_joint_values("q_rad", q, (len(names),), names)
        dq = None if dq_rad_s is None else np.asarray(dq_rad_s, dtype=float)
        if dq is not None:
            check_joint_values("dq_rad_s", dq, (len(names),), names)
        hands = self._group._per_arm_gripper(gripper, ())
        for stream in self.streams.values():
            stream._check_open()
        for arm, stream in self.streams.items():
            cut = self._group._columns(arm)
            stream.send(
                q[cut],
                None if dq is None else dq[cut],
                sampled_at_s=self._group.arm_time(arm, stamp),
                gripper=hands.get(arm),
            )

    def send_chunk(
        self,
        times_s: Sequence[float],
        positions_rad: Any,
        velocities_rad_s: Any = None,
        *,
        observed_at_s: float | None = None,
        gripper: Any = None,
    ) -> None:
        """Stream.send_chunk() for all the group's joints: positions (H, joints) [rad] (velocities
        optional) at times_s (H,) [s] after the group time ``observed_at_s`` (default now), one
        observation for every arm; ``gripper``: (H, arms) (or {arm: (H,)}). Checked whole before any
        arm gets its part (ValueError naming field, point and the group's joint; nothing sent)."""
        observed = self.now() if observed_at_s is None else float(observed_at_s)
        if not math.isfinite(observed):
            raise ValueError(f"stream observed_at_s must be finite, got {observed}")
        self._check()
        names = self._group.joint_names
        times = np.asarray(times_s, dtype=float)
        shape = (times.size, len(names))
        q = np.asarray(positions_rad, dtype=float)
        check_joint_values("positions_rad", q, shape, names)
        dq = None if velocities_rad_s is None else np.asarray(velocities_rad_s, dtype=float)
        if dq is not None:
            check_joint_values("velocities_rad_s", dq, shape, names)
        hands = self._group._per_arm_gripper(gripper, (times.size,))
        for stream in self.streams.values():
            stream._check_open()
        for arm, stream in self.streams.items():
            cut = self._group._columns(arm)
            stream.send_chunk(
                times,
                q[:, cut],
                None if dq is None else dq[:, cut],
                observed_at_s=self._group.arm_time(arm, observed),
                gripper=hands.get(arm),
            )

    def brake(self) -> None:
        """Every arm's stream brakes to rest (Stream.brake())."""
        for stream in self.streams.values():
            stream.brake()

    def close(self) -> None:
        """Closes every arm's stream (each brakes to rest and returns to trajectory execution)."""
        for arm, stream in self.streams.items():
            if self._group.controllers[arm].hardware_error is None:
                stream.close()

    def __enter__(self) -> GroupStream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
