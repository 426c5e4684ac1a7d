"""The C++ side of the schema, generated: ``jtac::Params`` (jtac_core/include/jtac_core/jtac_parameters.hpp)
and its pybind11 binding (bindings/bind_parameters.cpp), as generate_parameter_library does for
ros2_controllers.

``Params`` holds every parameter under the schema's own name, with the schema's type and default: groups
are nested structs (``CamelCase`` type, ``snake_case`` member), a ``__map_<p>`` block is a
``std::map<std::string, Map<P>> <p>_map`` keyed by the elements of ``p`` (gpl's spelling; a missing entry
holds the defaults). ``Params::validate()`` applies the schema's rules in the order and with the words of
``Schema.validate`` (the validators module), so a value refused in Python is refused in C++ with the same
message. The files are committed (a build needs neither Python nor the schema) and ``make lint`` fails
when they are stale (``python -m jtac_py.parameters --check``).
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from jtac_py.parameters.schema import _MAP_PREFIX, _REPO_ROOT, ParameterSpec, Schema, default_schema
from jtac_py.parameters.validators import Validator

DEFAULT_HEADER_PATH = _REPO_ROOT / "jtac_core" / "include" / "jtac_core" / "jtac_parameters.hpp"
DEFAULT_BINDING_PATH = _REPO_ROOT / "bindings" / "bind_parameters.cpp"

_GENERATED = (
    "// Generated from params/jtac_parameters.yaml by `python -m jtac_py.parameters --write`: do not edit.\n"
    "// Change the schema and regenerate; `make lint` fails while this file is stale."
)
_WIDTH = 100  # .clang-format's ColumnLimit


# ------------------------------------------------------------------------------------------------ names
def struct_name(segment: str) -> str:
    """C++ type of a group or ``__map_`` entry: ``ft_sensors`` -> ``FtSensors``,
    ``__map_joints`` -> ``MapJoints``."""
    if segment.startswith(_MAP_PREFIX):
        return "Map" + struct_name(segment[len(_MAP_PREFIX) :])
    return "".join(part[:1].upper() + part[1:] for part in segment.split("_"))


def map_member(segment: str) -> str:
    """C++ member holding a ``__map_<p>`` block's entries: ``__map_joints`` -> ``joints_map``."""
    return f"{segment[len(_MAP_PREFIX) :]}_map"


def map_blocks(schema: Schema) -> list[tuple[str, str, tuple[ParameterSpec, ...]]]:
    """Every ``__map_`` block as (group path, key parameter, its parameters): one level, under a group."""
    blocks: dict[tuple[str, str], list[ParameterSpec]] = {}
    for spec in schema.entries:
        if not spec.map_keys:
            continue
        segments = spec.template.split(".")
        maps = [i for i, s in enumerate(segments) if s.startswith(_MAP_PREFIX)]
        if len(maps) != 1 or maps[0] == 0 or maps[0] != len(segments) - 2:
            raise ValueError(
                f"parameter '{spec.template}': the C++ generator takes one __map_ level, inside a group, "
                "holding parameters"
            )
        blocks.setdefault((".".join(segments[: maps[0]]), spec.map_keys[0]), []).append(spec)
    return [(group, key, tuple(specs)) for (group, key), specs in blocks.items()]


# ------------------------------------------------------------------------------------------------ C++ values
_SCALAR_TYPES = {"bool": "bool", "int": "std::int64_t", "double": "double", "string": "std::string"}


def cpp_type(spec: ParameterSpec) -> str:
    """gpl type -> C++ type. Arrays (fixed or not) are std::vector: Params is configure-time data, and
    validate() reports a wrong size with the schema's words instead of a failed conversion."""
    scalar = _SCALAR_TYPES[spec.base_type]
    return f"std::vector<{scalar}>" if spec.is_array else scalar


def _cpp_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _cpp_scalar(base: str, value) -> str:
    if base == "bool":
        return "true" if value else "false"
    if base == "string":
        return _cpp_string(value)
    if base == "double":
        return repr(float(value))
    return str(int(value))


