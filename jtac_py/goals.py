"""Goals as the core's bound types (``jtac_py.TrajectoryGoal``, ``TipGoal``, ``AdmittanceGoal``), with their
defaults in one place.

Every adapter builds its goal here: the Python API (``Controller.follow`` / ``submit`` / ``stream``),
the ROS actions (``jtac_ros.conversions``: FollowJointTrajectoryWithAdmittance, whose tips go from
their messages straight to ``build_tip_goal``, and control_msgs FollowJointTrajectory) and the goal
files of ``jtac send-goal`` (``jtac_ros.goal_file``). So an admittance given the same way gets the
same goal whichever way it came.

The defaults of a tip's admittance, all applied by ``build_tip_goal`` (and nowhere else; ``tip_goal``
passes the Python API's admittance dict to it as its arguments):

- a single number for ``mass``, ``stiffness`` or ``damping`` stands for all six axes;
- ``damping`` absent or empty, with mass and stiffness given: the critical damping
  2·sqrt(m·k) per axis [N·s/m, N·m·s/rad] (``critical_damping``, which also takes a ratio ζ);
- ``selected_axes`` absent, with mass and stiffness given: all six axes. An empty list is kept:
  it means "this tip only tracks the trajectory" (the ROS message's meaning).

Tolerances: a goal without them leaves the core's fields empty, and the core applies the parameter
defaults (``default_path_tolerance``, ``default_goal_tolerance``, ``default_goal_time_tolerance``).

Only structure is checked here (shapes, keys); every value (finiteness, signs, stability at the
update rate, unknown joints or frames) is checked by the core's goal validation, whose message names
the field, the joint and the value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jtac_py import _native

__all__ = [
    "TIP_KEYS",
    "Trajectory",
    "as_jtac_goal",
    "build_tip_goal",
    "critical_damping",
    "jtac_goal",
    "per_joint",
    "tip_goal",
    "tip_goals",
    "trajectory_goal",
]

#: The keys of one tip's admittance (the fields of ``_native.TipGoal``).
TIP_KEYS = (
    "end_effector_frame",
    "mass",
    "stiffness",
    "damping",
    "selected_axes",
    "ee_pose_control",
    "end_effector_mass_kg",
    "end_effector_cog_m",
    "absolute_force_torque_threshold",
)

_TRAJECTORY_KEYS = (
    "joint_names",
    "points",
    "start_time_s",
    "path_tolerance_rad",
    "goal_tolerance_rad",
    "goal_time_tolerance_s",
)
_POINT_KEYS = ("time_from_start_s", "positions_rad", "velocities_rad_s", "accelerations_rad_s2", "effort")
# A point may also be written the way a ROS JointTrajectoryPoint names its fields.
_ROS_POINT_KEYS = {
    "positions": "positions_rad",
    "velocities": "velocities_rad_s",
    "accelerations": "accelerations_rad_s2",
    "time_from_start": "time_from_start_s",
}


# ================================================================================ trajectories


@dataclass
class Trajectory:
    """A joint trajectory: waypoints at times_s [s] (from the start), positions_rad (n, joints).

    velocities_rad_s / accelerations_rad_s2 are optional (n, joints) arrays; without them the core
    interpolates (see docs/trajectory_engine.md). joint_names default to the controller's joints.
    """

    times_s: Sequence[float]
    positions_rad: Any
    velocities_rad_s: Any = None
    accelerations_rad_s2: Any = None
    joint_names: Sequence[str] | None = None

    @classmethod
    def quintic(
        cls,
        start_rad: Sequence[float],
        goal_rad: Sequence[float],
        duration_s: float,
        *,
        samples: int = 50,
        joint_names: Sequence[str] | None = None,
    ) -> Trajectory:
        """A rest-to-rest quintic from start to goal over duration_s, sampled at `samples` points."""
        if not (duration_s > 0.0 and math.isfinite(duration_s)):
            raise ValueError(f"duration_s must be finite and > 0, got {duration_s!r}")
        start = np.asarray(start_rad, float)
        delta = np.asarray(goal_rad, float) - start
        s = np.linspace(0.0, 1.0, max(2, int(samples)) + 1)[1:]
        p = 10 * s**3 - 15 * s**4 + 6 * s**5
        v = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration_s
        a = (60 * s - 180 * s**2 + 120 * s**3) / duration_s**2
        return cls(
            times_s=s * duration_s,
            positions_rad=start + np.outer(p, delta),
            velocities_rad_s=np.outer(v, delta),
            accelerations_rad_s2=np.outer(a, delta),
            joint_names=joint_names,
        )

    def to_goal(self, default_joint_names: Sequence[str]) -> Any:
        """The core's ``TrajectoryGoal``; ValueError naming the field when a shape is wrong."""
        names = list(self.joint_names) if self.joint_names is not None else list(default_joint_names)
        times = np.asarray(self.times_s, dtype=float).reshape(-1)
        n = len(times)

        def table(value: Any, name: str) -> np.ndarray | None:
            if value is None:
                return None
            a = np.asarray(value, dtype=float)
            if a.ndim == 1 and len(names) == 1:
                a = a.reshape(-1, 1)
            if a.shape != (n, len(names)):
                raise ValueError(
                    f"trajectory.{name} must have shape ({n}, {len(names)}) "
                    f"(waypoints, joints), got {a.shape}"
                )
            return a

        q = table(self.positions_rad, "positions_rad")
        dq = table(self.velocities_rad_s, "velocities_rad_s")
        ddq = table(self.accelerations_rad_s2, "accelerations_rad_s2")
        points = [
            _native.GoalPoint(
                float(times[k]),
                q[k].tolist(),
                None if dq is None else dq[k].tolist(),
                None if ddq is None else ddq[k].tolist(),
            )
            for k in range(n)
        ]
        return _native.TrajectoryGoal(names, points)


