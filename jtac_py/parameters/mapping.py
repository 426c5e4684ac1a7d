"""Where each parameter goes in the core: the table of the core's configure-time fields and the
parameters each is computed from, and the C++ generated from it (jtac_core/src/params_mapping.cpp:
``make_jtac_config`` and ``make_jtac_parameters``).

One row per field of ``JtacConfig`` / ``JtacParameters`` (their names carry units:
``gravity_vector`` -> ``gravity_base_m_s2``), in the order they are filled: the field, how it is
computed (a conversion, below) and its sources, schema names as written in the schema (a ``__map_``
field as ``constraints.__map_joints.path_tolerance``) or an argument of ``make_jtac_config`` (the
URDF text and the robot's limits, which are not parameters). docs/parameters.md lists the same rows.
The conversions' C++ helpers are hand-written in jtac_core/src/params_conversions.hpp.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jtac_py.parameters.cpp import _formatted, map_member, struct_name
from jtac_py.parameters.schema import _MAP_PREFIX, _REPO_ROOT, Schema, default_schema

DEFAULT_MAPPING_PATH = _REPO_ROOT / "jtac_core" / "src" / "params_mapping.cpp"

# make_jtac_config's arguments beside the parameters, in signature order: (C++ type, name).
ARGUMENTS = (
    ("std::string", "urdf_xml"),
    ("std::vector<double>", "max_velocity_rad_s"),
    ("std::vector<double>", "max_acceleration_rad_s2"),
)


@dataclass(frozen=True)
class Source:
    """One input of a row, spelled as the generated C++ reads it."""

    name: str  # schema name (template) or argument name
    is_argument: bool
    cpp: str  # params.<name>; a __map_ field: its block's member params.<group>.<key>_map; an argument
    field_pointer: str = ""  # a __map_ field: &Params::<Group>::Map<Key>::<field>


@dataclass(frozen=True)
class CoreField:
    """One field of the core's structures and how it is computed from its sources."""

    owner: str  # "JtacConfig" or "JtacParameters"
    field: str  # dotted member path below the owner
    conversion: str  # a key of CONVERSIONS
    sources: tuple[str, ...]
    unit: str = ""  # the value's unit, a comment at the end of the generated line
    why: str = ""  # a reason, a comment line above it


def _config(field: str, conversion: str, *sources: str, unit: str = "", why: str = "") -> CoreField:
    return CoreField("JtacConfig", field, conversion, sources, unit, why)


def _parameters(field: str, conversion: str, *sources: str, unit: str = "", why: str = "") -> CoreField:
    return CoreField("JtacParameters", field, conversion, sources, unit, why)


CORE_FIELDS: tuple[CoreField, ...] = (
    _config("trajectory.joint_names", "copy", "joints"),
    _config("trajectory.continuous_joints", "copy", "continuous_joints"),
    _config("trajectory.max_trajectory_points", "int", "max_trajectory_points", unit="[points]"),
    _config("trajectory.max_velocity_rad_s", "argument", "max_velocity_rad_s"),
    _config("trajectory.max_acceleration_rad_s2", "argument", "max_acceleration_rad_s2"),
    _config("urdf_xml", "argument", "urdf_xml"),
    _config("base_frame", "copy", "base_frame"),
    _config("tips", "tip_frames", "sensor_frames", "ee_frames"),
    _config(
        "has_force_torque_sensor",
        "any_sensor",
        "ft_sensor_name",
        "ft_sensors.__map_sensor_frames.name",
        "sensor_frames",
        why="The core has one flag for all tips: on as soon as any tip has a sensor name.",
    ),
    _config(
        "update_rate_hz",
        "double",
        "update_rate",
        unit="[Hz]",
        why="Goal intake checks each compliant axis's stability for the admittance integrated at this rate.",
    ),
    _parameters("trajectory.stop_accelerations_rad_s2", "joint_vector", "stop_accelerations"),
    _parameters(
        "trajectory.default_path_tolerance_rad",
        "per_joint",
        "joints",
        "constraints.__map_joints.path_tolerance",
        "default_path_tolerance",
    ),
    _parameters(
        "trajectory.default_goal_tolerance_rad",
        "per_joint",
        "joints",
        "constraints.__map_joints.goal_tolerance",
        "default_goal_tolerance",
    ),
    _parameters("trajectory.default_goal_time_tolerance_s", "copy", "default_goal_time_tolerance"),
    _parameters("trajectory.time_scale_percentage", "copy", "time_scale_percentage"),
    _parameters(
        "trajectory.time_scale_filter_constant_s",
        "copy",
        "time_scale_filter_constant",
        unit="time constant [s]",
    ),
    _parameters("trajectory.start_position_tolerance_rad", "copy", "start_position_tolerance"),
    _parameters("trajectory.start_velocity_tolerance_rad_s", "copy", "start_velocity_tolerance"),
    _parameters("trajectory.stitch_position_tolerance_rad", "copy", "stitch_position_tolerance"),
    _parameters("trajectory.stitch_velocity_tolerance_rad_s", "copy", "stitch_velocity_tolerance"),
    _parameters(
        "ft_cutoff_frequency_ratio", "copy", "ft_cutoff_frequency_ratio", unit="cutoff / update_rate [-]"
    ),
    _parameters("ft_force_deadband_N", "copy", "ft_force_deadband"),
    _parameters("ft_torque_deadband_Nm", "copy", "ft_torque_deadband"),
    _parameters(
        "default_absolute_force_torque_threshold",
        "fixed_vector",
        "default_absolute_force_torque_threshold",
        unit="[N, N·m]",
    ),
    _parameters("gravity_base_m_s2", "fixed_vector", "gravity_vector", unit="[m/s²]"),
    _parameters("jacobian_damping", "copy", "jacobian_damping", unit="λ of the damped least squares [-]"),
    _parameters("zero_fts_num_samples", "int", "zero_fts_num_samples", unit="[samples]"),
)


