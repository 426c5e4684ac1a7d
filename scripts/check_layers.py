"""The layers' dependency rules of ARCHITECTURE.md, checked on every include, link and import (`make lint`).

    python scripts/check_layers.py [ROOT]     exit 0: every edge allowed; 1: each violation listed

What is checked, and where:
- C++ includes, quoted and angle-bracket, in the library code of every C++ unit (a CMake library
  target of the table below: its folder's sources and headers, test folders excepted);
- CMake links: every `target_link_libraries` of a unit (CMakeLists.txt files in the units' folders);
- Python imports (static `import`/`from`, and `importlib.import_module("...")` of a constant) in the
  packages jtac_py and jtac_ros.
Tests, benchmarks, tools and examples sit above what they test or measure and are not checked.

A file belongs to a unit by CMake, so that moving files keeps the rules: a .cpp listed in a unit's
`add_library` belongs to it; any other file belongs to the unit(s) of the nearest CMakeLists.txt above it
(when that file defines several, to the one with a source of the same stem, else to the unit named
after the folder). An include of a project header is a use of the unit that owns the header file.

Every other dependency is a "component" recognised by its include prefix, CMake target or Python
module (EXTERNALS). A unit may use itself, the components in its `may_use` and any unrecognised
(standard or system) header or module; `knows_nothing_of` additionally forbids components that are
not governed otherwise (threads for the core). The table agrees with ARCHITECTURE.md's "Layers"
table; test/unit/test_check_layers.py checks that they say the same.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path


@dataclass(frozen=True)
class Unit:
    """A C++ library target or a Python package, and what it may use."""

    name: str  # CMake target (C++) or package name (Python)
    folder: str  # top-level folder of its layer
    may_use: frozenset[str]
    knows_nothing_of: frozenset[str] = frozenset()


def _unit(name: str, folder: str, may_use: str, knows_nothing_of: str = "") -> Unit:
    return Unit(name, folder, frozenset(may_use.split()), frozenset(knows_nothing_of.split()))


_DEVICE_BASE = "franka_hw jtac_rt Ruckig"  # a device library sits on the device layer's top
# The table: one row per C++ library target (by CMake name) and per Python package.
UNITS: dict[str, Unit] = {
    u.name: u
    for u in (
        _unit("jtac_rt", "jtac_rt", "threads"),
        _unit("jtac_core", "jtac_core", "jtac_rt Eigen Pinocchio", knows_nothing_of="threads"),
        _unit("franka_hw", "franka_hw", "jtac_rt Ruckig"),
        _unit("franka_hw_mujoco", "franka_hw", f"{_DEVICE_BASE} MuJoCo"),
        _unit("franka_hw_libfranka", "franka_hw", f"{_DEVICE_BASE} libfranka"),
        _unit("jtac_loop", "jtac_loop", "jtac_rt jtac_core franka_hw"),
        _unit(
            "_native",
            "bindings",
            "pybind11 Python jtac_rt jtac_core franka_hw franka_hw_mujoco franka_hw_libfranka jtac_loop",
        ),
        _unit("jtac_py", "jtac_py", "_native"),
        _unit("jtac_ros", "jtac_ros", "jtac_py ROS"),
    )
}
PY_UNITS = ("jtac_py", "jtac_ros")
CPP_UNITS = tuple(name for name in UNITS if name not in PY_UNITS)


@dataclass(frozen=True)
class External:
    """A dependency outside the project's units, and how each language names it."""

    includes: tuple[str, ...] = ()  # glob patterns of an include path
    cmake: tuple[str, ...] = ()  # glob patterns of a link item
    python: tuple[str, ...] = ()  # glob patterns of a top-level module


