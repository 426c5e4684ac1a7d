"""jtac's parameter schema: load params/jtac_parameters.yaml, validate values, render the docs table.

The schema is in generate_parameter_library's YAML format. This module imports nothing from ROS, so the
Python API and the rclpy node (jtac_ros.parameters) apply the very same rules:

- types: ``int`` accepts integers only (never a bool or a float), ``double`` accepts integers and floats
  and must be finite, arrays accept lists, tuples and ``array.array`` and check every element;
- every gpl validator (``bounds<>``, ``gt<>``, ``one_of<>``, ``element_bounds<>``, ...) with gpl's
  semantics, plus jtac's own ``jtac::*`` validators (listed in the schema's header);
- ``__map_<p>`` blocks expand once per entry of the string array ``p``
  (``constraints.__map_joints.path_tolerance`` -> ``constraints.fr3_joint1.path_tolerance``, ...);
- read_only parameters cannot change at runtime.

Every failure raises ParameterError, whose message names the parameter, the offending value (with the
element index for arrays) and the rule, prefixed with ``file:line`` when it comes from a file.

Command line: ``python -m jtac_py.parameters --write-docs | --check-docs | --validate FILE [--node N]``.
"""

from __future__ import annotations

import argparse
import array
import dataclasses
import difflib
import functools
import itertools
import math
import numbers
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "DEFAULT_DOCS_PATH",
    "DEFAULT_SCHEMA_PATH",
    "ParameterError",
    "ParameterSpec",
    "Schema",
    "SchemaError",
    "Validator",
    "admittance_enabled",
    "default_joint_tolerances",
    "default_schema",
    "docs_are_current",
    "load_params_file",
    "load_schema",
    "main",
    "render_markdown",
    "tip_ft_sensor_names",
    "write_docs",
]

_REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SCHEMA_PATH = _REPO_ROOT / "params" / "jtac_parameters.yaml"
DEFAULT_DOCS_PATH = _REPO_ROOT / "docs" / "parameters.md"
# An installed wheel has no repository around it; packaging may place the schema next to this module.
_PACKAGED_SCHEMA_PATH = Path(__file__).resolve().parent / "jtac_parameters.yaml"

_PARAMETER_KEYS = frozenset(
    {"type", "default_value", "description", "read_only", "validation", "additional_constraints"}
)
_TYPE_RE = re.compile(r"^(bool|int|double|string)(_array)?(?:_fixed_([1-9][0-9]*))?$")
# A name token, as ROS allows in parameter names, or a __map_ block over a parameter (possibly dotted).
_TOKEN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_MAP_PREFIX = "__map_"
_UNSET = object()


# ------------------------------------------------------------------------------------------------ errors
class ParameterError(ValueError):
    """A parameter value, update or file that breaks the schema; the message names parameter and rule."""

    def __init__(
        self,
        message: str,
        *,
        name: str | None = None,
        value: Any = _UNSET,
        rule: str | None = None,
        index: int | None = None,
        source: str | None = None,
    ) -> None:
        self.message = message
        self.name = name
        self.value = None if value is _UNSET else value
        self.rule = rule
        self.index = index
        self.source = source
        super().__init__(f"{source}: {message}" if source else message)

    def with_source(self, source: str | None) -> ParameterError:
        """Return a copy of this error located at source (``file`` or ``file:line``)."""
        if not source or self.source:
            return self
        error = type(self)(
            self.message, name=self.name, value=self.value, rule=self.rule, index=self.index, source=source
        )
        error.__cause__ = self.__cause__
        return error


class SchemaError(ParameterError):
    """The schema file itself is malformed; the message names the file, line and parameter."""


def _violation(name: str, value: Any, rule: str, detail: str, index: int | None = None) -> ParameterError:
    where = f"parameter '{name}'" if index is None else f"parameter '{name}'[{index}]"
    return ParameterError(
        f"{where} = {value!r} violates {rule}: {detail}", name=name, value=value, rule=rule, index=index
    )


def _read_only_error(name: str) -> ParameterError:
    return ParameterError(
        f"parameter '{name}' is read_only: set it in the configuration and reload",
        name=name,
        rule="read_only",
    )


def _unknown_error(name: str, known: Iterable[str]) -> ParameterError:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f": did you mean '{close[0]}'?" if close else ""
    return ParameterError(f"unknown parameter '{name}'{hint}", name=name, rule="unknown")


# ------------------------------------------------------------------------------------------------ types
def _is_int(value: Any) -> bool:
    # bool is an int subclass in Python, but ROS and gpl keep them apart.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _type_name(value: Any) -> str:
    return type(value).__name__


def _normalize_scalar(name: str, base: str, value: Any, index: int | None = None) -> Any:
    """Check value against the scalar type base and return it in canonical Python form."""
    rule = f"type {base}"
    if base == "bool":
        if isinstance(value, bool):
            return value
        raise _violation(name, value, rule, f"expected a bool, got {_type_name(value)}", index)
    if base == "int":
        if _is_int(value):
            return int(value)
        raise _violation(name, value, rule, f"expected an integer, got {_type_name(value)}", index)
    if base == "double":
        if not _is_number(value):
            raise _violation(name, value, rule, f"expected a number, got {_type_name(value)}", index)
        number = float(value)
        if not math.isfinite(number):
            raise _violation(name, value, "finite", "doubles must be finite (no NaN or Inf)", index)
        return number
    if isinstance(value, str):
        return value
    raise _violation(name, value, rule, f"expected a string, got {_type_name(value)}", index)


