"""Goal files: a FollowJointTrajectoryWithAdmittance goal written as YAML, for ``jtac send-goal``.

Format (every key but ``joint_names`` and ``points`` is optional; times in seconds, angles in rad)::

    joint_names: [fr3_joint1, fr3_joint2, fr3_joint3, fr3_joint4, fr3_joint5, fr3_joint6, fr3_joint7]
    points:                       # at least one; positions required, one value per joint
      - positions: [0.2, -0.635, 0.0, -2.206, 0.0, 1.721, 0.985]
        velocities: [0.21, 0.16, 0.0, 0.16, 0.0, 0.16, 0.21]   # optional: cubic segments
        accelerations: [0, 0, 0, 0, 0, 0, 0]                  # optional: quintic segments
        time_from_start: 1.5
      - positions: [0.4, -0.485, 0.0, -2.056, 0.0, 1.871, 1.185]
        time_from_start: 3.0
    start_delay: 0.5              # header stamp = now + 0.5 s; absent = zero stamp = start now
    tolerances:
      path: 0.1                   # one number for every joint, or a list with one per joint [rad]
      goal: [0.01, 0.01, 0.01, 0.01, 0.02, 0.02, 0.02]
      goal_time: 1.0              # settling time after the end [s]
    thresholds: [45, 45, 45, 10, 10, 10]   # abort above this filtered wrench [N, N, N, Nm, Nm, Nm]
    admittance:                   # one tip (a mapping) or several (a list: the first is
      mass: [4, 4, 4, 1, 1, 1]    # admittance_parameters, the rest additional_tips)
      stiffness: [400, 400, 400, 50, 50, 50]   # a number applies to all six axes
      # damping: [...]            # absolute; default critical: 2·sqrt(mass·stiffness) per axis
      # damping_ratio: 0.7        # or a ratio ζ: damping = 2·ζ·sqrt(mass·stiffness)
      selected_axes: [true, true, true, false, false, false]
      joint_damping: 0.0
      ee_pose_control: {position: [0, 0, 0.1], orientation: [0, 0, 0, 1]}   # x, y, z, w
      end_effector_frame: fr3_ee
      end_effector_mass: 0.5      # payload [kg]
      end_effector_cog: [0, 0, 0.05]
      thresholds: [30, 30, 30, 8, 8, 8]   # this tip's own threshold (jtac extension)

Six-vectors are ordered ``[x, y, z, rx, ry, rz]`` in the tip's control frame. A trajectory point's
velocities and accelerations are empty (absent) or have one value per joint.

Only the structure is checked here: keys, types, lengths. Numeric validity (NaN, limits, increasing
times, positive masses) is the controller's job; it comes back as the action's result message.
Errors raise GoalFileError, whose message starts with ``FILE:LINE:`` (``FILE:`` when the line is
unknown, ``<dict>:`` for goal_from_dict) and names the key and the offending value.

The same file can be sent as a control_msgs/FollowJointTrajectory goal (``GoalSpec.moveit_goal``),
without ``admittance`` and ``thresholds``: the tolerances become JointTolerance position values.
"""

from __future__ import annotations

import difflib
import math
import numbers
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from builtin_interfaces.msg import Duration, Time
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from jtac.action import FollowJointTrajectoryWithAdmittance
from jtac.msg import AdmittanceParameters
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from jtac_py import goals
from jtac_py.parameters import RosYamlLoader

__all__ = [
    "GoalFileError",
    "GoalSpec",
    "goal_from_dict",
    "load_goal_file",
    "read_goal_file",
    "spec_from_dict",
]

_TOP_KEYS = ("joint_names", "points", "start_delay", "tolerances", "thresholds", "admittance")
_POINT_KEYS = ("positions", "velocities", "accelerations", "time_from_start")
_TOLERANCE_KEYS = ("path", "goal", "goal_time")
_TIP_KEYS = (
    "mass",
    "stiffness",
    "damping",
    "damping_ratio",
    "selected_axes",
    "joint_damping",
    "ee_pose_control",
    "end_effector_frame",
    "end_effector_mass",
    "end_effector_cog",
    "thresholds",
)
_POSE_KEYS = ("position", "orientation")
_AXES = "[x, y, z, rx, ry, rz]"
_WRENCH = "[Fx, Fy, Fz, Tx, Ty, Tz]"
# Keys a control_msgs/FollowJointTrajectory goal has no field for.
_JTAC_ONLY_KEYS = ("admittance", "thresholds")