_ROS_HEADERS = ("rclcpp*/*", "rcl/*", "rcutils/*", "rmw/*", "rosidl_*/*", "*_msgs/*", "*_srvs/*")
EXTERNALS: dict[str, External] = {
    # Owning or starting a thread (a mutex serialising callers is not a thread of one's own).
    "threads": External(("thread", "pthread.h"), ("Threads::Threads",)),
    "Eigen": External(("Eigen/*", "unsupported/Eigen/*"), ("Eigen3::*",)),
    "Pinocchio": External(("pinocchio/*",), ("pinocchio::*", "pinocchio")),
    "Ruckig": External(("ruckig/*",), ("jtac::ruckig", "ruckig::*", "ruckig", "jtac_ruckig")),
    "MuJoCo": External(("mujoco/*", "mujoco.h"), ("jtac::mujoco", "jtac_mujoco", "mujoco::*", "mujoco")),
    "libfranka": External(("franka/*",), ("jtac::libfranka", "jtac_libfranka", "Franka::*", "franka")),
    "pybind11": External(("pybind11/*",), ("pybind11::*",), ("pybind11",)),
    "Python": External(("Python.h",), ("Python::*",)),
    "ROS": External(
        (*_ROS_HEADERS, "jtac/msg/*", "jtac/action/*", "realtime_tools/*", "hardware_interface/*"),
        ("rclcpp*", "rclcpp*::*", "*_msgs::*", "*_msgs", "rosidl_*", "ament_*"),
        (
            "rclpy",
            "rcl_interfaces",
            "rosidl_*",
            "ament_*",
            "launch",
            "launch_ros",
            "*_msgs",
            "*_srvs",
            "jtac",  # the ROS interface package (jtac.action, jtac.msg)
        ),
    ),
    "test tools": External(("gtest/*", "gmock/*", "valgrind/*", "benchmark/*"), ("GTest::*", "benchmark::*")),
}
# Components every unit may use without naming them (Threads::Threads reaches every layer through
# jtac_rt): a thread of one's own is forbidden only where `knows_nothing_of` says so.
_SOFT = frozenset({"threads"})

CPP_SUFFIXES = (".hpp", ".h", ".cpp", ".cc")
_TEST_DIRS = frozenset({"test", "tests"})
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.MULTILINE)
_CMAKE_CALL = re.compile(
    r"\b(add_library|pybind11_add_module|target_link_libraries)\s*\(([^)]*)\)", re.IGNORECASE
)
# Words of add_library / target_link_libraries that name no source and no library.
_CMAKE_KEYWORDS = frozenset(
    {
        *("PUBLIC", "PRIVATE", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE", "LINK_INTERFACE_LIBRARIES"),
        *("STATIC", "SHARED", "MODULE", "OBJECT", "ALIAS", "IMPORTED", "GLOBAL", "EXCLUDE_FROM_ALL"),
        *("THIN_LTO", "OPT_SIZE", "NO_EXTRAS", "WITHOUT_SOABI"),
    }
)


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    unit: str  # who uses
    used: str  # what it uses (a unit or a component)
    how: str  # the edge as written: '#include <mujoco/mujoco.h>', 'links jtac::mujoco', 'import rclpy'

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.unit} -> {self.used} ({self.how}): {rule_text(self.unit)}"


def rule_text(name: str) -> str:
    """The unit's row of the table, as the message states the rule."""
    unit = UNITS[name]
    allowed = ", ".join(sorted(unit.may_use)) or "nothing else"
    text = f"rule: {name} ({unit.folder}/) may use {allowed}"
    if unit.knows_nothing_of:
        text += f"; knows nothing of {', '.join(sorted(unit.knows_nothing_of))}"
    return text + " (ARCHITECTURE.md, Layers)"


def forbidden(unit: str, used: str) -> bool:
    """Whether unit may not use component or unit `used`."""
    row = UNITS[unit]
    if used == unit or used in row.may_use:
        return False
    return used in row.knows_nothing_of or used not in _SOFT


