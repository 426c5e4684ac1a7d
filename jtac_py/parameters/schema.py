"""The schema model and its loader: ParameterSpec (one parameter), Schema (all of them, ``__map_``
expansion, validation of a value set, runtime updates, parameters files) and load_schema()."""

from __future__ import annotations

import array
import dataclasses
import functools
import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jtac_py.parameters.files import _flatten, _read_yaml, _select_nodes, _where
from jtac_py.parameters.validators import (
    _RULES,
    ParameterError,
    SchemaError,
    Validator,
    _is_int,
    _is_number,
    _normalize_scalar,
    _read_only_error,
    _type_name,
    _unknown_error,
    _violation,
)

_PACKAGE_DIR = Path(__file__).resolve().parent
_REPO_ROOT = _PACKAGE_DIR.parent.parent
DEFAULT_SCHEMA_PATH = _REPO_ROOT / "params" / "jtac_parameters.yaml"
# An installed wheel has no repository around it; packaging places the schema beside jtac_py's modules.
_PACKAGED_SCHEMA_PATH = _PACKAGE_DIR.parent / "jtac_parameters.yaml"

_PARAMETER_KEYS = frozenset(
    {"type", "default_value", "description", "read_only", "validation", "additional_constraints"}
)
_TYPE_RE = re.compile(r"^(bool|int|double|string)(_array)?(?:_fixed_([1-9][0-9]*))?$")
# A name token, as ROS allows in parameter names, or a __map_ block over a parameter (possibly dotted).
_TOKEN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_MAP_PREFIX = "__map_"


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
        flat, flat_lines = self.read_params_file(path, node_name)
        return self.validate(flat, source=str(path), lines=flat_lines)

    def read_params_file(
        self, path: str | Path, node_name: str | None = None
    ) -> tuple[dict[str, Any], dict[str, int]]:
        """A ROS parameters file's values as given (dotted names, node selection, YAML errors with
        file:line), not validated, and the line of each: for a caller that adds values before validating."""
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
        return flat, flat_lines

    # -------------------------------------------------------------------------- docs
    def render_markdown(self) -> str:
        """The parameter reference as markdown (the content of docs/parameters.md)."""
        from jtac_py.parameters.docs import render_markdown  # docs imports this module

        return render_markdown(self)


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
