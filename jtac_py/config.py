"""From jtac's parameter schema to the native controller: resolve values, build the configuration objects.

``params/jtac_parameters.yaml`` is the one description of jtac's parameters (``jtac_py.parameters``
validates against it); the C++ core takes them as ``_native.JtacConfig`` (structure, fixed at configure)
and ``_native.JtacParameters`` (run-time values, also for ``set_parameters``). This module resolves and
validates the values and hands them to the core's mapping; it imports nothing from ROS, so a script, a
test and the ROS node build the same controller from the same values::

    values = resolve("my_params.yaml", update_rate=500)     # or resolve({...}) / resolve()
    controller = make_controller(values)                     # configured, not activated
    new_values = parameters.default_schema().validate_update(values, {"time_scale_percentage": 50.0})
    controller.set_parameters(native_parameters(new_values))              # '' = applied

The native side holds the same names: ``_native.Params`` is ``jtac::Params``, generated from the schema
(``jtac_core/include/jtac_core/jtac_parameters.hpp``, one field per parameter). native_params() copies a
validated value set into it, and the core's own mapping (``jtac_core/src/params_mapping.cpp``, generated
from ``jtac_py/parameters/mapping.py``, the one place where a schema name meets a core field) builds
``JtacConfig`` / ``JtacParameters`` from it;
docs/parameters.md lists which parameter feeds which field. What the schema does not hold is resolved
here and passed beside it: the URDF text (robot_description(): robot_description, urdf_path or the
built-in robot) and the robot's joint limits (robot_joint_limits(), from jtac_py.robots). The tips'
sensor names also decide where the loop reads each tip's wrench (wrench_sources()).

Every validation failure raises ``jtac_py.parameters.ParameterError`` (a ValueError) naming the
parameter, the value and the rule; errors of the native ``configure`` are ValueErrors from the core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jtac_py import _native, robots
from jtac_py.parameters import ParameterError, Schema, default_schema, tip_ft_sensor_names
from jtac_py.parameters.cpp import map_blocks, map_member, struct_name

__all__ = [
    "ROBOT_FRAME_PARAMETERS",
    "make_controller",
    "native_config",
    "native_parameters",
    "native_params",
    "resolve",
    "robot_description",
    "wrench_sources",
]

# Parameters whose schema defaults are FR3's names (fr3_joint1, fr3_link0, ...): resolve() fills those
# not given from the selected robot's description instead, so `robot: panda` alone is a working setup.
ROBOT_FRAME_PARAMETERS = ("joints", "base_frame", "sensor_frames", "ee_frames")


# ------------------------------------------------------------------------------------------------ values
def resolve(
    config: Mapping[str, Any] | str | Path | None = None,
    /,
    *,
    node_name: str | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Every parameter's validated value, defaults filled in, from a configuration plus overrides.

    config: None (the defaults); a Mapping of dotted schema names
    (``{"constraints.fr3_joint1.goal_tolerance": 0.01}``), nested Mappings (flattened into dotted names
    as ROS does: ``{"constraints": {"fr3_joint1": {"goal_tolerance": 0.01}}}``) or a mix of both; or the
    path (str / Path) of a ROS parameters file (``<node>: ros__parameters: ...``; node_name selects the
    entry when the file has several). A previous result of resolve() is a valid config.

    overrides: values merged on top of config, per dotted name. Keyword names cannot contain a dot:
    pass a dotted name with ``**{"constraints.fr3_joint1.goal_tolerance": 0.01}`` or nest it,
    ``constraints={"fr3_joint1": {"goal_tolerance": 0.01}}``. There is no ``__`` spelling of the dot.

    joints, base_frame, sensor_frames and ee_frames that are given nowhere default to the names of
    ``robot`` (``robots.robot_spec``; FR3's equal the schema defaults, Panda's are ``panda_*``).
    numpy arrays are taken as lists. Raises ParameterError (naming the parameter, the value and the
    rule, prefixed with ``file:line`` for a value from a file), TypeError for a config of another type.
    """
    schema = default_schema()
    if config is None:
        given: dict[str, Any] = {}
        lines: dict[str, int] = {}
        source = None
    elif isinstance(config, str | Path):
        given, lines = _read_params_file(schema, Path(config), node_name)
        source = str(config)
    elif isinstance(config, Mapping):
        given, lines, source = _flatten(config), {}, None
    else:
        raise TypeError(
            f"config must be None, a Mapping or the path of a parameters file, got {type(config).__name__}"
        )
    flat_overrides = _flatten(overrides)
    # Names whose value comes from the file; an override replaces the file's value and its errors.
    from_file = set(given) - set(flat_overrides) if source else set()
    given.update(flat_overrides)
    given = _with_robot_frames(given, schema)
    try:
        return schema.validate(given)
    except ParameterError as error:
        # Locate a bad value of the file (file:line); overrides and filled-in defaults have no place there.
        if source and error.name in from_file:
            line = lines.get(error.name)
            raise error.with_source(f"{source}:{line}" if line else source) from None
        raise