def cpp_value(spec: ParameterSpec, value) -> str:
    """A C++ initializer of the value (arrays as braced lists)."""
    if spec.is_array:
        return "{" + ", ".join(_cpp_scalar(spec.base_type, v) for v in value) + "}"
    return _cpp_scalar(spec.base_type, value)


def _doc(text: str, indent: str) -> list[str]:
    return [
        indent + "/// " + line
        for line in textwrap.wrap(text, _WIDTH - len(indent) - 4, break_on_hyphens=False)
    ]


# ------------------------------------------------------------------------------------------------ header
@dataclass
class _Group:
    name: str  # member name ("" for Params itself)
    members: list = field(default_factory=list)  # ParameterSpec, _Group or _Map, in schema order


@dataclass
class _Map:
    segment: str  # "__map_joints"
    key: str  # "joints"
    specs: list = field(default_factory=list)


def _tree(schema: Schema) -> _Group:
    root = _Group("")
    for spec in schema.entries:
        segments = spec.template.split(".")
        node = root
        for segment in segments[:-1]:
            if segment.startswith(_MAP_PREFIX):
                found = next((m for m in node.members if isinstance(m, _Map) and m.segment == segment), None)
                if found is None:
                    found = _Map(segment, segment[len(_MAP_PREFIX) :])
                    node.members.append(found)
                node = found
                continue
            found = next((m for m in node.members if isinstance(m, _Group) and m.name == segment), None)
            if found is None:
                found = _Group(segment)
                node.members.append(found)
            node = found
        node.specs.append(spec) if isinstance(node, _Map) else node.members.append(spec)
    return root


def _field_lines(spec: ParameterSpec, indent: str) -> list[str]:
    init = f" = {cpp_value(spec, spec.default)}" if spec.has_default else "{}"
    return [
        *_doc(spec.description, indent),
        f"{indent}{cpp_type(spec)} {spec.template.split('.')[-1]}{init};",
    ]


def _group_lines(group: _Group, indent: str) -> list[str]:
    lines: list[str] = []
    for member in group.members:
        if isinstance(member, ParameterSpec):
            lines += _field_lines(member, indent)
        elif isinstance(member, _Map):
            lines += [
                f"{indent}/// One entry per element of `{member.key}`, keyed by it (schema: "
                f"`{member.segment}`); an element without an entry takes the defaults.",
                f"{indent}struct {struct_name(member.segment)} {{",
            ]
            for spec in member.specs:
                lines += _field_lines(spec, indent + "  ")
            lines += [
                f"{indent}}};",
                f"{indent}std::map<std::string, {struct_name(member.segment)}> {map_member(member.segment)};",
            ]
        else:
            lines += [
                f"{indent}/// The schema's `{member.name}` group.",
                f"{indent}struct {struct_name(member.name)} {{",
                *_group_lines(member, indent + "  "),
                f"{indent}}} {member.name};",
            ]
    return lines


# ------------------------------------------------------------------------------------------------ validate()
def _fail(name: str, value: str, rule: str, detail: str, index: str | None = None) -> str:
    """C++: return the violation message (every argument a C++ expression)."""
    args = f"{name}, {value}, {rule}, {detail}" + (f", {index}" if index else "")
    return f"return d::violation({args});"


def _element_test(v: Validator, base: str) -> str:
    """C++ condition on an element ``e`` that breaks the element rule v."""
    a = v.args
    if v.name == "subset_of<>":
        items = ", ".join(_cpp_scalar(base, x) for x in a[0])
        return f"!d::one_of<{_SCALAR_TYPES[base]}>(e, {{{items}}})"
    if v.name == "jtac::subset_of_param":
        return f"!d::contains({a[0]}, e)"
    if v.name == "element_bounds<>":
        return f"!(e >= {a[0]!r} && e <= {a[1]!r})"
    return {
        "lower_element_bounds<>": f"e < {a[0]!r}" if a else "",
        "upper_element_bounds<>": f"e > {a[0]!r}" if a else "",
        "jtac::element_gt": f"e <= {a[0]!r}" if a else "",
        "jtac::elements_not_empty": 'e == ""',
    }[v.name]


