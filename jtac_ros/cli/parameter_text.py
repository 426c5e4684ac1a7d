"""Parameter values as ``jtac param`` prints them and reads them (YAML, as ``ros2 param`` does)."""

from __future__ import annotations

from typing import Any

from jtac_py.cli.common import EXIT_USAGE, CliError

__all__ = ["parameter_text", "parameter_value"]


def parameter_text(value: Any) -> str:
    """A ParameterValue as text: the value of its type (lists as YAML flow sequences)."""
    from rcl_interfaces.msg import ParameterType as T

    fields = {
        T.PARAMETER_BOOL: "bool_value",
        T.PARAMETER_INTEGER: "integer_value",
        T.PARAMETER_DOUBLE: "double_value",
        T.PARAMETER_STRING: "string_value",
        T.PARAMETER_BYTE_ARRAY: "byte_array_value",
        T.PARAMETER_BOOL_ARRAY: "bool_array_value",
        T.PARAMETER_INTEGER_ARRAY: "integer_array_value",
        T.PARAMETER_DOUBLE_ARRAY: "double_array_value",
        T.PARAMETER_STRING_ARRAY: "string_array_value",
    }
    if value.type not in fields:
        return "(not set)"
    data = getattr(value, fields[value.type])
    if isinstance(data, str):
        return repr(data) if data == "" or data.strip() != data else data
    if isinstance(data, bool | int | float):
        return str(data).lower() if isinstance(data, bool) else repr(data)
    return "[" + ", ".join(_parameter_text_item(v) for v in list(data)) + "]"


def _parameter_text_item(item: Any) -> str:
    """One element of an array parameter, as YAML writes it."""
    if isinstance(item, bool):
        return str(item).lower()
    return repr(item) if isinstance(item, str | float) else str(item)


def parameter_value(text: str, type_id: int, name: str) -> Any:
    """VALUE (YAML, as `ros2 param set` reads it) as a ParameterValue of the declared type; CliError
    naming the parameter, the value and the type when it does not fit."""
    import yaml
    from rcl_interfaces.msg import ParameterType as T
    from rcl_interfaces.msg import ParameterValue

    try:
        data = yaml.safe_load(text) if type_id != T.PARAMETER_STRING else text
    except yaml.YAMLError:
        data = text
    value = ParameterValue(type=type_id)
    bad = CliError(EXIT_USAGE, f"{name}: {text!r} is not a {_TYPE_NAMES.get(type_id, 'value')}")
    scalar = {
        T.PARAMETER_BOOL: ("bool_value", lambda v: isinstance(v, bool), bool),
        T.PARAMETER_INTEGER: ("integer_value", lambda v: isinstance(v, int) and not isinstance(v, bool), int),
        T.PARAMETER_DOUBLE: (
            "double_value",
            lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            float,
        ),
        T.PARAMETER_STRING: ("string_value", lambda v: isinstance(v, str), str),
    }
    arrays = {
        T.PARAMETER_BOOL_ARRAY: T.PARAMETER_BOOL,
        T.PARAMETER_INTEGER_ARRAY: T.PARAMETER_INTEGER,
        T.PARAMETER_DOUBLE_ARRAY: T.PARAMETER_DOUBLE,
        T.PARAMETER_STRING_ARRAY: T.PARAMETER_STRING,
    }
    if type_id in scalar:
        field, fits, cast = scalar[type_id]
        if not fits(data):
            raise bad
        setattr(value, field, cast(data))
        return value
    if type_id in arrays:
        field, fits, cast = scalar[arrays[type_id]]
        if not isinstance(data, list) or not all(fits(v) for v in data):
            raise bad
        setattr(value, field.replace("_value", "_array_value"), [cast(v) for v in data])
        return value
    raise bad


_TYPE_NAMES = {
    1: "bool",
    2: "integer",
    3: "double",
    4: "string",
    5: "byte array",
    6: "bool array",
    7: "integer array",
    8: "double array",
    9: "string array",
}
