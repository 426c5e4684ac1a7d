"""Parameter errors, type rules and the validator engine: gpl's validators with gpl's semantics plus
jtac's own ``jtac::*`` validators (listed in the schema's header)."""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

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
    return None if len(value) > 0 else (None, value, _DETAILS["not_empty<>"](()))


def _check_unique(value, _args, _values):
    seen = set()
    for index, element in enumerate(value):
        if element in seen:
            return index, element, _DETAILS["unique<>"](())
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
    detail = _DETAILS["jtac::subset_of_param"](args)
    return _first_element(value, lambda e: e not in allowed, detail)


def _check_not_empty_if(value, args, values):
    if len(value) > 0 or not values.get(args[0]):
        return None
    return None, value, f"must not be empty while '{args[0]}' is set ({values.get(args[0])!r})"


def _join(values: Iterable[Any]) -> str:
    return ", ".join(str(v) for v in values)


# The fixed part of each rule's failure text (a size rule adds "(has n)"); the C++ generator words
# Params::validate()'s messages with the same functions.
_DETAILS: dict[str, Callable[[tuple], str]] = {
    "bounds<>": lambda a: f"must be within [{a[0]}, {a[1]}]",
    "lt<>": lambda a: f"must be less than {a[0]}",
    "gt<>": lambda a: f"must be greater than {a[0]}",
    "lt_eq<>": lambda a: f"must be less than or equal to {a[0]}",
    "gt_eq<>": lambda a: f"must be greater than or equal to {a[0]}",
    "one_of<>": lambda a: f"must be one of {{{_join(a[0])}}}",
    "fixed_size<>": lambda a: f"must have exactly {a[0]} elements",
    "size_gt<>": lambda a: f"must have more than {a[0]} elements",
    "size_lt<>": lambda a: f"must have fewer than {a[0]} elements",
    "subset_of<>": lambda a: f"every element must be in {{{_join(a[0])}}}",
    "element_bounds<>": lambda a: f"every element must be within [{a[0]}, {a[1]}]",
    "lower_element_bounds<>": lambda a: f"every element must be ≥ {a[0]}",
    "upper_element_bounds<>": lambda a: f"every element must be ≤ {a[0]}",
    "jtac::element_gt": lambda a: f"every element must be greater than {a[0]}",
    "jtac::elements_not_empty": lambda _a: "elements must not be empty strings",
    "not_empty<>": lambda _a: "must not be empty",
    "unique<>": lambda _a: "elements must be unique (this one repeats an earlier one)",
    "jtac::subset_of_param": lambda a: f"every element must be an element of '{a[0]}'",
}

_NUMBER = frozenset({"number"})
_SIZED = frozenset({"sized"})
_ARRAY = frozenset({"array"})
_NUMBER_ARRAY = frozenset({"number_array"})

_RULES: dict[str, _Rule] = {
    "bounds<>": _Rule(
        _NUMBER,
        2,
        _scalar(lambda v, a: a[0] <= v <= a[1], _DETAILS["bounds<>"]),
        lambda a: f"within [{a[0]}, {a[1]}]",
    ),
    "lt<>": _Rule(
        _NUMBER,
        1,
        _scalar(lambda v, a: v < a[0], _DETAILS["lt<>"]),
        lambda a: f"< {a[0]}",
    ),
    "gt<>": _Rule(
        _NUMBER,
        1,
        _scalar(lambda v, a: v > a[0], _DETAILS["gt<>"]),
        lambda a: f"> {a[0]}",
    ),
    "lt_eq<>": _Rule(
        _NUMBER,
        1,
        _scalar(lambda v, a: v <= a[0], _DETAILS["lt_eq<>"]),
        lambda a: f"≤ {a[0]}",
    ),
    "gt_eq<>": _Rule(
        _NUMBER,
        1,
        _scalar(lambda v, a: v >= a[0], _DETAILS["gt_eq<>"]),
        lambda a: f"≥ {a[0]}",
    ),
    "one_of<>": _Rule(
        frozenset({"scalar"}),
        1,
        _scalar(lambda v, a: v in a[0], _DETAILS["one_of<>"]),
        lambda a: f"one of {{{_join(a[0])}}}",
    ),
    "fixed_size<>": _Rule(
        _SIZED,
        1,
        _size(lambda n, k: n == k, _DETAILS["fixed_size<>"]),
        lambda a: f"size {a[0]}",
    ),
    "size_gt<>": _Rule(
        _SIZED,
        1,
        _size(lambda n, k: n > k, _DETAILS["size_gt<>"]),
        lambda a: f"size > {a[0]}",
    ),
    "size_lt<>": _Rule(
        _SIZED,
        1,
        _size(lambda n, k: n < k, _DETAILS["size_lt<>"]),
        lambda a: f"size < {a[0]}",
    ),
    "not_empty<>": _Rule(_SIZED, 0, _check_not_empty, lambda _a: "not empty"),
    "unique<>": _Rule(_ARRAY, 0, _check_unique, lambda _a: "unique elements"),
    "subset_of<>": _Rule(
        _ARRAY,
        1,
        _each(lambda e, a: e not in a[0], _DETAILS["subset_of<>"]),
        lambda a: f"elements in {{{_join(a[0])}}}",
    ),
    "element_bounds<>": _Rule(
        _NUMBER_ARRAY,
        2,
        _each(lambda e, a: not a[0] <= e <= a[1], _DETAILS["element_bounds<>"]),
        lambda a: f"elements within [{a[0]}, {a[1]}]",
    ),
    "lower_element_bounds<>": _Rule(
        _NUMBER_ARRAY,
        1,
        _each(lambda e, a: e < a[0], _DETAILS["lower_element_bounds<>"]),
        lambda a: f"elements ≥ {a[0]}",
    ),
    "upper_element_bounds<>": _Rule(
        _NUMBER_ARRAY,
        1,
        _each(lambda e, a: e > a[0], _DETAILS["upper_element_bounds<>"]),
        lambda a: f"elements ≤ {a[0]}",
    ),
    # jtac's own validators: gpl has no strict element bound and no rule that looks at another parameter.
    "jtac::element_gt": _Rule(
        _NUMBER_ARRAY,
        1,
        _each(lambda e, a: e <= a[0], _DETAILS["jtac::element_gt"]),
        lambda a: f"elements > {a[0]}",
    ),
    "jtac::elements_not_empty": _Rule(
        frozenset({"string_array"}),
        0,
        _each(lambda e, _a: e == "", _DETAILS["jtac::elements_not_empty"]),
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

    def detail(self) -> str:
        """The fixed part of this rule's failure text ("must be greater than 0.0")."""
        return _DETAILS[self.name](self.args)

    def describe(self) -> str:
        """Short human-readable text of the rule, for docs and ROS descriptors."""
        return _RULES[self.name].text(self.args)

    def check(self, name: str, value: Any, values: Mapping[str, Any]) -> None:
        """Raise ParameterError if the normalized value breaks this rule (values: the whole set)."""
        failure = _RULES[self.name].check(value, self.args, values)
        if failure is not None:
            index, offending, detail = failure
            raise _violation(name, offending, self.rule, detail, index)