_Path = tuple[str | int, ...]


class GoalFileError(ValueError):
    """A goal file (or dict) that does not have the goal structure; the message says where and why."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None, key: str = ""):
        self.message = message
        self.source = source
        self.line = line
        self.key = key
        where = f"{source}:{line}" if source and line else source
        super().__init__(f"{where}: {message}" if where else message)


# Reads 1e-3 as a float like ROS's own parser; the same loader as the parameter files.
_Loader = RosYamlLoader


def _key_text(path: _Path) -> str:
    """``("points", 2, "positions")`` -> ``points[2].positions``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "<top level>"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


class _Doc:
    """The parsed document's source name and the line of every key and list item, by path."""

    def __init__(self, source: str, lines: Mapping[_Path, int] | None = None):
        self.source = source
        self.lines = dict(lines or {})

    def error(self, path: _Path, message: str) -> GoalFileError:
        line = None
        for end in range(len(path), -1, -1):  # the key itself, else its closest ancestor with a line
            line = self.lines.get(path[:end])
            if line is not None:
                break
        return GoalFileError(message, source=self.source, line=line, key=_key_text(path))

    # --- typed readers -------------------------------------------------------------------------------
    def mapping(self, value: Any, path: _Path, known: Sequence[str], required: Sequence[str] = ()) -> dict:
        if not isinstance(value, dict):
            raise self.error(
                path, f"{_key_text(path)} must be a mapping, got {_show(value)} ({_type_name(value)})"
            )
        for key in value:
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                where = f" in {_key_text(path)}" if path else ""
                raise self.error(
                    (*path, key), f"unknown key '{key}'{where}{hint}; known keys: {', '.join(known)}"
                )
        for key in required:
            if key not in value:
                where = f"{_key_text(path)} " if path else ""
                raise self.error(path, f"{where}is missing the required key '{key}'")
        return value

    def number(self, value: Any, path: _Path) -> float:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
        raise self.error(
            path, f"{_key_text(path)} must be a number, got {_show(value)} ({_type_name(value)})"
        )

    def numbers(
        self, value: Any, path: _Path, size: int | None = None, what: str = "", scalar_ok: bool = False
    ) -> list[float]:
        """A list of numbers, of length ``size`` when given; with scalar_ok a number is repeated."""
        if scalar_ok and size is not None and isinstance(value, numbers.Real) and not isinstance(value, bool):
            return [float(value)] * size
        if not isinstance(value, list):
            shape = f"a list of {size} numbers" if size is not None else "a list of numbers"
            if scalar_ok:
                shape = f"a number or {shape}"
            raise self.error(
                path, f"{_key_text(path)} must be {shape}{what}, got {_show(value)} ({_type_name(value)})"
            )
        if size is not None and len(value) != size:
            raise self.error(
                path, f"{_key_text(path)} must have {size} values{what}, got {len(value)}: {_show(value)}"
            )
        return [self.number(v, (*path, i)) for i, v in enumerate(value)]

    def bools(self, value: Any, path: _Path, size: int, what: str = "") -> list[bool]:
        if not isinstance(value, list) or len(value) != size:
            got = f"{len(value)} values: {_show(value)}" if isinstance(value, list) else _show(value)
            raise self.error(path, f"{_key_text(path)} must be a list of {size} booleans{what}, got {got}")
        for i, v in enumerate(value):
            if not isinstance(v, bool):
                raise self.error(
                    (*path, i),
                    f"{_key_text((*path, i))} must be true or false, got {_show(v)} ({_type_name(v)})",
                )
        return list(value)

    def string(self, value: Any, path: _Path) -> str:
        if isinstance(value, str):
            return value
        raise self.error(
            path, f"{_key_text(path)} must be a string, got {_show(value)} ({_type_name(value)})"
        )

    def duration(self, value: Any, path: _Path) -> Duration:
        seconds = self.number(value, path)
        nanoseconds = _seconds_to_ns(seconds)
        if nanoseconds is None:
            raise self.error(path, f"{_key_text(path)} = {_show(value)} is not a representable time [s]")
        sec, nanosec = divmod(nanoseconds, 1_000_000_000)
        return Duration(sec=sec, nanosec=nanosec)