def _plain(value: Any) -> Any:
    """numpy arrays (anything with tolist() but a string) as lists: the schema takes list/tuple/array."""
    if not isinstance(value, str | bytes) and hasattr(value, "tolist") and hasattr(value, "ndim"):
        return value.tolist()
    return value


def _flatten(
    mapping: Mapping[Any, Any], prefix: str = "", out: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Nested mappings as dotted names (ROS's rule); the same name given twice is an error."""
    out = {} if out is None else out
    for key, value in mapping.items():
        if not isinstance(key, str) or not key:
            raise ParameterError(
                f"parameter name {prefix}{key!r} must be a non-empty string", name=str(key), rule="name"
            )
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            _flatten(value, f"{name}.", out)
            continue
        if name in out:
            raise ParameterError(
                f"parameter '{name}' is given twice (as a dotted name and as a nested one)",
                name=name,
                value=value,
                rule="given once",
            )
        out[name] = _plain(value)
    return out


def _read_params_file(
    schema: Schema, path: Path, node_name: str | None
) -> tuple[dict[str, Any], dict[str, int]]:
    # Not validated here: resolve() validates once, after the overrides and the robot's frame names are in.
    return schema.read_params_file(path, node_name)


def _with_robot_frames(given: dict[str, Any], schema: Schema) -> dict[str, Any]:
    """given plus the robot's joint and frame names for the ROBOT_FRAME_PARAMETERS it lacks."""
    robot = given.get("robot", schema.template("robot").default)
    if not isinstance(robot, str) or robot not in robots.ROBOTS:
        return given  # validation reports the bad robot (one_of)
    spec = robots.robot_spec(robot)
    names = {
        "joints": list(spec.joint_names),
        "base_frame": spec.base_frame,
        "sensor_frames": [spec.sensor_frame],
        "ee_frames": [spec.ee_frame],
    }
    return {**{k: names[k] for k in ROBOT_FRAME_PARAMETERS if k not in given}, **given}


def _values(values: Mapping[str, Any]) -> dict[str, Any]:
    """A full, validated value set: resolve() again (a no-op on its own result, cheap: no native calls)."""
    if not isinstance(values, Mapping):
        raise TypeError(f"values must be a Mapping of parameter values, got {type(values).__name__}")
    return resolve(values)


# ------------------------------------------------------------------------------------------------ URDF
def robot_description(values: Mapping[str, Any]) -> str:
    """The URDF text: robot_description if not empty, else the file urdf_path, else the built-in robot.

    The built-in description has no tool (``robots.urdf_xml(robot)``); the schema has no tool mass
    parameter. Raises ParameterError naming urdf_path when that file cannot be read or is empty.
    """
    values = _values(values)
    if values["robot_description"]:
        return values["robot_description"]
    path = values["urdf_path"]
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ParameterError(
                f"parameter 'urdf_path' = {path!r} violates readable file: cannot read it ({reason})",
                name="urdf_path",
                value=path,
                rule="readable file",
            ) from exc
        if not text.strip():
            raise ParameterError(
                f"parameter 'urdf_path' = {path!r} violates readable file: the file is empty",
                name="urdf_path",
                value=path,
                rule="readable file",
            )
        return text
    return robots.urdf_xml(values["robot"])


# ------------------------------------------------------------------------------------------------ native
def native_params(values: Mapping[str, Any]) -> _native.Params:
    """values, resolved and validated as resolve() does, as the generated ``_native.Params``: field by
    field under the schema's names, a ``__map_<p>`` block's values as ``<group>.<p>_map`` entries.

    The C++ ``Params.validate()`` then checks the copy with the same rules; it refuses nothing the Python
    validation accepted (test/core/test_parameters_native.py), and if it ever did, the ParameterError
    carries its message rather than letting the core configure from it.
    """
    params = _params(_values(values))
    message = params.validate()
    if message:
        raise ParameterError(message, rule="Params::validate")
    return params


def _params(values: Mapping[str, Any]) -> _native.Params:
    """values copied into a Params as they are (not validated)."""
    schema = default_schema()
    params = _native.Params()
    expanded = schema.expand(values)
    for name, spec in expanded.items():
        if spec.map_keys:
            continue  # below, a whole block at a time: the binding copies maps
        *groups, leaf = name.split(".")
        owner = params
        for group in groups:
            owner = getattr(owner, group)
        setattr(owner, leaf, values[name])
    for group, key, specs in map_blocks(schema):
        owner = params
        for segment in group.split("."):
            owner = getattr(owner, segment)
        entry_type = getattr(type(owner), struct_name(f"__map_{key}"))
        entries = {}
        for element in values[key]:
            entry = entry_type()
            for spec in specs:
                leaf = spec.template.split(".")[-1]
                setattr(entry, leaf, values.get(f"{group}.{element}.{leaf}", spec.default))
            entries[element] = entry
        setattr(owner, map_member(f"__map_{key}"), entries)
    return params


def native_config(values: Mapping[str, Any], urdf_xml: str | None = None) -> _native.JtacConfig:
    """The configure-time structure (the read_only parameters) as a native JtacConfig.

    urdf_xml replaces robot_description(values) when given (e.g. a URDF with a tool). The core parses the
    URDF only when there is a force/torque sensor (admittance needs the kinematics).
    """
    values = _values(values)
    limits = robot_joint_limits(values)
    return _native.jtac_config(
        native_params(values),
        robot_description(values) if urdf_xml is None else urdf_xml,
        limits["max_velocity_rad_s"],
        limits["max_acceleration_rad_s2"],
    )


def wrench_sources(values: Mapping[str, Any], arm_sensor_name: str) -> list[str]:
    """Where the loop reads each tip's wrench, in sensor_frames order (``_native.ControlLoop``'s
    ``set_wrench_sources``): ``"device"``, ``"external"`` or ``"none"``.

    A tip whose sensor name (``ft_sensors.<frame>.name``, else ``ft_sensor_name``) is the arm's own
    sensor (``arm_sensor_name``: SimulatedArm's flange sensor ``<robot>_ft``, FrankaArm's
    ``<robot>_estimated_wrench``) reads the arm's reading; when no tip names it but the arm has one,
    tip 0 does (the arm's sensor under another name, e.g. a configuration written for another driver).
    Every other tip with a sensor name reads an external sensor, whose readings the application hands
    over (``Controller.feed_wrench``; the ROS node's ``~/wrench/<sensor_frame>/input``); a tip with
    no sensor name reads zero.
    """
    names = tip_ft_sensor_names(values)
    arm_tips = {k for k, name in enumerate(names) if name and name == arm_sensor_name}
    if not arm_tips and arm_sensor_name and names and names[0]:
        arm_tips = {0}
    return ["device" if k in arm_tips else "external" if name else "none" for k, name in enumerate(names)]


def external_tip(
    sensor_frames: Sequence[str], sources: Sequence[str], sensor_frame: str, wrench_n_nm: Sequence[float]
) -> tuple[int, np.ndarray]:
    """The tip of `sensor_frame` and the reading [Fx Fy Fz Tx Ty Tz] [N, N·m] as 6 floats, for a
    reading handed over from an external sensor (``Controller.feed_wrench``). ValueError for an unknown
    frame, a tip whose source (``wrench_sources``) is not "external" or a wrench that is not 6 numbers."""
    if sensor_frame not in sensor_frames:
        raise ValueError(
            f"sensor_frame '{sensor_frame}' is not a sensor frame of this controller: {list(sensor_frames)}"
        )
    tip = list(sensor_frames).index(sensor_frame)
    if sources[tip] != "external":
        reason = "reads the arm's own sensor" if sources[tip] == "device" else "has no force/torque sensor"
        raise ValueError(
            f"feed_wrench({sensor_frame}): tip {tip} {reason}; only a tip whose sensor is not the "
            "arm's (ft_sensors.<frame>.name) takes readings"
        )
    wrench = np.asarray(wrench_n_nm, dtype=float).reshape(-1)
    if wrench.shape != (6,):
        raise ValueError(f"feed_wrench({sensor_frame}): wrench has {wrench.size} values, expected 6")
    return tip, wrench


def robot_joint_limits(values: Mapping[str, Any]) -> dict[str, list[float]]:
    """The robot's joint velocity [rad/s] and acceleration [rad/s²] limits in controller joint order: they
    bound the segment jtac inserts before a goal's first point. Empty when the controlled joints are not
    the robot's arm joints (another description), where no table applies."""
    spec = robots.robot_spec(values["robot"])
    index = {name: i for i, name in enumerate(spec.joint_names)}
    joints = list(values["joints"])
    if not all(name in index for name in joints):
        return {"max_velocity_rad_s": [], "max_acceleration_rad_s2": []}
    return {
        "max_velocity_rad_s": [spec.dq_max_rad_s[index[name]] for name in joints],
        "max_acceleration_rad_s2": [spec.ddq_max_rad_s2[index[name]] for name in joints],
    }


def native_parameters(values: Mapping[str, Any]) -> _native.JtacParameters:
    """The run-time parameters as a native JtacParameters (for configure and set_parameters)."""
    return _native.jtac_parameters(native_params(values))


def make_controller(
    values: Mapping[str, Any], urdf_xml: str | None = None
) -> _native.JointTrajectoryAdmittanceController:
    """A JointTrajectoryAdmittanceController configured from values (not activated: call activate()).

    Raises ParameterError for invalid values or an unreadable urdf_path, ValueError from the core for a
    configuration it refuses (a joint or frame missing from the URDF, ...).
    """
    values = _values(values)
    controller = _native.JointTrajectoryAdmittanceController()
    controller.configure(native_config(values, urdf_xml), native_parameters(values))
    return controller