# ------------------------------------------------------------------------------------------------ validators
@dataclass(frozen=True)
class _Rule:
    """How one validator applies: to which types, with how many arguments, and what it checks."""

    targets: frozenset[str]  # "scalar", "number", "sized", "array", "number_array", "string_array"
    nargs: int
    # check(value, args, values) -> None when valid, else (element index or None, offending value, detail)
    check: Callable[[Any, tuple, Mapping[str, Any]], tuple[int | None, Any, str] | None]
    text: Callable[[tuple], str]
    # Arguments that name other parameters (cross-parameter rules), by position.
    param_args: tuple[int, ...] = ()


def _first_element(values: Sequence, bad: Callable[[Any], bool], detail: str):
    for index, element in enumerate(values):
        if bad(element):
            return index, element, detail
    return None


def _scalar(ok: Callable[[Any, tuple], bool], detail: Callable[[tuple], str]):
    """A check that the scalar value satisfies ok(value, args)."""

    def check(value, args, _values):
        return None if ok(value, args) else (None, value, detail(args))

    return check


def _size(ok: Callable[[int, int], bool], detail: Callable[[tuple], str]):
    """A check that ok(len(value), args[0]) holds, for arrays and strings."""

    def check(value, args, _values):
        return None if ok(len(value), args[0]) else (None, value, f"{detail(args)} (has {len(value)})")

    return check


def _each(bad: Callable[[Any, tuple], bool], detail: Callable[[tuple], str]):
    """A check that no element satisfies bad(element, args); reports the first that does."""

    def check(value, args, _values):
        return _first_element(value, lambda element: bad(element, args), detail(args))

    return check


def _check_not_empty(value, _args, _values):
    return None if len(value) > 0 else (None, value, "must not be empty")


def _check_unique(value, _args, _values):
    seen = set()
    for index, element in enumerate(value):
        if element in seen:
            return index, element, "elements must be unique (this one repeats an earlier one)"
        seen.add(element)
    return None


def _check_size_eq_param(value, args, values):
    other = values.get(args[0])
    size = len(other) if isinstance(other, Sequence) else 0
    if len(value) == size:
        return None
    return None, value, f"must have as many elements as '{args[0]}' ({size}), has {len(value)}"


def _check_subset_of_param(value, args, values):
    allowed = values.get(args[0]) or ()
    detail = f"every element must be an element of '{args[0]}'"
    return _first_element(value, lambda e: e not in allowed, detail)


def _check_not_empty_if(value, args, values):
    if len(value) > 0 or not values.get(args[0]):
        return None
    return None, value, f"must not be empty while '{args[0]}' is set ({values.get(args[0])!r})"


def _join(values: Iterable[Any]) -> str:
    return ", ".join(str(v) for v in values)


_NUMBER = frozenset({"number"})
_SIZED = frozenset({"sized"})
_ARRAY = frozenset({"array"})
_NUMBER_ARRAY = frozenset({"number_array"})