def _seconds_to_ns(seconds: float) -> int | None:
    """Seconds as integer nanoseconds, or None when it does not fit a ROS Duration/Time (int32 seconds)."""
    if not math.isfinite(seconds) or abs(seconds) >= 2**31 - 1:
        return None
    return round(seconds * 1e9)


@dataclass
class GoalSpec:
    """A parsed goal file: the goal message (stamp still zero) and what the message cannot hold."""

    goal: FollowJointTrajectoryWithAdmittance.Goal
    #: Seconds from the moment of sending to the trajectory start; None = zero stamp (start now).
    start_delay: float | None
    #: Where it came from (file name or "<dict>"), for messages.
    source: str
    #: The jtac-only keys present (admittance, thresholds) and their lines, for the --moveit check.
    jtac_only: list[tuple[str, int | None]] = field(default_factory=list)

    @property
    def joint_names(self) -> list[str]:
        """The trajectory's joint names."""
        return list(self.goal.trajectory.joint_names)

    @property
    def duration_s(self) -> float:
        """time_from_start of the last point [s] (the nominal trajectory duration)."""
        last = self.goal.trajectory.points[-1].time_from_start
        return last.sec + last.nanosec * 1e-9

    def stamp(self, now_ns: int | None = None) -> Time:
        """The header stamp to send: zero without start_delay, else now + start_delay (system time)."""
        if self.start_delay is None:
            return Time()
        now = time.time_ns() if now_ns is None else now_ns
        sec, nanosec = divmod(now + round(self.start_delay * 1e9), 1_000_000_000)
        return Time(sec=sec, nanosec=nanosec)

    def jtac_goal(self, now_ns: int | None = None) -> FollowJointTrajectoryWithAdmittance.Goal:
        """The FollowJointTrajectoryWithAdmittance goal, stamped for sending at now_ns (default: now)."""
        self.goal.trajectory.header.stamp = self.stamp(now_ns)
        return self.goal

    def moveit_goal(self, now_ns: int | None = None) -> FollowJointTrajectory.Goal:
        """The same trajectory and tolerances as a control_msgs/FollowJointTrajectory goal.

        Raises GoalFileError when the file has keys that goal cannot carry (admittance, thresholds).
        """
        if self.jtac_only:
            key, line = self.jtac_only[0]
            raise GoalFileError(
                f"'{key}' has no field in control_msgs/FollowJointTrajectory (--moveit): remove it, or send "
                "the goal to the FollowJointTrajectoryWithAdmittance action (without --moveit)",
                source=self.source,
                line=line,
                key=key,
            )
        names = self.joint_names

        def tolerances(values: Sequence[float]) -> list[JointTolerance]:
            return [JointTolerance(name=n, position=float(v)) for n, v in zip(names, values, strict=True)]

        trajectory = JointTrajectory(joint_names=names, points=list(self.goal.trajectory.points))
        trajectory.header.stamp = self.stamp(now_ns)
        return FollowJointTrajectory.Goal(
            trajectory=trajectory,
            path_tolerance=tolerances(self.goal.path_tolerance),
            goal_tolerance=tolerances(self.goal.goal_tolerance),
            goal_time_tolerance=self.goal.goal_time_tolerance,
        )


