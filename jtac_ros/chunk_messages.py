"""A JointTrajectory read as a policy's action chunk, while the node streams (docs/ros_node.md).

``chunk_from_msg`` gives the ``jtac_py.chunks.Chunk`` that ``Stream.send_chunk`` takes, in the
controller's joint order: the message's structure (joint names, sizes, which fields are present) is
read here, and ``Chunk.build`` checks the values (finite, times strictly increasing and >= 0) once,
naming the point, the joint and the value. The header stamp is put on the controller clock by the
node (``clock_offset``), which passes it in as ``observed_at_s``. ``chunk_notes`` lists the fields a
chunk accepts but ignores, for the node to log once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from jtac_py.chunks import Chunk
from jtac_ros.result_codes import INVALID_GOAL, INVALID_JOINTS, GoalConversionError
from jtac_ros.ros_time import duration_to_s

__all__ = ["chunk_from_msg", "chunk_notes"]

#: The one field a chunk ignores: its spline and blend give the command's acceleration.
ACCELERATIONS_IGNORED = (
    "~/joint_trajectory chunks: points' accelerations are ignored (the chunk's spline and "
    "blend give the command's acceleration)"
)


def _column_order(names: list[str], controller_joint_names: Sequence[str]) -> list[int]:
    """For each controller joint, its column in the message; GoalConversionError naming the joint for
    an unknown, repeated or missing one."""
    known = list(controller_joint_names)
    for k, name in enumerate(names):
        if name not in known:
            raise GoalConversionError(
                INVALID_JOINTS, f"joint_names[{k}] = '{name}' is not a joint of this controller: {known}"
            )
        if names.index(name) != k:
            raise GoalConversionError(INVALID_JOINTS, f"joint_names[{k}] = '{name}' is named twice")
    missing = [name for name in known if name not in names]
    if missing:
        # A chunk replaces the whole future: a joint it leaves out would have no target to follow.
        raise GoalConversionError(
            INVALID_JOINTS, f"joint_names lacks {missing}: a chunk must give every joint of the controller"
        )
    return [names.index(name) for name in known]


def _check_point_sizes(k: int, point: Any, n: int, with_velocities: bool) -> None:
    if len(point.positions) != n:
        raise GoalConversionError(
            INVALID_GOAL, f"points[{k}].positions has {len(point.positions)} values for {n} joints"
        )
    if len(point.velocities) != (n if with_velocities else 0):
        raise GoalConversionError(
            INVALID_GOAL,
            f"points[{k}].velocities has {len(point.velocities)} values; a chunk gives velocities "
            f"for every point ({n}) or for none",
        )
    if len(point.effort):  # jtac commands positions: an ignored effort would be another motion
        raise GoalConversionError(
            INVALID_GOAL, f"points[{k}].effort is set: this controller commands positions only"
        )


def chunk_from_msg(
    trajectory: Any, controller_joint_names: Sequence[str], *, observed_at_s: float | None = None
) -> Chunk:
    """trajectory_msgs/JointTrajectory -> the checked Chunk, reordered into controller joint order:
    times_s = each point's time_from_start [s] after the observation at ``observed_at_s`` (controller
    time [s]; None = when the stream takes it). GoalConversionError naming the field, the point and
    the joint for a malformed chunk (INVALID_JOINTS for joint names, INVALID_GOAL otherwise)."""
    names = [str(name) for name in trajectory.joint_names]
    order = _column_order(names, controller_joint_names)
    n, points = len(names), trajectory.points
    with_velocities = bool(points) and len(points[0].velocities) > 0
    times = np.empty(len(points))
    q = np.empty((len(points), n))
    dq = np.empty((len(points), n)) if with_velocities else None
    for k, point in enumerate(points):
        _check_point_sizes(k, point, n, with_velocities)
        times[k] = duration_to_s(point.time_from_start)
        q[k] = [float(point.positions[i]) for i in order]
        if dq is not None:
            dq[k] = [float(point.velocities[i]) for i in order]
    try:
        return Chunk.build(
            times, q, dq, joint_names=list(controller_joint_names), observed_at_s=observed_at_s
        )
    except ValueError as error:  # a value: non-finite, or times not increasing from 0
        raise GoalConversionError(INVALID_GOAL, str(error)) from None


def chunk_notes(trajectory: Any) -> list[str]:
    """What the chunk accepts but ignores (points' accelerations), to be logged once."""
    if any(len(point.accelerations) for point in trajectory.points):
        return [ACCELERATIONS_IGNORED]
    return []