_RULES: dict[str, _Rule] = {
    "bounds<>": _Rule(
        _NUMBER,
        2,
        _scalar(lambda v, a: a[0] <= v <= a[1], lambda a: f"must be within [{a[0]}, {a[1]}]"),
        lambda a: f"within [{a[0]}, {a[1]}]",
    ),
    "lt<>": _Rule(
        _NUMBER,
        1,
        _scalar(lambda v, a: v < a[0], lambda a: f"must be less than {a[0]}"),
        lambda a: f"< {a[0]}",
    ),
    "gt<>": _Rule(
        _NUMBER,
        1,
        _scalar(lambda v, a: v > a[0], lambda a: f"must be greater than {a[0]}"),
        lambda a: f"> {a[0]}",
    ),
    "lt_eq<>": _Rule(
        _NUMBER,
        1,
        _scalar(lambda v, a: v <= a[0], lambda a: f"must be less than or equal to {a[0]}"),
        lambda a: f"≤ {a[0]}",
    ),
    "gt_eq<>": _Rule(
        _NUMBER,
        1,
        _scalar(lambda v, a: v >= a[0], lambda a: f"must be greater than or equal to {a[0]}"),
        lambda a: f"≥ {a[0]}",
    ),
    "one_of<>": _Rule(
        frozenset({"scalar"}),
        1,
        _scalar(lambda v, a: v in a[0], lambda a: f"must be one of {{{_join(a[0])}}}"),
        lambda a: f"one of {{{_join(a[0])}}}",
    ),
    "fixed_size<>": _Rule(
        _SIZED,
        1,
        _size(lambda n, k: n == k, lambda a: f"must have exactly {a[0]} elements"),
        lambda a: f"size {a[0]}",
    ),
    "size_gt<>": _Rule(
        _SIZED,
        1,
        _size(lambda n, k: n > k, lambda a: f"must have more than {a[0]} elements"),
        lambda a: f"size > {a[0]}",
    ),
    "size_lt<>": _Rule(
        _SIZED,
        1,
        _size(lambda n, k: n < k, lambda a: f"must have fewer than {a[0]} elements"),
        lambda a: f"size < {a[0]}",
    ),
    "not_empty<>": _Rule(_SIZED, 0, _check_not_empty, lambda _a: "not empty"),
    "unique<>": _Rule(_ARRAY, 0, _check_unique, lambda _a: "unique elements"),
    "subset_of<>": _Rule(
        _ARRAY,
        1,
        _each(lambda e, a: e not in a[0], lambda a: f"every element must be in {{{_join(a[0])}}}"),
        lambda a: f"elements in {{{_join(a[0])}}}",
    ),
    "element_bounds<>": _Rule(
        _NUMBER_ARRAY,
        2,
        _each(lambda e, a: not a[0] <= e <= a[1], lambda a: f"every element must be within [{a[0]}, {a[1]}]"),
        lambda a: f"elements within [{a[0]}, {a[1]}]",
    ),
    "lower_element_bounds<>": _Rule(
        _NUMBER_ARRAY,
        1,
        _each(lambda e, a: e < a[0], lambda a: f"every element must be ≥ {a[0]}"),
        lambda a: f"elements ≥ {a[0]}",
    ),
    "upper_element_bounds<>": _Rule(
        _NUMBER_ARRAY,
        1,
        _each(lambda e, a: e > a[0], lambda a: f"every element must be ≤ {a[0]}"),
        lambda a: f"elements ≤ {a[0]}",
    ),
    # jtac's own validators: gpl has no strict element bound and no rule that looks at another parameter.
    "jtac::element_gt": _Rule(
        _NUMBER_ARRAY,
        1,
        _each(lambda e, a: e <= a[0], lambda a: f"every element must be greater than {a[0]}"),
        lambda a: f"elements > {a[0]}",
    ),
    "jtac::elements_not_empty": _Rule(
        frozenset({"string_array"}),
        0,
        _each(lambda e, _a: e == "", lambda _a: "elements must not be empty strings"),
        lambda _a: "no empty names",
    ),
    "jtac::size_eq_param": _Rule(
        _ARRAY, 1, _check_size_eq_param, lambda a: f"as many elements as `{a[0]}`", param_args=(0,)
    ),
    "jtac::subset_of_param": _Rule(
        _ARRAY, 1, _check_subset_of_param, lambda a: f"subset of `{a[0]}`", param_args=(0,)
    ),
    "jtac::not_empty_if": _Rule(
        _SIZED, 1, _check_not_empty_if, lambda a: f"not empty when `{a[0]}` is set", param_args=(0,)
    ),
}


def _format_args(args: tuple) -> str:
    return yaml.safe_dump(list(args), default_flow_style=True, width=10_000).strip()


@dataclass(frozen=True)
class Validator:
    """One validation rule of a parameter: its gpl name (``bounds<>``, ``jtac::element_gt``) and arguments."""

    name: str
    args: tuple = ()

    @property
    def rule(self) -> str:
        """The rule as written in the schema, e.g. ``bounds<>: [0.0, 100.0]``."""
        return f"{self.name}: {_format_args(self.args)}"

    @property
    def parameter_args(self) -> tuple[str, ...]:
        """Names of the other parameters this rule compares against."""
        return tuple(self.args[i] for i in _RULES[self.name].param_args)

    def describe(self) -> str:
        """Short human-readable text of the rule, for docs and ROS descriptors."""
        return _RULES[self.name].text(self.args)

    def check(self, name: str, value: Any, values: Mapping[str, Any]) -> None:
        """Raise ParameterError if the normalized value breaks this rule (values: the whole set)."""
        failure = _RULES[self.name].check(value, self.args, values)
        if failure is not None:
            index, offending, detail = failure
            raise _violation(name, offending, self.rule, detail, index)