def _unknown_key(where: str, key: Any, known: Sequence[str]) -> ValueError:
    return ValueError(f"{where}: unknown key '{key}' ({', '.join(known)})")


def _check_keys(fields: Mapping[str, Any], where: str, known: Sequence[str]) -> None:
    for key in fields:
        if key not in known:
            raise _unknown_key(where, key, known)


def _typed(cls: Any, fields: Mapping[str, Any], where: str, known: Sequence[str]) -> Any:
    """``cls(**fields)`` (a bound goal type) once every key is one of `known`; ValueError naming
    `where` and the key otherwise, and `where` before the field in the constructor's ValueError."""
    if not isinstance(fields, Mapping):
        raise TypeError(f"{where} must be a {cls.__name__} or a dict, got {type(fields).__name__}")
    _check_keys(fields, where, known)
    try:
        return cls(**fields)
    except ValueError as error:
        raise ValueError(f"{where}.{error}") from None


def _goal_point(point: Any, where: str) -> Any:
    """A GoalPoint from a GoalPoint or a dict (the core's field names or a ROS point's); an absent
    time or position is the C++ struct's (0 s, none: the core's validation names it)."""
    if isinstance(point, _native.GoalPoint):
        return point
    if not isinstance(point, Mapping):
        raise TypeError(f"{where} must be a GoalPoint or a dict, got {type(point).__name__}")
    fields = {_ROS_POINT_KEYS.get(k, k): v for k, v in point.items()}
    _check_keys(fields, where, _POINT_KEYS)
    fields.setdefault("time_from_start_s", 0.0)
    fields.setdefault("positions_rad", None)
    return _typed(_native.GoalPoint, fields, where, _POINT_KEYS)


def _trajectory_of(trajectory: Mapping[str, Any], where: str, joint_names: Sequence[str]) -> Any:
    """A TrajectoryGoal from the mapping of its fields (points: _goal_point); joint_names when the
    mapping has none."""
    fields = dict(trajectory)
    _check_keys(fields, where, _TRAJECTORY_KEYS)
    names = fields.get("joint_names")
    fields["joint_names"] = list(joint_names if names is None else names)
    points = fields.get("points") or []
    fields["points"] = [_goal_point(p, f"{where}.points[{i}]") for i, p in enumerate(points)]
    return _typed(_native.TrajectoryGoal, fields, where, _TRAJECTORY_KEYS)


def trajectory_goal(trajectory: Any, joint_names: Sequence[str]) -> Any:
    """A ``TrajectoryGoal`` from a Trajectory, a TrajectoryGoal (as is) or a dict with the
    TrajectoryGoal's fields (its points with the core's names or a ROS point's: positions, velocities,
    accelerations, time_from_start [s]); joint_names default to `joint_names`."""
    if isinstance(trajectory, Trajectory):
        return trajectory.to_goal(joint_names)
    if isinstance(trajectory, _native.TrajectoryGoal):
        return trajectory
    if not isinstance(trajectory, Mapping):
        raise TypeError(f"trajectory must be a Trajectory or a dict, got {type(trajectory).__name__}")
    return _trajectory_of(trajectory, "trajectory", joint_names)