# ------------------------------------------------------------------------------------------------ C++
def _one(s: list[Source], target: str) -> str:
    return s[0].cpp


# Each conversion: (its sources, the assigned field's C++ expression) -> the value's C++ expression.
# The helpers named here are params_conversions.hpp's.
CONVERSIONS: dict[str, Callable[[list[Source], str], str]] = {
    "copy": _one,
    "argument": lambda s, target: f"std::move({s[0].cpp})",
    "int": lambda s, target: f"static_cast<int>({s[0].cpp})",
    "double": lambda s, target: f"static_cast<double>({s[0].cpp})",
    "joint_vector": lambda s, target: f"joint_vector({s[0].cpp})",
    # Per joint, in joints order: the joint's own tolerance when set (non-zero), else the default.
    "per_joint": lambda s, target: f"per_joint({s[0].cpp}, {s[1].cpp}, {s[1].field_pointer}, {s[2].cpp})",
    "tip_frames": lambda s, target: f"tip_frames({s[0].cpp}, {s[1].cpp})",
    "any_sensor": lambda s, target: f"any_sensor(tip_ft_sensor_names({s[0].cpp}, {s[1].cpp}, {s[2].cpp}))",
    # A fixed-size vector; a parameter of another size (refused by validate()) keeps the default.
    "fixed_vector": lambda s, target: f"fixed_vector({s[0].cpp}, {target})",
}

_VARIABLES = {"JtacConfig": "config", "JtacParameters": "parameters"}


def source(name: str, schema: Schema) -> Source:
    """A row's source by its schema name or argument name; ValueError for neither."""
    if name in (argument for _cpp_type, argument in ARGUMENTS):
        return Source(name, True, name)
    try:
        spec = schema.template(name)
    except KeyError:
        raise ValueError(f"the core mapping reads '{name}', which is no parameter of the schema") from None
    if not spec.map_keys:
        return Source(name, False, f"params.{name}")
    segments = spec.template.split(".")
    member = f"params.{'.'.join(segments[:-2])}.{map_member(segments[-2])}"
    owner = "::".join(struct_name(s) for s in segments[:-1])
    return Source(name, False, member, f"&Params::{owner}::{segments[-1]}")


def display_name(name: str) -> str:
    """A schema name as docs/parameters.md writes it (``__map_joints`` -> ``<joints>``)."""
    return ".".join(f"<{s[len(_MAP_PREFIX) :]}>" if s.startswith(_MAP_PREFIX) else s for s in name.split("."))


def rows(schema: Schema | None = None) -> list[tuple[str, list[str]]]:
    """(core field, the parameters it reads, as docs/parameters.md names them) for each row; an
    argument is not a parameter and is left out."""
    schema = schema or default_schema()
    out = []
    for row in CORE_FIELDS:
        sources = [source(name, schema) for name in row.sources]
        names = [display_name(s.name) for s in sources if not s.is_argument]
        out.append((f"{row.owner}.{row.field}", names))
    return out


def _assignment(row: CoreField, schema: Schema) -> str:
    variable = _VARIABLES[row.owner]
    target = f"{variable}.{row.field}"
    expression = CONVERSIONS[row.conversion]([source(name, schema) for name in row.sources], target)
    unit = f"  // {row.unit}" if row.unit else ""
    why = f"  // {row.why}\n" if row.why else ""
    return f"{why}  {target} = {expression};{unit}"


_HEADER = """\
// Generated from jtac_py/parameters/mapping.py (the core fields' table) and params/jtac_parameters.yaml
// by `python -m jtac_py.parameters --write`: do not edit. Change the table and regenerate; `make lint`
// fails while this file is stale.
//
// The one mapping from jtac::Params (the schema's names) onto the core's structures; its helpers are
// params_conversions.hpp's.
#include "jtac_core/params_mapping.hpp"

#include <utility>

#include "params_conversions.hpp"

namespace jtac {

using params_conversions::any_sensor;
using params_conversions::fixed_vector;
using params_conversions::joint_vector;
using params_conversions::per_joint;
using params_conversions::tip_frames;
"""


def render_mapping(schema: Schema | None = None) -> str:
    """The text of params_mapping.cpp (unformatted)."""
    schema = schema or default_schema()
    arguments = ", ".join(f"{cpp_type} {name}" for cpp_type, name in ARGUMENTS)
    lines = [_HEADER]
    for owner, function, signature in (
        ("JtacConfig", "make_jtac_config", f"const Params& params, {arguments}"),
        ("JtacParameters", "make_jtac_parameters", "const Params& params"),
    ):
        variable = _VARIABLES[owner]
        lines += [f"{owner} {function}({signature}) {{", f"  {owner} {variable};"]
        lines += [_assignment(row, schema) for row in CORE_FIELDS if row.owner == owner]
        lines += [f"  return {variable};", "}", ""]
    lines += ["}  // namespace jtac", ""]
    return "\n".join(lines)


def generated_files(schema: Schema | None = None) -> dict:
    """params_mapping.cpp by its path, formatted like the other generated C++."""
    return {DEFAULT_MAPPING_PATH: _formatted(render_mapping(schema), DEFAULT_MAPPING_PATH)}