_COMPARE = {"bounds<>": None, "lt<>": "<", "gt<>": ">", "lt_eq<>": "<=", "gt_eq<>": ">="}
_SIZE_COMPARE = {"fixed_size<>": "==", "size_gt<>": ">", "size_lt<>": "<"}
_ELEMENT_RULES = (
    "subset_of<>",
    "element_bounds<>",
    "lower_element_bounds<>",
    "upper_element_bounds<>",
    "jtac::element_gt",
    "jtac::elements_not_empty",
    "jtac::subset_of_param",
)


def _check_lines(spec: ParameterSpec, value: str, name: str) -> list[str]:
    """C++ statements returning the first violation of spec's validators by value (C++ expressions;
    another parameter is reached by its name, a member of Params inside validate())."""
    out = []
    for v in spec.validators:
        rule, a, n = _cpp_string(v.rule), v.args, v.name
        detail = "" if v.parameter_args else _cpp_string(v.detail())
        shown = f"d::repr({value})"
        if n in _COMPARE:
            cond = (
                f"{value} >= {a[0]!r} && {value} <= {a[1]!r}"
                if n == "bounds<>"
                else f"{value} {_COMPARE[n]} {a[0]!r}"
            )
            out.append(f"if (!({cond})) {_fail(name, shown, rule, detail)}")
        elif n == "one_of<>":
            items = ", ".join(_cpp_scalar(spec.base_type, x) for x in a[0])
            test = f"d::one_of<{_SCALAR_TYPES[spec.base_type]}>({value}, {{{items}}})"
            out.append(f"if (!{test}) {_fail(name, shown, rule, detail)}")
        elif n in _SIZE_COMPARE:
            has = f"{detail} + d::has({value})"
            out.append(
                f"if (!(std::ssize({value}) {_SIZE_COMPARE[n]} {a[0]})) {_fail(name, shown, rule, has)}"
            )
        elif n == "not_empty<>":
            out.append(f"if ({value}.empty()) {_fail(name, shown, rule, detail)}")
        elif n == "unique<>":
            element = f"d::repr({value}[static_cast<std::size_t>(i)])"
            out.append(
                f"if (auto i = d::first_repeat({value}); i >= 0) {_fail(name, element, rule, detail, 'i')}"
            )
        elif n in _ELEMENT_RULES:
            detail = _cpp_string(v.detail())
            element = f"d::repr({value}[static_cast<std::size_t>(i)])"
            bad = _element_test(v, spec.base_type)
            out.append(
                f"if (auto i = d::first_index({value}, [&](const auto& e) {{ return {bad}; }}); i >= 0) "
                + _fail(name, element, rule, detail, "i")
            )
        elif n == "jtac::size_eq_param":
            text = (
                f'"must have as many elements as \'{a[0]}\' (" + std::to_string({a[0]}.size()) + "), has " + '
                f"std::to_string({value}.size())"
            )
            out.append(f"if ({value}.size() != {a[0]}.size()) {_fail(name, shown, rule, text)}")
        elif n == "jtac::not_empty_if":
            text = f'"must not be empty while \'{a[0]}\' is set (" + d::repr({a[0]}) + ")"'
            out.append(f"if ({value}.empty() && !{a[0]}.empty()) {_fail(name, shown, rule, text)}")
        else:
            raise ValueError(f"parameter '{spec.template}': no C++ for validator {n}")
    return out