# ------------------------------------------------------------------------------------------------ specs
@dataclass(frozen=True)
class ParameterSpec:
    """One parameter of the schema; for a ``__map_`` entry, one expansion of it (or the template)."""

    name: str
    type: str  # gpl type: bool, int, double, string, *_array, *_array_fixed_N, string_fixed_N
    # Normalized default (arrays as tuples); None for a parameter the configuration must give.
    default: Any
    description: str
    read_only: bool
    validators: tuple[Validator, ...] = ()
    additional_constraints: str = ""
    # The name as written in the schema, with its __map_<p> segments ("constraints.__map_joints.goal").
    template: str = ""
    # The string-array parameters the __map_ segments expand over, outermost first.
    map_keys: tuple[str, ...] = ()
    # Line of the parameter in the schema file (1-based), for error messages.
    line: int | None = None

    @property
    def base_type(self) -> str:
        """Element type: bool, int, double or string."""
        return _TYPE_RE.match(self.type).group(1)

    @property
    def is_array(self) -> bool:
        """True for the *_array types (fixed or not)."""
        return _TYPE_RE.match(self.type).group(2) is not None

    @property
    def max_size(self) -> int | None:
        """Capacity N of a *_fixed_N type (gpl: at most N elements or characters), else None."""
        size = _TYPE_RE.match(self.type).group(3)
        return int(size) if size else None

    @property
    def has_default(self) -> bool:
        """False for a parameter the configuration must provide."""
        return self.default is not None

    @property
    def is_mapped(self) -> bool:
        """True if the parameter comes from a ``__map_`` block."""
        return bool(self.map_keys)

    def normalize(self, value: Any) -> Any:
        """Check the value's type (and finiteness); return it as bool, int, float, str or a list of them."""
        if value is None:
            raise ParameterError(
                f"parameter '{self.name}' is required: the schema gives no default",
                name=self.name,
                rule="required",
            )
        if self.is_array:
            if not isinstance(value, list | tuple | array.array):
                raise _violation(
                    self.name, value, f"type {self.type}", f"expected a list, got {_type_name(value)}"
                )
            result = [_normalize_scalar(self.name, self.base_type, v, i) for i, v in enumerate(value)]
        else:
            result = _normalize_scalar(self.name, self.base_type, value)
        if self.max_size is not None and len(result) > self.max_size:
            raise _violation(
                self.name, value, f"type {self.type}", f"holds at most {self.max_size}, has {len(result)}"
            )
        return result

    def check(self, value: Any, values: Mapping[str, Any] | None = None) -> Any:
        """Normalize the value and apply every validator (values: the full set, for cross-parameter rules)."""
        normalized = self.normalize(value)
        context = values if values is not None else {}
        for validator in self.validators:
            validator.check(self.name, normalized, context)
        return normalized

    def constraints_text(self) -> str:
        """Human-readable summary of the type limits and validators ('> 0.0; finite')."""
        parts = [v.describe() for v in self.validators]
        if self.base_type == "double":
            parts.append("finite")
        if self.max_size is not None and not any(v.name == "fixed_size<>" for v in self.validators):
            parts.append(f"size ≤ {self.max_size}")
        if self.additional_constraints:
            parts.append(self.additional_constraints)
        return "; ".join(parts)


# ------------------------------------------------------------------------------------------------ YAML
class RosYamlLoader(yaml.SafeLoader):
    """SafeLoader that reads ``1e-3`` as a float, as the ROS parameter parser does (YAML 1.1 needs a dot).

    Shared by every YAML jtac reads from users (parameter files here, goal files in jtac_ros)."""