def _match(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def _external(name: str, kind: str) -> list[str]:
    """The components a header path, link item or module names ([] when none: standard or system)."""
    return [c for c, ext in EXTERNALS.items() if _match(name, getattr(ext, kind))]


def _in_test_dir(rel: Path) -> bool:
    return any(part in _TEST_DIRS for part in rel.parts[:-1])


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# ---------------------------------------------------------------- CMake
@dataclass
class CMakeTarget:
    name: str
    cmake_file: Path  # relative to the root
    line: int
    sources: list[Path]  # literal sources, relative to the root
    imported: bool


@dataclass
class CMakeModel:
    targets: dict[str, CMakeTarget]  # by name (units, and any other library in the units' folders)
    aliases: dict[str, str]  # alias -> target
    links: list[tuple[Path, int, str, str]]  # (file, line, target, item)


def _strip_cmake_comments(text: str) -> str:
    # Blank the comments but keep the offsets, so that line numbers stay right.
    return re.sub(r"#[^\n]*", lambda m: " " * len(m.group(0)), text)


def _tokens(args: str, base: int) -> list[tuple[str, int]]:
    return [(m.group(0).strip('"'), base + m.start()) for m in re.finditer(r'"[^"]*"|[^\s"]+', args)]


def _cmake_files(root: Path) -> list[Path]:
    folders = sorted({u.folder for u in UNITS.values() if u.name in CPP_UNITS})
    found = []
    for folder in folders:
        for path in sorted((root / folder).rglob("CMakeLists.txt")):
            if not _in_test_dir(path.relative_to(root)):
                found.append(path)
    return found


def cmake_model(root: Path) -> CMakeModel:
    model = CMakeModel({}, {}, [])
    for path in _cmake_files(root):
        rel = path.relative_to(root)
        text = _strip_cmake_comments(path.read_text(encoding="utf-8", errors="replace"))
        for call in _CMAKE_CALL.finditer(text):
            command = call.group(1).lower()
            tokens = _tokens(call.group(2), call.start(2))
            if not tokens:
                continue
            name, offset = tokens[0]
            words = [t for t, _ in tokens[1:]]
            if command == "target_link_libraries":
                model.links += [(rel, _line_of(text, off), name, item) for item, off in tokens[1:]]
            elif "ALIAS" in words:
                model.aliases[name] = words[words.index("ALIAS") + 1]
            else:
                sources = [rel.parent / w for w in words if w not in _CMAKE_KEYWORDS and "$" not in w]
                model.targets[name] = CMakeTarget(
                    name, rel, _line_of(text, offset), sources, "IMPORTED" in words
                )
    return model


def _link_component(item: str, model: CMakeModel) -> list[str]:
    if item in _CMAKE_KEYWORDS or item.startswith("$") or item.startswith("-"):
        return []
    target = model.aliases.get(item, item)
    if target in UNITS:
        return [target]
    return _external(item, "cmake")


def link_violations(root: Path, model: CMakeModel) -> list[Violation]:
    found = []
    for rel, line, target, item in model.links:
        user = model.aliases.get(target, target)
        if user not in UNITS:
            continue  # an imported or test target; unknown libraries are reported by unknown_targets
        for used in _link_component(item, model):
            if forbidden(user, used):
                found.append(Violation(rel, line, user, used, f"target_link_libraries({target} ... {item})"))
    return found


def unknown_targets(model: CMakeModel) -> list[Violation]:
    """A library in a unit's folder that the table does not know: its edges would go unchecked."""
    return [
        Violation(t.cmake_file, t.line, t.name, "?", f"library {t.name}")
        for t in model.targets.values()
        if not t.imported and t.name not in UNITS
    ]


# ---------------------------------------------------------------- C++ includes
class Owners:
    """Which unit a C++ file in a unit's folder belongs to, by the CMake model (survives moves)."""

    def __init__(self, root: Path, model: CMakeModel) -> None:
        self.root = root
        self.by_source = {src: t.name for t in model.targets.values() if t.name in UNITS for src in t.sources}
        self.by_cmake_dir: dict[Path, list[str]] = {}
        for t in model.targets.values():
            if t.name in UNITS:
                self.by_cmake_dir.setdefault(t.cmake_file.parent, []).append(t.name)

    def owner(self, rel: Path) -> str | None:
        if rel in self.by_source:
            return self.by_source[rel]
        for folder in rel.parents:
            names = self.by_cmake_dir.get(folder)
            if names:
                return self._pick(rel, folder, names)
        return None

    def _pick(self, rel: Path, folder: Path, names: list[str]) -> str:
        if len(names) == 1:
            return names[0]
        for src, name in self.by_source.items():
            if name in names and src.stem == rel.stem:
                return name
        return folder.name if folder.name in names else names[0]


def _library_files(root: Path) -> list[Path]:
    folders = sorted({UNITS[n].folder for n in CPP_UNITS})
    files = []
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            rel = path.relative_to(root)
            if path.suffix in CPP_SUFFIXES and path.is_file() and not _in_test_dir(rel):
                files.append(rel)
    return files


def _header_index(files: list[Path]) -> dict[str, Path]:
    """'franka_hw/mujoco_device.hpp' -> the file that an include of it finds (under some include/)."""
    index = {}
    for rel in files:
        parts = rel.parts
        if "include" in parts[:-1]:
            at = len(parts) - 1 - parts[::-1].index("include")
            index.setdefault("/".join(parts[at + 1 :]), rel)
    return index


def _include_component(path: str, headers: dict[str, Path], owners: Owners) -> list[str]:
    first = path.split("/")[0]
    if path in headers:
        owner = owners.owner(headers[path])
        if owner:
            return [owner]
    if first in UNITS and first in CPP_UNITS and "/" in path:
        return [first]
    return _external(path, "includes")


def include_violations(root: Path, model: CMakeModel) -> list[Violation]:
    owners = Owners(root, model)
    files = _library_files(root)
    headers = _header_index(files)
    found = []
    for rel in files:
        unit = owners.owner(rel)
        if unit is None:
            continue
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        for match in _INCLUDE.finditer(text):
            quoted, path = match.group(1) == '"', match.group(2).strip()
            for used in _include_component(path, headers, owners):
                if forbidden(unit, used):
                    close = '"' if quoted else ">"
                    how = f"#include {match.group(1)}{path}{close}"
                    found.append(Violation(rel, _line_of(text, match.start()), unit, used, how))
    return found


# ---------------------------------------------------------------- Python imports
def _imports(tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, top-level module, the statement in short) of every absolute import in the tree."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")[0], f"import {a.name}") for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0], f"from {node.module} import ..."))
        elif _is_dynamic_import(node):
            name = node.args[0].value
            out.append((node.lineno, name.split(".")[0], f"import_module({name!r})"))
    return sorted(out)