def per_joint(value: Any, name: str, joints: Sequence[str]) -> list[float]:
    """A number (every joint) or one value per joint as a list [rad]; ValueError naming `name`."""
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        a = np.full(len(joints), float(a))
    if a.shape != (len(joints),):
        raise ValueError(f"tolerances.{name} must be a number or {len(joints)} numbers, got shape {a.shape}")
    return a.tolist()


def _set_tolerances(goal: Any, tolerances: Mapping[str, Any] | None) -> None:
    """{"path": rad, "goal": rad, "goal_time": s} onto `goal`; absent keys keep the core's defaults."""
    if not tolerances:
        return
    unknown = set(tolerances) - {"path", "goal", "goal_time"}
    if unknown:
        raise ValueError(f"tolerances: unknown key(s) {sorted(unknown)} (path, goal, goal_time)")
    names = goal.joint_names
    if "path" in tolerances:
        goal.path_tolerance_rad = per_joint(tolerances["path"], "path", names)
    if "goal" in tolerances:
        goal.goal_tolerance_rad = per_joint(tolerances["goal"], "goal", names)
    if "goal_time" in tolerances:
        goal.goal_time_tolerance_s = float(tolerances["goal_time"])


# ================================================================================ admittance


def critical_damping(mass: Any, stiffness: Any, ratio: Any = 1.0) -> list[float]:
    """D = 2·ζ·sqrt(m·k) per axis [N·s/m, N·m·s/rad] from mass [kg, kg·m²], stiffness [N/m, N·m/rad]
    and the damping ratio ζ (1 = critical; a number or one per axis). A product m·k below zero counts
    as zero; a non-finite one gives NaN, which the core's validation refuses naming the axis."""
    m, k = np.asarray(mass, float), np.asarray(stiffness, float)
    with np.errstate(invalid="ignore"):
        return (2.0 * np.asarray(ratio, float) * np.sqrt(np.clip(m * k, 0.0, None))).tolist()


def _is_given(value: Any) -> bool:
    return value is not None and not (np.ndim(value) > 0 and np.size(value) == 0)


def build_tip_goal(
    *,
    end_effector_frame: str | None = None,
    mass: Any = None,
    stiffness: Any = None,
    damping: Any = None,
    selected_axes: Sequence[bool] | None = None,
    ee_pose_control: Any = None,
    end_effector_mass_kg: float | None = None,
    end_effector_cog_m: Any = None,
    absolute_force_torque_threshold: Any = None,
    index: int = 0,
) -> Any:
    """One tip's ``TipGoal`` from its fields (TIP_KEYS; None = not given, the TipGoal's
    default), with the defaults of the module docstring. ValueError naming ``tips[index]`` and the
    field for a shape the TipGoal cannot take."""
    fields = {
        "end_effector_frame": end_effector_frame,
        "mass": _six_axes(mass),
        "stiffness": _six_axes(stiffness),
        "damping": _six_axes(damping),
        "selected_axes": selected_axes,
        "ee_pose_control": ee_pose_control,
        "end_effector_mass_kg": end_effector_mass_kg,
        "end_effector_cog_m": end_effector_cog_m,
        "absolute_force_torque_threshold": absolute_force_torque_threshold,
    }
    if fields["mass"] is not None and fields["stiffness"] is not None:
        m, k = np.asarray(fields["mass"], float), np.asarray(fields["stiffness"], float)
        fields["mass"], fields["stiffness"] = m.tolist(), k.tolist()
        if not _is_given(fields["damping"]) and m.shape == k.shape:
            fields["damping"] = critical_damping(m, k)
        if fields["selected_axes"] is None:
            fields["selected_axes"] = [True] * 6
    try:
        return _native.TipGoal(**{name: value for name, value in fields.items() if value is not None})
    except ValueError as error:
        raise ValueError(f"tips[{index}].{error}") from None


def _six_axes(value: Any) -> Any:
    """A single number stands for all six axes."""
    return [float(value)] * 6 if value is not None and np.ndim(value) == 0 else value