def _type_lines(spec: ParameterSpec, value: str, name: str) -> list[str]:
    """The checks of Python's normalize() that a C++ type does not make: finite doubles, the capacity
    of a *_fixed_N type."""
    out = []
    if spec.base_type == "double":
        if spec.is_array:
            element = f"d::repr({value}[static_cast<std::size_t>(i)])"
            out.append(
                f"if (auto i = d::first_index({value}, [](double e) {{ return !std::isfinite(e); }}); "
                + "i >= 0) "
                + _fail(name, element, '"finite"', "d::kFiniteDetail", "i")
            )
        else:
            shown = f"d::repr({value})"
            out.append(f"if (!std::isfinite({value})) " + _fail(name, shown, '"finite"', "d::kFiniteDetail"))
    if spec.max_size is not None:
        rule = f'"type {spec.type}"'
        text = f'"holds at most {spec.max_size}, has " + std::to_string({value}.size())'
        out.append(
            f"if (std::ssize({value}) > {spec.max_size}) {_fail(name, f'd::repr({value})', rule, text)}"
        )
    return out


def _validate_body(schema: Schema) -> list[str]:
    plain = [s for s in schema.entries if not s.map_keys]
    blocks = map_blocks(schema)
    body: list[str] = []
    # 1. The map keys decide which names exist: their own rules first (Schema.validate's order).
    for key in schema.map_key_names:
        spec = schema.template(key)
        name = _cpp_string(key)
        body += _type_lines(spec, key, name)
        unary = [v for v in spec.validators if not v.parameter_args]
        body += _check_lines(dataclasses.replace(spec, validators=tuple(unary)), key, name)
    # 2. Entries of a __map_ block for no element of its key: unknown parameters.
    for group, key, specs in blocks:
        member = f"{group}.{map_member(_MAP_PREFIX + key)}"
        leaf = specs[0].template.split(".")[-1]
        body.append(
            f"for (const auto& entry : {member}) if (!d::contains({key}, entry.first)) return "
            f'"unknown parameter \'{group}." + entry.first + ".{leaf}\': \'" + entry.first + '
            f"\"' is not an element of '{key}'\";"
        )
    # 3. Types (finiteness, capacity), then 4. every rule, each in declaration order.
    for stage in ("type", "rules"):
        for spec in schema.entries:
            if spec in plain:
                name = _cpp_string(spec.name)
                body += (
                    _type_lines(spec, spec.name, name)
                    if stage == "type"
                    else _check_lines(spec, spec.name, name)
                )
                continue
            group, key, _specs = next(b for b in blocks if spec in b[2])
            leaf = spec.template.split(".")[-1]
            name = f'"{group}." + k + ".{leaf}"'
            checks = (
                _type_lines(spec, f"it->second.{leaf}", name)
                if stage == "type"
                else _check_lines(spec, f"it->second.{leaf}", name)
            )
            if checks:
                member = f"{group}.{map_member(_MAP_PREFIX + key)}"
                body.append(f"for (const auto& k : {key}) {{")
                body.append(f"  if (auto it = {member}.find(k); it != {member}.end()) {{")
                body += [f"    {c}" for c in checks]
                body += ["  }", "}"]
    return body