_Loader = RosYamlLoader


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def _read_yaml(path: Path, error: type[ParameterError]) -> tuple[Any, dict[tuple, int]]:
    """Parse a YAML file; return the data and the line (1-based) of every mapping key, by key path."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise error(f"malformed YAML: {exc}", source=where) from exc
    lines: dict[tuple, int] = {}

    def walk(node: yaml.Node, key_path: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for key_node, value_node in node.value:
                key = key_node.value
                # PyYAML keeps the last of two equal keys silently; a repeated parameter is a mistake.
                if key in seen:
                    raise error(
                        f"key '{key}' appears twice in the same mapping",
                        name=str(key),
                        source=f"{path}:{key_node.start_mark.line + 1}",
                    )
                seen.add(key)
                lines[(*key_path, key)] = key_node.start_mark.line + 1
                walk(value_node, (*key_path, key))

    if root is not None:
        walk(root, ())
    return data, lines


# ------------------------------------------------------------------------------------------------ schema
@dataclass(frozen=True)
class Schema:
    """The parsed schema: its namespace, source file and parameters in declaration order."""

    namespace: str
    path: Path
    entries: tuple[ParameterSpec, ...] = field(repr=False)

    # -------------------------------------------------------------------------- names and expansion
    @functools.cached_property
    def _by_template(self) -> dict[str, ParameterSpec]:
        return {spec.template: spec for spec in self.entries}

    @functools.cached_property
    def map_key_names(self) -> tuple[str, ...]:
        """The string-array parameters that ``__map_`` blocks expand over."""
        keys: dict[str, None] = {}
        for spec in self.entries:
            keys.update(dict.fromkeys(spec.map_keys))
        return tuple(keys)

    def template(self, name: str) -> ParameterSpec:
        """The schema entry of a plain parameter or a ``__map_`` template, by its schema name."""
        return self._by_template[name]

    def _key_values(self, key: str, values: Mapping[str, Any]) -> list[str]:
        spec = self._by_template[key]
        return spec.normalize(values.get(key, spec.default))

    def expand(self, values: Mapping[str, Any] | None = None) -> dict[str, ParameterSpec]:
        """Every concrete parameter, by name; ``__map_`` entries expand over values' keys (else defaults)."""
        values = values or {}
        keys = {key: self._key_values(key, values) for key in self.map_key_names}
        expanded: dict[str, ParameterSpec] = {}
        for spec in self.entries:
            if not spec.map_keys:
                expanded[spec.name] = spec
                continue
            for combo in itertools.product(*(keys[k] for k in spec.map_keys)):
                entries = iter(combo)
                segments = [
                    next(entries) if s.startswith(_MAP_PREFIX) else s for s in spec.template.split(".")
                ]
                name = ".".join(segments)
                expanded[name] = dataclasses.replace(spec, name=name)
        return expanded

    def names(self, values: Mapping[str, Any] | None = None) -> list[str]:
        """Every concrete parameter name, in declaration order."""
        return list(self.expand(values))

    def spec(self, name: str, values: Mapping[str, Any] | None = None) -> ParameterSpec:
        """The concrete parameter called name; raises ParameterError for an unknown name."""
        expanded = self.expand(values)
        if name not in expanded:
            raise _unknown_error(name, expanded)
        return expanded[name]

    def defaults(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Default value of every concrete parameter that has one (fresh lists: safe to mutate)."""
        return {
            name: spec.normalize(spec.default)
            for name, spec in self.expand(values).items()
            if spec.has_default
        }

    # -------------------------------------------------------------------------- validation
    def validate(
        self,
        values: Mapping[str, Any],
        *,
        source: str | None = None,
        lines: Mapping[str, int] | None = None,
    ) -> dict[str, Any]:
        """Validate a full or partial set of values; return every parameter, defaults filled in."""
        lines = lines or {}

        def located(name: str | None) -> str | None:
            if source and name in lines:
                return f"{source}:{lines[name]}"
            return source

        try:
            # The map keys decide which names exist, so they are checked before anything is expanded.
            for key in self.map_key_names:
                spec = self._by_template[key]
                if key in values:
                    normalized = spec.normalize(values[key])
                    for validator in spec.validators:
                        if not validator.parameter_args:
                            validator.check(key, normalized, {})
            expanded = self.expand(values)
            for name in values:
                if name not in expanded:
                    raise _unknown_error(name, expanded)
            merged = {name: values.get(name, spec.default) for name, spec in expanded.items()}
            normalized = {name: expanded[name].normalize(value) for name, value in merged.items()}
            for name, spec in expanded.items():
                for validator in spec.validators:
                    validator.check(name, normalized[name], normalized)
        except ParameterError as error:
            raise error.with_source(located(error.name)) from None
        return normalized

    def check_writable(self, name: str, values: Mapping[str, Any] | None = None) -> None:
        """Raise ParameterError if name is unknown or read_only (a runtime change must be rejected)."""
        if self.spec(name, values).read_only:
            raise _read_only_error(name)

    def validate_update(self, current: Mapping[str, Any], updates: Mapping[str, Any]) -> dict[str, Any]:
        """Validate a runtime change of some parameters; return the full new set (read_only ones refused)."""
        for name in updates:
            self.check_writable(name, current)
        merged = dict(current)
        merged.update(updates)
        return self.validate(merged)

    def load_params_file(self, path: str | Path, node_name: str | None = None) -> dict[str, Any]:
        """Load a ROS parameters file (``<node>: ros__parameters: ...``); return validated values."""
        path = Path(path)
        data, key_lines = _read_yaml(path, ParameterError)
        if not isinstance(data, dict) or not data:
            raise ParameterError(
                "expected a mapping of node names to {ros__parameters: ...}", source=str(path)
            )
        selected = _select_nodes(path, data, node_name, key_lines)
        flat: dict[str, Any] = {}
        flat_lines: dict[str, int] = {}
        for node_key in selected:
            entry = data[node_key]
            node_line = key_lines.get((node_key,))
            if not isinstance(entry, dict) or set(entry) != {"ros__parameters"}:
                raise ParameterError(
                    f"node entry '{node_key}' must hold exactly one key, ros__parameters",
                    source=_where(path, node_line),
                )
            params = entry["ros__parameters"]
            if params is None:
                continue
            if not isinstance(params, dict):
                raise ParameterError(
                    f"ros__parameters of '{node_key}' must be a mapping", source=_where(path, node_line)
                )
            _flatten(params, (node_key, "ros__parameters"), (), flat, flat_lines, key_lines)
        return self.validate(flat, source=str(path), lines=flat_lines)

    # -------------------------------------------------------------------------- docs
    def render_markdown(self) -> str:
        """The parameter reference as markdown (the content of docs/parameters.md)."""
        return render_markdown(self)


def _flatten(
    node: Mapping,
    key_path: tuple,
    name_path: tuple,
    out: dict[str, Any],
    out_lines: dict[str, int],
    key_lines: Mapping[tuple, int],
) -> None:
    """Turn nested mappings into dotted parameter names, as ROS does."""
    for key, value in node.items():
        name = ".".join((*name_path, str(key)))
        if isinstance(value, dict):
            _flatten(value, (*key_path, key), (*name_path, str(key)), out, out_lines, key_lines)
            continue
        out[name] = value
        line = key_lines.get((*key_path, key))
        if line is not None:
            out_lines[name] = line


def _node_matches(pattern: str, node_name: str) -> bool:
    """ROS node-name matching: ``*`` stands for one name token, ``**`` for any number of them."""
    pattern_tokens = [t for t in pattern.split("/") if t]
    name_tokens = [t for t in node_name.split("/") if t]

    @functools.cache
    def match(i: int, j: int) -> bool:
        if i == len(pattern_tokens):
            return j == len(name_tokens)
        if pattern_tokens[i] == "**":
            return any(match(i + 1, k) for k in range(j, len(name_tokens) + 1))
        if j == len(name_tokens):
            return False
        return pattern_tokens[i] in ("*", name_tokens[j]) and match(i + 1, j + 1)

    return match(0, 0)


def _select_nodes(path: Path, data: dict, node_name: str | None, key_lines: Mapping[tuple, int]) -> list:
    """Node entries of a parameters file that apply to node_name, in file order (later ones win)."""
    keys = list(data)
    for key in keys:
        if not isinstance(key, str):
            where = _where(path, key_lines.get((key,)))
            raise ParameterError(f"node name {key!r} is not a string", source=where)
    if node_name is not None:
        selected = [key for key in keys if _node_matches(key, node_name)]
        if not selected:
            raise ParameterError(
                f"no entry for node '{node_name}' (entries: {', '.join(keys)})", source=str(path)
            )
        return selected
    plain = {key.strip("/") for key in keys if "*" not in key}
    if len(plain) > 1:
        raise ParameterError(
            f"entries for several nodes ({', '.join(sorted(plain))}): pass node_name", source=str(path)
        )
    return keys


# ------------------------------------------------------------------------------------------------ loading
def _where(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line else str(path)


def _schema_error(path: Path, line: int | None, name: str | None, message: str) -> SchemaError:
    return SchemaError(message, name=name, source=_where(path, line))


def _parse_validator(path: Path, line: int | None, spec: ParameterSpec, key: Any, raw_args: Any) -> Validator:
    name = str(key)
    # gpl also accepts the built-in validators without "<>" (e.g. `gt_eq: [0.1]`).
    if name not in _RULES and f"{name}<>" in _RULES:
        name = f"{name}<>"
    if name not in _RULES:
        raise _schema_error(
            path,
            line,
            spec.name,
            f"parameter '{spec.name}': unknown validator '{key}' (known: {', '.join(_RULES)})",
        )
    rule = _RULES[name]
    # gpl: null means no arguments, a scalar is one argument.
    args = () if raw_args is None else tuple(raw_args) if isinstance(raw_args, list) else (raw_args,)
    if len(args) != rule.nargs:
        raise _schema_error(
            path,
            line,
            spec.name,
            f"parameter '{spec.name}': validator '{name}' takes {rule.nargs} argument(s), got {list(args)}",
        )
    targets = _targets(spec)
    if not rule.targets & targets:
        raise _schema_error(
            path,
            line,
            spec.name,
            f"parameter '{spec.name}': validator '{name}' does not apply to type {spec.type}",
        )
    bad_arg = f"parameter '{spec.name}': validator '{name}' has invalid arguments {list(args)}"
    if rule.param_args:
        if not all(isinstance(args[i], str) for i in rule.param_args):
            raise _schema_error(path, line, spec.name, bad_arg)
    elif name in ("one_of<>", "subset_of<>"):
        if not isinstance(args[0], list) or not args[0]:
            raise _schema_error(path, line, spec.name, bad_arg)
        try:
            args = (tuple(_normalize_scalar(spec.name, spec.base_type, v) for v in args[0]),)
        except ParameterError as exc:
            raise _schema_error(path, line, spec.name, f"{bad_arg}: {exc}") from None
    elif name in ("fixed_size<>", "size_gt<>", "size_lt<>"):
        if not _is_int(args[0]) or args[0] < 0:
            raise _schema_error(path, line, spec.name, bad_arg)
    elif args:
        if not all(_is_number(a) and math.isfinite(a) for a in args):
            raise _schema_error(path, line, spec.name, bad_arg)
        if len(args) == 2 and args[0] > args[1]:
            raise _schema_error(path, line, spec.name, f"{bad_arg}: lower bound above upper bound")
    return Validator(name, args)


def _targets(spec: ParameterSpec) -> frozenset[str]:
    """The validator target classes a parameter type belongs to."""
    numeric = spec.base_type in ("int", "double")
    if spec.is_array:
        targets = {"array", "sized"}
        if numeric:
            targets.add("number_array")
        if spec.base_type == "string":
            targets.add("string_array")
        return frozenset(targets)
    targets = {"scalar"}
    if numeric:
        targets.add("number")
    if spec.base_type == "string":
        targets.add("sized")
    return frozenset(targets)


def _parse_parameter(path: Path, key_path: tuple, body: Mapping, lines: Mapping[tuple, int]) -> ParameterSpec:
    line = lines.get(key_path)
    template = ".".join(key_path[1:])
    unknown = set(body) - _PARAMETER_KEYS
    if unknown:
        raise _schema_error(
            path,
            line,
            template,
            f"parameter '{template}': '{sorted(map(str, unknown))[0]}' is not valid syntax "
            f"(allowed: {', '.join(sorted(_PARAMETER_KEYS))})",
        )
    type_name = body["type"]
    match = _TYPE_RE.match(type_name) if isinstance(type_name, str) else None
    # gpl's fixed types are arrays and strings; bool_fixed_3 or int_fixed_3 mean nothing.
    if match is None or (match.group(3) and not match.group(2) and match.group(1) != "string"):
        raise _schema_error(path, line, template, f"parameter '{template}': invalid type {type_name!r}")
    description = body.get("description", "")
    read_only = body.get("read_only", False)
    constraints = body.get("additional_constraints", "")
    if not (isinstance(description, str) and isinstance(read_only, bool) and isinstance(constraints, str)):
        raise _schema_error(
            path,
            line,
            template,
            f"parameter '{template}': description and additional_constraints must be strings, "
            "read_only a bool",
        )
    map_keys = tuple(s[len(_MAP_PREFIX) :] for s in key_path[1:] if s.startswith(_MAP_PREFIX))
    spec = ParameterSpec(
        name=template,
        type=type_name,
        default=None,
        description=" ".join(description.split()),
        read_only=read_only,
        additional_constraints=" ".join(constraints.split()),
        template=template,
        map_keys=map_keys,
        line=line,
    )
    if body.get("default_value") is not None:
        try:
            default = spec.normalize(body["default_value"])
        except ParameterError as exc:
            raise _schema_error(path, line, template, f"default_value: {exc}") from None
        # Arrays are kept as tuples so that no caller can change the schema's default in place.
        spec = dataclasses.replace(spec, default=tuple(default) if isinstance(default, list) else default)
    validation = body.get("validation") or {}
    if not isinstance(validation, dict):
        raise _schema_error(path, line, template, f"parameter '{template}': validation must be a mapping")
    validators = tuple(
        _parse_validator(path, lines.get((*key_path, "validation", k), line), spec, k, a)
        for k, a in validation.items()
    )
    return dataclasses.replace(spec, validators=validators)


def _parse_group(
    path: Path, key_path: tuple, body: Any, lines: Mapping[tuple, int], out: list[ParameterSpec]
) -> None:
    line = lines.get(key_path)
    group = ".".join(key_path[1:]) or key_path[0]
    if not isinstance(body, dict) or not body:
        raise _schema_error(path, line, group, f"'{group}' must be a parameter or a non-empty group")
    for key, child in body.items():
        child_path = (*key_path, key)
        key_text = str(key)
        token = key_text[len(_MAP_PREFIX) :] if key_text.startswith(_MAP_PREFIX) else key_text
        if not all(_TOKEN_RE.match(t) for t in token.split(".")):
            raise _schema_error(
                path, lines.get(child_path), key_text, f"'{key_text}' is not a valid parameter name token"
            )
        if isinstance(child, dict) and "type" in child and not isinstance(child["type"], dict):
            if key_text.startswith(_MAP_PREFIX):
                raise _schema_error(
                    path, lines.get(child_path), key_text, f"'{key_text}' must hold parameters, not be one"
                )
            out.append(_parse_parameter(path, child_path, child, lines))
        else:
            _parse_group(path, child_path, child, lines, out)


def _check_references(schema: Schema) -> None:
    """Every __map_ key and every parameter-naming argument must name a plain, suitable parameter."""
    plain = {spec.name: spec for spec in schema.entries if not spec.map_keys}
    for spec in schema.entries:
        for key in spec.map_keys:
            target = plain.get(key)
            if target is None or target.type != "string_array":
                raise _schema_error(
                    schema.path,
                    spec.line,
                    spec.template,
                    f"parameter '{spec.template}': __map_{key} needs a string_array parameter '{key}'",
                )
        for validator in spec.validators:
            for other in validator.parameter_args:
                if other not in plain or other == spec.name:
                    raise _schema_error(
                        schema.path,
                        spec.line,
                        spec.template,
                        f"parameter '{spec.template}': {validator.rule} names no other plain parameter",
                    )


def load_schema(path: str | Path | None = None) -> Schema:
    """Parse and check a schema file (default: params/jtac_parameters.yaml); defaults must validate."""
    if path is None:
        path = DEFAULT_SCHEMA_PATH if DEFAULT_SCHEMA_PATH.exists() else _PACKAGED_SCHEMA_PATH
    path = Path(path)
    data, lines = _read_yaml(path, SchemaError)
    if not isinstance(data, dict) or len(data) != 1:
        raise SchemaError("the schema must have exactly one root key, its namespace", source=str(path))
    namespace = next(iter(data))
    entries: list[ParameterSpec] = []
    _parse_group(path, (namespace,), data[namespace], lines, entries)
    names = [spec.template for spec in entries]
    for spec in entries:
        if names.count(spec.template) > 1:
            message = f"parameter '{spec.template}' is declared twice"
            raise _schema_error(path, spec.line, spec.template, message)
    schema = Schema(namespace=str(namespace), path=path, entries=tuple(entries))
    _check_references(schema)
    # Every default must pass its own rules, checked against the other defaults; parameters without a
    # default are required from the configuration and checked when it is validated.
    defaults = schema.defaults()
    for name, spec in schema.expand().items():
        if not spec.has_default:
            continue
        try:
            for validator in spec.validators:
                validator.check(name, defaults[name], defaults)
        except ParameterError as exc:
            raise _schema_error(path, spec.line, spec.template, f"default value invalid: {exc}") from None
    return schema


@functools.cache
def default_schema() -> Schema:
    """The schema at the default path, loaded once per process."""
    return load_schema()


def load_params_file(
    path: str | Path, node_name: str | None = None, schema: Schema | None = None
) -> dict[str, Any]:
    """Load and validate a ROS parameters file against the schema; return every parameter's value."""
    return (schema or default_schema()).load_params_file(path, node_name)


# ------------------------------------------------------------------------------------------------ docs
_DOCS_HEADER = """\
<!-- Generated from params/jtac_parameters.yaml by `python -m jtac_py.parameters --write-docs`.
     Do not edit: change the schema and regenerate (a test checks that this file is current). -->
# jtac parameters

The controller's parameters, one table generated from `params/jtac_parameters.yaml`
(generate_parameter_library format). The ROS node declares them with these types, ranges and
read-only flags, and the Python API (`jtac_py.parameters`) applies the same validation to a
parameters file or a runtime change.

- **Read-only** parameters fix the controller's structure and the memory it claims at configure. They
  are set by the configuration; a runtime change is rejected, also while the controller is inactive.
  To change one, load the controller again with the new configuration.
- The other parameters can change at runtime within their constraints; a change applies atomically at
  the next control-cycle boundary.
- Every double (and double-array element) must be finite. An `int` parameter takes integers only, a
  `double` one takes integers or floats; booleans are not numbers.
- `<joints>` and `<sensor_frames>` in a name stand for each entry of that parameter: the schema's
  `__map_joints` and `__map_sensor_frames` blocks expand into one parameter per joint or sensor frame.
- Constraints written with backquoted names compare against another parameter (jtac's `jtac::*`
  validators, described in the schema's header).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default_text(spec: ParameterSpec) -> str:
    if not spec.has_default:
        return "(required)"
    value = spec.default
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{_format_args(value) if isinstance(value, tuple) else _format_args((value,))[1:-1]}`"


def render_markdown(schema: Schema | None = None) -> str:
    """The parameter reference table of a schema as markdown."""
    schema = schema or default_schema()
    rows = [
        "| Parameter | Type | Default | Read-only | Constraints | Description |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for spec in schema.entries:
        display = ".".join(
            f"<{s[len(_MAP_PREFIX) :]}>" if s.startswith(_MAP_PREFIX) else s for s in spec.template.split(".")
        )
        cells = (
            f"`{display}`",
            spec.type,
            _default_text(spec),
            "yes" if spec.read_only else "no",
            spec.constraints_text(),
            spec.description,
        )
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return _DOCS_HEADER + "\n" + "\n".join(rows) + "\n"


def write_docs(path: str | Path | None = None, schema: Schema | None = None) -> bool:
    """Write the generated markdown to path (default docs/parameters.md); return True if it changed."""
    path = Path(path) if path is not None else DEFAULT_DOCS_PATH
    text = render_markdown(schema)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


def docs_are_current(path: str | Path | None = None, schema: Schema | None = None) -> bool:
    """True if the docs file holds exactly what render_markdown produces now."""
    path = Path(path) if path is not None else DEFAULT_DOCS_PATH
    return path.exists() and path.read_text(encoding="utf-8") == render_markdown(schema)


# -------------------------------------------------------------------------------------------- jtac semantics
def tip_ft_sensor_names(values: Mapping[str, Any]) -> list[str]:
    """The F/T sensor of each tip, in sensor_frames order ("" = that tip has no sensor, no admittance)."""
    return [
        values.get(f"ft_sensors.{frame}.name") or values.get("ft_sensor_name", "")
        for frame in values.get("sensor_frames", [])
    ]


def admittance_enabled(values: Mapping[str, Any]) -> bool:
    """True if at least one tip has a force/torque sensor, i.e. the controller runs its admittance."""
    return any(tip_ft_sensor_names(values))


def default_joint_tolerances(values: Mapping[str, Any]) -> tuple[list[float], list[float]]:
    """Default (path, goal) tolerance of each joint in joints order [rad], per-joint values over global."""
    path = [
        values.get(f"constraints.{joint}.path_tolerance") or values["default_path_tolerance"]
        for joint in values["joints"]
    ]
    goal = [
        values.get(f"constraints.{joint}.goal_tolerance") or values["default_goal_tolerance"]
        for joint in values["joints"]
    ]
    return path, goal


# ------------------------------------------------------------------------------------------------ CLI
def main(argv: Sequence[str] | None = None) -> int:
    """Command line: regenerate or check docs/parameters.md, or validate a parameters file."""
    parser = argparse.ArgumentParser(prog="python -m jtac_py.parameters", description=main.__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write-docs", action="store_true", help="regenerate the docs file")
    action.add_argument("--check-docs", action="store_true", help="exit 1 if the docs file is stale")
    action.add_argument("--validate", metavar="FILE", help="validate a ROS parameters file")
    parser.add_argument("--schema", help="schema file (default: params/jtac_parameters.yaml)")
    parser.add_argument("--docs", help="docs file (default: docs/parameters.md)")
    parser.add_argument("--node", help="node name to select in the parameters file")
    args = parser.parse_args(argv)
    try:
        schema = load_schema(args.schema)
        if args.write_docs:
            changed = write_docs(args.docs, schema)
            print(f"{args.docs or DEFAULT_DOCS_PATH}: {'written' if changed else 'already current'}")
            return 0
        if args.check_docs:
            if docs_are_current(args.docs, schema):
                return 0
            print(f"{args.docs or DEFAULT_DOCS_PATH} is stale: run python -m jtac_py.parameters --write-docs")
            return 1
        values = schema.load_params_file(args.validate, args.node)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for name, value in values.items():
        print(f"{name}: {value!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