def _is_dynamic_import(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
        return False
    if not isinstance(node.args[0].value, str):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("import_module", "__import__")


def _module_component(module: str) -> list[str]:
    if module in PY_UNITS:
        return [module]
    return _external(module, "python")


def python_violations(root: Path) -> list[Violation]:
    found = []
    for package in PY_UNITS:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            if _in_test_dir(rel):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, module, how in _imports(tree):
                for used in _module_component(module):
                    if forbidden(package, used):
                        found.append(Violation(rel, line, package, used, how))
    return found


# ---------------------------------------------------------------- all
def violations(root: Path, model: CMakeModel | None = None) -> list[Violation]:
    model = model or cmake_model(root)
    return include_violations(root, model) + link_violations(root, model) + python_violations(root)


def problems(root: Path) -> list[str]:
    """Every message: forbidden edges, then libraries the table does not know."""
    model = cmake_model(root)
    messages = [str(v) for v in violations(root, model)]
    messages += [
        f"{v.path}:{v.line}: {v.how} is not in the layer table (UNITS in scripts/check_layers.py): "
        "add its row there and in ARCHITECTURE.md"
        for v in unknown_targets(model)
    ]
    return messages


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    messages = problems(root)
    for message in messages:
        print(message, file=sys.stderr)
    if messages:
        print(f"check_layers: {len(messages)} problem(s); the table: {__file__}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