_HELPERS = r"""
namespace params_detail {

inline constexpr const char* kFiniteDetail = "doubles must be finite (no NaN or Inf)";

/// A double as Python's repr() writes it: shortest round-trip digits, fixed notation for decimal
/// exponents in [-4, 16), else scientific with a two-digit exponent (the Python side's messages).
inline std::string repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  std::array<char, 64> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x, std::chars_format::scientific);
  std::string sci(buf.data(), end);
  const bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  const auto e_pos = sci.find('e');
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  std::string digits = sci.substr(0, e_pos);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out = digits + std::string(static_cast<std::size_t>(exponent + 1) - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<std::size_t>(exponent) + 1) + "." +
            digits.substr(static_cast<std::size_t>(exponent) + 1);
    }
  } else {
    const int magnitude = std::abs(exponent);
    out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
          (exponent < 0 ? "-" : "+") + (magnitude < 10 ? "0" : "") + std::to_string(magnitude);
  }
  return negative ? "-" + out : out;
}
inline std::string repr(std::int64_t x) { return std::to_string(x); }
inline std::string repr(bool x) { return x ? "True" : "False"; }
/// A string as Python's repr() writes it (single quotes unless it holds one and no double quote).
inline std::string repr(const std::string& s) {
  const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    if (c == '\\' || c == quote) out += '\\';
    out += c;
  }
  return out + quote;
}
template <class T>
std::string repr(const std::vector<T>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + repr(static_cast<T>(v[i]));
  return out + "]";
}

/// "parameter 'name'[index] = value violates rule: detail", as the Python side words it.
inline std::string violation(const std::string& name, const std::string& value, const std::string& rule,
                             const std::string& detail, std::ptrdiff_t index = -1) {
  const std::string where =
      "parameter '" + name + "'" + (index >= 0 ? "[" + std::to_string(index) + "]" : std::string());
  return where + " = " + value + " violates " + rule + ": " + detail;
}

template <class T, class Bad>
std::ptrdiff_t first_index(const std::vector<T>& v, Bad bad) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (bad(static_cast<T>(v[i]))) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}
template <class T>
std::ptrdiff_t first_repeat(const std::vector<T>& v) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    const auto end = v.begin() + static_cast<std::ptrdiff_t>(i);
    if (std::find(v.begin(), end, v[i]) != end) return static_cast<std::ptrdiff_t>(i);
  }
  return -1;
}
/// " (has n)": the size a size rule found.
template <class C>
std::string has(const C& c) {
  return " (has " + std::to_string(c.size()) + ")";
}
template <class T>
bool one_of(const T& x, std::initializer_list<T> allowed) {
  return std::find(allowed.begin(), allowed.end(), x) != allowed.end();
}
template <class T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace params_detail
"""


