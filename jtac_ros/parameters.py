"""ROS 2 side of jtac's parameter schema: descriptors, declaration on an rclpy node, runtime validation.

All rules live in jtac_py.parameters; this module only translates them. A ParameterDescriptor carries
the type, description, read_only flag, an integer/floating-point range where the schema's inclusive
bounds (``bounds<>``, ``gt_eq<>``, ``lt_eq<>``; for integers also ``gt<>`` and ``lt<>``) express one
exactly, and every rule as text in additional_constraints. rclpy enforces type, read_only and range by
itself (with a relative tolerance of 1e-6 at the range ends); the on-set-parameters callback from
make_on_set_parameters_callback applies the full schema, so exclusive bounds, sizes, one_of and
cross-parameter rules are enforced exactly too.

Typical use in a node's configure step::

    schema = default_schema()
    values = declare_parameters(node, schema, overrides)   # raises ParameterError if invalid
    node.add_on_set_parameters_callback(make_on_set_parameters_callback(node, schema))
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    ParameterType,
    SetParametersResult,
)
from rclpy.exceptions import (
    InvalidParameterTypeException,
    InvalidParameterValueException,
    ParameterUninitializedException,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

from jtac_py.parameters import ParameterError, ParameterSpec, Schema, default_schema

__all__ = [
    "PARAMETER_TYPES",
    "current_values",
    "declare_parameters",
    "descriptor_for",
    "descriptors",
    "make_on_set_parameters_callback",
    "undeclared_overrides",
]

# Schema type -> ROS parameter type; *_fixed_N types map to their base type (the size is a validator).
PARAMETER_TYPES: dict[str, int] = {
    "bool": ParameterType.PARAMETER_BOOL,
    "int": ParameterType.PARAMETER_INTEGER,
    "double": ParameterType.PARAMETER_DOUBLE,
    "string": ParameterType.PARAMETER_STRING,
    "bool_array": ParameterType.PARAMETER_BOOL_ARRAY,
    "int_array": ParameterType.PARAMETER_INTEGER_ARRAY,
    "double_array": ParameterType.PARAMETER_DOUBLE_ARRAY,
    "string_array": ParameterType.PARAMETER_STRING_ARRAY,
}

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# Doubles must be finite, so the largest finite double bounds an open side exactly (gpl does the same).
_DOUBLE_MAX = sys.float_info.max

# Parameters every rclpy node may declare for itself; an override of one of these is never a typo.
_NODE_PARAMETERS = ("use_sim_time", "start_type_description_service")
_NODE_PARAMETER_PREFIXES = ("qos_overrides.",)


def _ros_type(spec: ParameterSpec) -> int:
    base = spec.base_type + ("_array" if spec.is_array else "")
    return PARAMETER_TYPES[base]


def _range(spec: ParameterSpec) -> tuple[float, float] | None:
    """The tightest inclusive range the validators state exactly, or None if they state none."""
    lower: float | None = None
    upper: float | None = None
    integer = spec.base_type == "int"
    for validator in spec.validators:
        bounds: tuple[float | None, float | None] = (None, None)
        if validator.name == "bounds<>":
            bounds = (validator.args[0], validator.args[1])
        elif validator.name == "gt_eq<>":
            bounds = (validator.args[0], None)
        elif validator.name == "lt_eq<>":
            bounds = (None, validator.args[0])
        # A strict integer bound is an inclusive one a step further; a strict double bound has no
        # exact inclusive form, so it stays in additional_constraints only.
        elif integer and validator.name == "gt<>":
            bounds = (validator.args[0] + 1, None)
        elif integer and validator.name == "lt<>":
            bounds = (None, validator.args[0] - 1)
        if bounds[0] is not None:
            lower = bounds[0] if lower is None else max(lower, bounds[0])
        if bounds[1] is not None:
            upper = bounds[1] if upper is None else min(upper, bounds[1])
    if lower is None and upper is None:
        return None
    if integer:
        return (_INT64_MIN if lower is None else int(lower), _INT64_MAX if upper is None else int(upper))
    return (-_DOUBLE_MAX if lower is None else float(lower), _DOUBLE_MAX if upper is None else float(upper))


def descriptor_for(spec: ParameterSpec) -> ParameterDescriptor:
    """The ParameterDescriptor of one concrete parameter (type, description, read_only, range, rules)."""
    descriptor = ParameterDescriptor(
        name=spec.name,
        type=_ros_type(spec),
        description=spec.description,
        additional_constraints=spec.constraints_text(),
        read_only=spec.read_only,
    )
    bounds = _range(spec) if not spec.is_array else None
    if bounds is not None and spec.base_type == "int":
        descriptor.integer_range = [IntegerRange(from_value=bounds[0], to_value=bounds[1], step=0)]
    elif bounds is not None:
        descriptor.floating_point_range = [
            FloatingPointRange(from_value=bounds[0], to_value=bounds[1], step=0.0)
        ]
    return descriptor


def descriptors(
    schema: Schema | None = None, values: Mapping[str, Any] | None = None
) -> dict[str, ParameterDescriptor]:
    """Descriptors of every concrete parameter, ``__map_`` entries expanded over values (else defaults)."""
    schema = schema or default_schema()
    return {name: descriptor_for(spec) for name, spec in schema.expand(values).items()}


def _value_or_none(node: Node, name: str) -> Any:
    try:
        return node.get_parameter(name).value
    except ParameterUninitializedException:
        return None


def _declare(node: Node, spec: ParameterSpec, value: Any) -> Any:
    """Declare one parameter (a node override wins over value); return the value it ends up with."""
    try:
        return _declare_unchecked(node, spec, value)
    except (InvalidParameterTypeException, InvalidParameterValueException) as exc:
        # rclpy's own checks (type, range) on a node override: report them like every other rule.
        raise ParameterError(f"parameter '{spec.name}': {exc}", name=spec.name) from exc


def _declare_unchecked(node: Node, spec: ParameterSpec, value: Any) -> Any:
    descriptor = descriptor_for(spec)
    ros_type = Parameter.Type(descriptor.type)
    if value is not None and not (spec.is_array and len(value) == 0):
        return node.declare_parameter(spec.name, value, descriptor).value
    # rclpy infers a parameter's type from its default and takes an empty list for a byte array, so a
    # typed empty array (or a required parameter) is declared by type, set, then made read-only.
    node.declare_parameter(spec.name, ros_type, ParameterDescriptor(**_writable_fields(descriptor)))
    current = _value_or_none(node, spec.name)
    if current is None and value is not None:
        result = node.set_parameters([Parameter(spec.name, ros_type, value)])[0]
        if not result.successful:
            raise ParameterError(f"parameter '{spec.name}': {result.reason}", name=spec.name)
        current = value
    if descriptor.read_only:
        node.set_descriptor(spec.name, descriptor)
    return current


def _writable_fields(descriptor: ParameterDescriptor) -> dict[str, Any]:
    fields = {
        field: getattr(descriptor, field)
        for field in (
            "name",
            "type",
            "description",
            "additional_constraints",
            "integer_range",
            "floating_point_range",
        )
    }
    fields["read_only"] = False
    return fields


def declare_parameters(
    node: Node, schema: Schema | None = None, overrides: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Declare every schema parameter on node; return the validated values (raises ParameterError).

    A value comes from the node's own overrides (``--ros-args -p`` / ``--params-file``) first, then
    from overrides (e.g. jtac_py.parameters.load_params_file's result), then from the schema default.
    The ``__map_`` parameters are declared for the entries of the keys' effective values.
    """
    schema = schema or default_schema()
    overrides = dict(overrides or {})
    values: dict[str, Any] = {}
    # The map keys decide which parameters exist, so they are declared (and their overrides read) first.
    for key in schema.map_key_names:
        spec = schema.template(key)
        values[key] = _declare(node, spec, spec.normalize(overrides.get(key, spec.default)))
    expanded = schema.expand(values)
    for name in overrides:
        if name not in expanded:
            schema.spec(name, values)  # raises the "unknown parameter ... did you mean" error
    for name, spec in expanded.items():
        if name in values:
            continue
        value = overrides.get(name, spec.default)
        values[name] = _declare(node, spec, None if value is None else spec.normalize(value))
    return schema.validate({name: value for name, value in values.items() if value is not None})