def tip_goal(admittance: Any, index: int = 0) -> Any:
    """One tip's ``TipGoal`` from a TipGoal (as is) or a mapping of TIP_KEYS (the Python API's
    admittance dict), whose entries are build_tip_goal's arguments. ValueError naming ``tips[index]``
    and the key for a key that is not a tip's field."""
    if isinstance(admittance, _native.TipGoal):
        return admittance
    if not isinstance(admittance, Mapping):
        raise TypeError(f"tips[{index}] must be a TipGoal or a dict, got {type(admittance).__name__}")
    _check_keys(admittance, f"tips[{index}]", TIP_KEYS)
    return build_tip_goal(**admittance, index=index)


def tip_goals(admittance: Any) -> list[Any]:
    """Every tip's TipGoal from None (no tip), one tip (a dict or a TipGoal) or a sequence of them."""
    if admittance is None:
        return []
    if isinstance(admittance, Mapping | _native.TipGoal):
        return [tip_goal(admittance, 0)]
    return [tip_goal(a, i) for i, a in enumerate(admittance)]


# ================================================================================ goals


#: A goal's joint damping when none is given [1/s]: the C++ ``JtacGoal``'s default, read from the
#: bound struct (no Python constant repeats it).
DEFAULT_JOINT_DAMPING_PER_S: float = _native.JtacGoal(_native.TrajectoryGoal([], [])).joint_damping_per_s


def jtac_goal(
    trajectory: Any,
    joint_names: Sequence[str],
    *,
    admittance: Any = None,
    tolerances: Mapping[str, Any] | None = None,
    thresholds: Sequence[float] | None = None,
    joint_damping_per_s: float = DEFAULT_JOINT_DAMPING_PER_S,
) -> Any:
    """The ``AdmittanceGoal`` of ``Controller.follow``'s arguments (see docs/python_api.md):
    trajectory (trajectory_goal; joint_names = the controller's), admittance (tip_goals), tolerances
    {"path": rad, "goal": rad, "goal_time": s} (a number or one per joint; absent = the parameter
    defaults), thresholds Fx Fy Fz Tx Ty Tz [N, N·m] (None = the parameter default) and
    joint_damping_per_s [1/s]."""
    goal = _native.JtacGoal(
        trajectory_goal(trajectory, joint_names),
        tips=tip_goals(admittance),
        joint_damping_per_s=float(joint_damping_per_s),
        absolute_force_torque_threshold=None if thresholds is None else list(thresholds),
    )
    if tolerances:
        # JtacGoal holds a copy: a TrajectoryGoal passed in is left as it was.
        copy = goal.trajectory
        _set_tolerances(copy, tolerances)
        goal.trajectory = copy
    return goal


#: The arguments of ``_native.JtacGoal``'s constructor.
_JTAC_GOAL_KEYS = ("trajectory", "tips", "joint_damping_per_s", "absolute_force_torque_threshold")


def as_jtac_goal(goal: Any) -> Any:
    """The ``AdmittanceGoal`` that ``Controller.submit`` takes: a JtacGoal as is, or the mapping of
    its constructor's arguments with each field as given (none of follow()'s defaults; an absent
    field is the C++ struct's): trajectory a TrajectoryGoal or the mapping of its fields, points
    GoalPoints or theirs; tips TipGoals or mappings of TIP_KEYS. ValueError naming where and the key
    for an unknown key or a missing trajectory; TypeError for a goal of another type."""
    if isinstance(goal, _native.JtacGoal):
        return goal
    if not isinstance(goal, Mapping):
        raise TypeError(f"goal must be a JtacGoal or a dict, got {type(goal).__name__}")
    _check_keys(goal, "goal", _JTAC_GOAL_KEYS)
    if "trajectory" not in goal:
        raise ValueError("goal: 'trajectory' is missing")
    fields = dict(goal)
    if isinstance(fields["trajectory"], Mapping):
        fields["trajectory"] = _trajectory_of(fields["trajectory"], "goal.trajectory", [])
    tips = fields.get("tips") or []
    fields["tips"] = [
        t if isinstance(t, _native.TipGoal) else _typed(_native.TipGoal, t, f"tips[{i}]", TIP_KEYS)
        for i, t in enumerate(tips)
    ]
    return _typed(_native.JtacGoal, fields, "goal", _JTAC_GOAL_KEYS)