def render_header(schema: Schema | None = None) -> str:
    """The text of jtac_parameters.hpp."""
    schema = schema or default_schema()
    validate = [f"  {line}" for line in _validate_body(schema)]
    lines = [
        _GENERATED,
        "#pragma once",
        "",
        "#include <algorithm>",
        "#include <array>",
        "#include <charconv>",
        "#include <cmath>",
        "#include <cstddef>",
        "#include <cstdint>",
        "#include <cstdlib>",
        "#include <initializer_list>",
        "#include <iterator>",
        "#include <map>",
        "#include <string>",
        "#include <vector>",
        "",
        "namespace jtac {",
        _HELPERS,
        "/// jtac's parameters under the schema's names, types and defaults (params/jtac_parameters.yaml;",
        "/// docs/parameters.md). Configure-time data, never touched by a real-time thread: fill it,",
        "/// validate() it, then map it onto the core's structures (params_mapping.hpp).",
        "struct Params {",
        *_group_lines(_tree(schema), "  "),
        "",
        '  /// "" when every value satisfies the schema, else the first violation, naming the parameter,',
        "  /// the value and the rule in the words of jtac_py.parameters. Not real-time (builds strings).",
        "  [[nodiscard]] std::string validate() const;",
        "};",
        "",
        "inline std::string Params::validate() const {",
        "  namespace d = params_detail;",
        *validate,
        '  return "";',
        "}",
        "",
        "}  // namespace jtac",
        "",
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ binding
def _binding_group(group: _Group, cls_expr: str, var: str, parent: str, out: list[str], top: bool) -> None:
    cpp_cls = cls_expr
    if not top:
        out.append(
            f'  py::class_<{cpp_cls}> {var}({parent}, "{struct_name(group.name)}", '
            f'"The schema\'s `{group.name}` group");'
        )
    out.append(f"  {var}.def(py::init<>());")
    for member in group.members:
        if isinstance(member, ParameterSpec):
            leaf = member.template.split(".")[-1]
            out.append(
                f'  {var}.def_readwrite("{leaf}", &{cpp_cls}::{leaf}, {_cpp_string(member.description)});'
            )
        elif isinstance(member, _Map):
            entry_cls = f"{cpp_cls}::{struct_name(member.segment)}"
            entry_var = f"{var}_{map_member(member.segment)}"
            out.append(
                f'  py::class_<{entry_cls}> {entry_var}({var}, "{struct_name(member.segment)}", '
                f'"One entry of `{member.segment}`, per element of `{member.key}`");'
            )
            out.append(f"  {entry_var}.def(py::init<>());")
            for spec in member.specs:
                leaf = spec.template.split(".")[-1]
                doc = _cpp_string(spec.description)
                out.append(f'  {entry_var}.def_readwrite("{leaf}", &{entry_cls}::{leaf}, {doc});')
            member_name = map_member(member.segment)
            out.append(
                f'  {var}.def_readwrite("{member_name}", &{cpp_cls}::{member_name}, '
                f'"Entries by element of `{member.key}` (a copy: assign a whole dict)");'
            )
        else:
            child_var = f"{var}_{member.name}"
            _binding_group(member, f"{cpp_cls}::{struct_name(member.name)}", child_var, var, out, top=False)
            out.append(f'  {var}.def_readwrite("{member.name}", &{cpp_cls}::{member.name});')


def render_binding(schema: Schema | None = None) -> str:
    """The text of bind_parameters.cpp."""
    schema = schema or default_schema()
    body: list[str] = []
    body.append(
        '  py::class_<jtac::Params> params(m, "Params", "jtac\'s parameters under the schema\'s names '
        '(params/jtac_parameters.yaml)");'
    )
    _binding_group(_tree(schema), "jtac::Params", "params", "m", body, top=True)
    lines = [
        _GENERATED,
        "// jtac::Params as a class (ruckig's def_readwrite model), validate(), and the one mapping onto the",
        "// core's structures (params_mapping.hpp).",
        "#include <pybind11/pybind11.h>",
        "#include <pybind11/stl.h>",
        "",
        "#include <string>",
        "#include <utility>",
        "#include <vector>",
        "",
        '#include "jtac_core/jtac_parameters.hpp"',
        '#include "jtac_core/params_mapping.hpp"',
        "",
        "namespace py = pybind11;",
        "",
        "void bind_parameters(py::module_& m) {",
        *body,
        '  params.def("validate", &jtac::Params::validate,',
        "             \"'' when valid, else the first violation (parameter, value, rule)\");",
        '  m.def("jtac_config", &jtac::make_jtac_config, py::arg("params"), py::arg("urdf_xml"),',
        '        py::arg("max_velocity_rad_s") = std::vector<double>{},',
        '        py::arg("max_acceleration_rad_s2") = std::vector<double>{},',
        '        "The core\'s JtacConfig from Params (params_mapping.hpp)");',
        '  m.def("jtac_parameters", &jtac::make_jtac_parameters, py::arg("params"),',
        '        "The core\'s JtacParameters from Params (params_mapping.hpp)");',
        '  m.def("tip_ft_sensor_names", py::overload_cast<const jtac::Params&>(&jtac::tip_ft_sensor_names),',
        '        py::arg("params"),',
        '        "Each tip\'s force/torque sensor name, in sensor_frames order (\\"\\" = none)");',
        "}",
        "",
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ files
def _clang_format() -> str:
    """The clang-format of the venv (requirements.txt pins it; `make lint` checks with it), else PATH's."""
    beside = Path(sys.executable).parent / "clang-format"
    found = str(beside) if beside.exists() else shutil.which("clang-format")
    if found is None:
        raise RuntimeError("clang-format not found: the generated C++ is formatted with it (make setup)")
    return found


def _formatted(text: str, path: Path) -> str:
    """text as the repository's .clang-format lays it out (the generated files pass `make lint`)."""
    result = subprocess.run(
        [_clang_format(), f"--assume-filename={path}", f"--style=file:{_REPO_ROOT / '.clang-format'}"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def generated_files(schema: Schema | None = None) -> dict[Path, str]:
    """Every C++ file generated from the schema, by path, formatted."""
    schema = schema or default_schema()
    texts = {DEFAULT_HEADER_PATH: render_header(schema), DEFAULT_BINDING_PATH: render_binding(schema)}
    return {path: _formatted(text, path) for path, text in texts.items()}