# ----------------------------------------------------------------------------------------------- parsing
def _parse(data: Any, doc: _Doc) -> GoalSpec:
    if data is None:
        raise doc.error((), "the goal is empty: it needs at least joint_names and points")
    top = doc.mapping(data, (), _TOP_KEYS, required=("joint_names", "points"))

    names_raw = top["joint_names"]
    if not isinstance(names_raw, list) or not names_raw:
        raise doc.error(
            ("joint_names",), f"joint_names must be a non-empty list of joint names, got {_show(names_raw)}"
        )
    names = [doc.string(v, ("joint_names", i)) for i, v in enumerate(names_raw)]
    n = len(names)
    per_joint = f" (one per joint of joint_names, which has {n})"

    points_raw = top["points"]
    if not isinstance(points_raw, list) or not points_raw:
        raise doc.error(("points",), f"points must be a non-empty list of points, got {_show(points_raw)}")
    points = []
    for i, raw in enumerate(points_raw):
        path = ("points", i)
        p = doc.mapping(raw, path, _POINT_KEYS, required=("positions", "time_from_start"))
        point = JointTrajectoryPoint(
            positions=doc.numbers(p["positions"], (*path, "positions"), n, per_joint),
            time_from_start=doc.duration(p["time_from_start"], (*path, "time_from_start")),
        )
        if "velocities" in p:
            point.velocities = doc.numbers(p["velocities"], (*path, "velocities"), n, per_joint)
        if "accelerations" in p:
            point.accelerations = doc.numbers(p["accelerations"], (*path, "accelerations"), n, per_joint)
        points.append(point)

    goal = FollowJointTrajectoryWithAdmittance.Goal()
    goal.trajectory = JointTrajectory(joint_names=names, points=points)

    start_delay = None
    if "start_delay" in top:
        start_delay = doc.number(top["start_delay"], ("start_delay",))
        if _seconds_to_ns(start_delay) is None:
            raise doc.error(
                ("start_delay",), f"start_delay = {_show(start_delay)} is not a representable time"
            )

    if "tolerances" in top:
        tol = doc.mapping(top["tolerances"], ("tolerances",), _TOLERANCE_KEYS)
        for key, attr in (("path", "path_tolerance"), ("goal", "goal_tolerance")):
            if key in tol:
                values = doc.numbers(tol[key], ("tolerances", key), n, per_joint, scalar_ok=True)
                setattr(goal, attr, values)
        if "goal_time" in tol:
            goal.goal_time_tolerance = doc.duration(tol["goal_time"], ("tolerances", "goal_time"))

    if "thresholds" in top:
        goal.absolute_force_torque_threshold = doc.numbers(
            top["thresholds"], ("thresholds",), 6, f" {_WRENCH}"
        )

    if "admittance" in top:
        raw = top["admittance"]
        if isinstance(raw, list):
            if not raw:
                raise doc.error(("admittance",), "admittance must be a mapping or a non-empty list of them")
            tips = [_tip(doc, t, ("admittance", i)) for i, t in enumerate(raw)]
        else:
            tips = [_tip(doc, raw, ("admittance",))]
        goal.admittance_parameters = tips[0]
        goal.additional_tips = tips[1:]

    # In file order, so --moveit reports the first offending line.
    jtac_only = sorted(
        ((key, doc.lines.get((key,))) for key in _JTAC_ONLY_KEYS if key in top),
        key=lambda item: item[1] or 0,
    )
    return GoalSpec(goal=goal, start_delay=start_delay, source=doc.source, jtac_only=jtac_only)


def _tip(doc: _Doc, raw: Any, path: _Path) -> AdmittanceParameters:
    t = doc.mapping(raw, path, _TIP_KEYS)
    tip = AdmittanceParameters()
    six = f" {_AXES}"
    mass = doc.numbers(t["mass"], (*path, "mass"), 6, six, scalar_ok=True) if "mass" in t else None
    stiffness = (
        doc.numbers(t["stiffness"], (*path, "stiffness"), 6, six, scalar_ok=True)
        if "stiffness" in t
        else None
    )
    if "damping" in t and "damping_ratio" in t:
        raise doc.error((*path, "damping_ratio"), "give either damping or damping_ratio, not both")
    if mass is not None:
        tip.mass = mass
    if stiffness is not None:
        tip.stiffness = stiffness
    if "damping" in t:
        tip.damping = doc.numbers(t["damping"], (*path, "damping"), 6, six, scalar_ok=True)
    else:
        key = (*path, "damping_ratio")
        ratio = doc.numbers(t["damping_ratio"], key, 6, six, scalar_ok=True) if "damping_ratio" in t else None
        if mass is not None and stiffness is not None:
            tip.damping = _damping(doc, key if ratio else path, mass, stiffness, ratio or [1.0] * 6)
        elif ratio is not None:
            raise doc.error(key, "damping_ratio needs both mass and stiffness")
    if "selected_axes" in t:
        tip.selected_axes = doc.bools(t["selected_axes"], (*path, "selected_axes"), 6, six)
    if "joint_damping" in t:
        tip.joint_damping = doc.number(t["joint_damping"], (*path, "joint_damping"))
    if "ee_pose_control" in t:
        pose_path = (*path, "ee_pose_control")
        pose = doc.mapping(t["ee_pose_control"], pose_path, _POSE_KEYS)
        if "position" in pose:
            x, y, z = doc.numbers(pose["position"], (*pose_path, "position"), 3, " [x, y, z]")
            tip.ee_pose_control.position.x, tip.ee_pose_control.position.y = x, y
            tip.ee_pose_control.position.z = z
        if "orientation" in pose:
            qx, qy, qz, qw = doc.numbers(
                pose["orientation"], (*pose_path, "orientation"), 4, " (quaternion [x, y, z, w])"
            )
            o = tip.ee_pose_control.orientation
            o.x, o.y, o.z, o.w = qx, qy, qz, qw
    if "end_effector_frame" in t:
        tip.end_effector_frame = doc.string(t["end_effector_frame"], (*path, "end_effector_frame"))
    if "end_effector_mass" in t:
        tip.end_effector_mass = doc.number(t["end_effector_mass"], (*path, "end_effector_mass"))
    if "end_effector_cog" in t:
        tip.end_effector_cog = doc.numbers(
            t["end_effector_cog"], (*path, "end_effector_cog"), 3, " [x, y, z]"
        )
    if "thresholds" in t:
        tip.absolute_force_torque_threshold = doc.numbers(
            t["thresholds"], (*path, "thresholds"), 6, f" {_WRENCH}"
        )
    return tip