def current_values(node: Node, schema: Schema | None = None) -> dict[str, Any]:
    """The node's current values of every declared schema parameter, by name."""
    schema = schema or default_schema()
    keys = {key: _value_or_none(node, key) for key in schema.map_key_names if node.has_parameter(key)}
    keys = {key: value for key, value in keys.items() if value is not None}
    values = {}
    for name in schema.expand(keys):
        if node.has_parameter(name):
            value = _value_or_none(node, name)
            if value is not None:
                values[name] = value
    return values


def make_on_set_parameters_callback(
    node: Node, schema: Schema | None = None
) -> Callable[[list[Parameter]], SetParametersResult]:
    """An on-set-parameters callback that refuses read_only changes and values the schema rejects.

    Register it after declare_parameters (rclpy calls these callbacks during declaration too). Names
    outside the schema pass through untouched, so the node may own other parameters.
    """
    schema = schema or default_schema()

    def on_set_parameters(parameters: list[Parameter]) -> SetParametersResult:
        current = current_values(node, schema)
        known = schema.expand(current)
        updates = {p.name: p.value for p in parameters if p.name in known}
        if not updates:
            return SetParametersResult(successful=True)
        try:
            schema.validate_update(current, updates)
        except ParameterError as error:
            return SetParametersResult(successful=False, reason=str(error))
        return SetParametersResult(successful=True)

    return on_set_parameters


def undeclared_overrides(node: Node) -> list[str]:
    """Names the node was given values for (``-p``, ``--params-file``) but never declared: likely typos.

    Call it once every parameter is declared. rclpy silently ignores such overrides, so a misspelled
    parameter would otherwise keep its default without a word.
    """
    # rclpy offers no public accessor for the overrides it was started with.
    overrides = getattr(node, "_parameter_overrides", {})
    return [
        name
        for name in overrides
        if not node.has_parameter(name)
        and name not in _NODE_PARAMETERS
        and not name.startswith(_NODE_PARAMETER_PREFIXES)
    ]