def _damping(
    doc: _Doc, path: _Path, mass: Sequence[float], stiffness: Sequence[float], ratio: Sequence[float]
) -> list[float]:
    """D = 2·ζ·sqrt(M·K) per axis (goals.critical_damping, the Python API's default); a product that
    has no real root is reported here, not sent as NaN or clipped to zero."""
    for axis, (m, k) in enumerate(zip(mass, stiffness, strict=True)):
        product = m * k
        if not math.isfinite(product) or product < 0.0:
            raise doc.error(
                path,
                f"cannot compute the damping of axis {axis} from mass {m!r} and stiffness {k!r}: "
                "give damping explicitly",
            )
    return goals.critical_damping(mass, stiffness, ratio)


# ----------------------------------------------------------------------------------------------- reading
def _read_yaml(path: Path) -> tuple[Any, dict[_Path, int]]:
    """Parse YAML; return the data and the line (1-based) of every mapping key and list item, by path."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GoalFileError("no such file", source=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GoalFileError(f"cannot read the file: {exc}", source=source) from None
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise GoalFileError(
            f"malformed YAML: {problem}", source=source, line=mark.line + 1 if mark else None
        ) from None
    lines: dict[_Path, int] = {}

    def walk(node: yaml.Node, key_path: _Path) -> None:
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, value_node in node.value:
                key = key_node.value
                line = key_node.start_mark.line + 1
                # PyYAML silently keeps the last of two equal keys; in a goal that is always a mistake.
                if key in seen:
                    raise GoalFileError(
                        f"key '{_key_text((*key_path, key))}' appears twice",
                        source=source,
                        line=line,
                        key=key,
                    )
                seen.add(key)
                lines[(*key_path, key)] = line
                walk(value_node, (*key_path, key))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[(*key_path, i)] = item.start_mark.line + 1
                walk(item, (*key_path, i))

    if root is not None:
        walk(root, ())
    return data, lines


def read_goal_file(path: str | Path) -> GoalSpec:
    """Parse a goal file into a GoalSpec; raises GoalFileError (``FILE:LINE: ...``)."""
    path = Path(path)
    data, lines = _read_yaml(path)
    return _parse(data, _Doc(str(path), lines))


def spec_from_dict(data: Mapping[str, Any], source: str = "<dict>") -> GoalSpec:
    """Like read_goal_file, for data already loaded (errors are prefixed with ``source:``)."""
    return _parse(dict(data) if isinstance(data, Mapping) else data, _Doc(source))


def load_goal_file(path: str | Path, now_ns: int | None = None) -> FollowJointTrajectoryWithAdmittance.Goal:
    """The goal of a goal file, stamped for sending at now_ns (default: now); raises GoalFileError."""
    return read_goal_file(path).jtac_goal(now_ns)


def goal_from_dict(
    data: Mapping[str, Any], source: str = "<dict>", now_ns: int | None = None
) -> FollowJointTrajectoryWithAdmittance.Goal:
    """The goal described by data (the goal-file structure), stamped for sending at now_ns."""
    return spec_from_dict(data, source).jtac_goal(now_ns)
