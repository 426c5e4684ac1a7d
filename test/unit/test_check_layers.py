"""scripts/check_layers.py: the table agrees with ARCHITECTURE.md, the tree passes, and a forbidden
include (quoted or angle), CMake link or Python import planted in a copy of the tree fails `make lint`'s
step with a message that names the file, the line, the edge and the rule."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts" / "check_layers.py")
check_layers = importlib.util.module_from_spec(_spec)
sys.modules["check_layers"] = check_layers  # dataclasses look their module up there
_spec.loader.exec_module(check_layers)

# The folders the rules read (the layers' code and CMake files), copied for each planted violation.
_COPIED = ("jtac_rt", "jtac_core", "franka_hw", "jtac_loop", "bindings", "jtac_py", "jtac_ros", "scripts")
_BUILD_OUTPUTS = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "build", ".pytest_cache")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the project's layer folders, checked the way `make lint` checks the real one."""
    for folder in _COPIED:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=_BUILD_OUTPUTS)
    return tmp_path


def _lint(root: Path) -> subprocess.CompletedProcess:
    """The Makefile's lint step, `$(PY) scripts/check_layers.py`, run in root."""
    return subprocess.run(
        [sys.executable, "scripts/check_layers.py"], cwd=root, capture_output=True, text=True, timeout=60
    )


def _source_of(root: Path, target: str) -> Path:
    """A .cpp of a CMake target (wherever it lives now), relative to root."""
    return check_layers.cmake_model(root).targets[target].sources[0]


def _header_of(root: Path, folder: str) -> Path:
    return next(p.relative_to(root) for p in sorted((root / folder / "include").rglob("*.hpp")))


def _cmake_of(root: Path, target: str) -> Path:
    return check_layers.cmake_model(root).targets[target].cmake_file


def _plant(root: Path, rel: Path, line: str) -> int:
    """Put `line` after a C++ file's first line, at the end of others; returns its line number."""
    path = root / rel
    lines = path.read_text().splitlines()
    at = 1 if rel.suffix in check_layers.CPP_SUFFIXES else len(lines)
    lines.insert(at, line)
    path.write_text("\n".join(lines) + "\n")
    return at + 1


def _assert_fails_with(root: Path, expected: str, *, as_make_lint_runs_it: bool = False) -> None:
    """The check reports `expected`; with as_make_lint_runs_it, also as `make lint` runs it (slower)."""
    assert expected in check_layers.problems(root)
    if as_make_lint_runs_it:
        run = _lint(root)
        assert run.returncode == 1, run.stderr
        assert expected in run.stderr.splitlines()


def test_the_tree_passes():
    assert check_layers.problems(ROOT) == []
    assert _lint(ROOT).returncode == 0


def test_the_copied_tree_passes(tree):
    assert check_layers.problems(tree) == []


@pytest.mark.parametrize(
    ("target", "include", "used"),
    [
        ("jtac_core", '"franka_hw/device.hpp"', "franka_hw"),
        ("jtac_core", '"jtac_loop/control_loop.hpp"', "jtac_loop"),
        ("franka_hw", '"jtac_core/trajectory.hpp"', "jtac_core"),
        ("jtac_loop", '"franka_hw/mujoco_device.hpp"', "franka_hw_mujoco"),
        ("jtac_rt", '"jtac_core/types.hpp"', "jtac_core"),
        ("jtac_core", '"mujoco/mujoco.h"', "MuJoCo"),
    ],
)
def test_a_quoted_include_across_a_forbidden_edge_fails(tree, target, include, used):
    rel = _source_of(tree, target) if target != "jtac_rt" else _header_of(tree, "jtac_rt")
    line = _plant(tree, rel, f"#include {include}")
    rule = check_layers.rule_text(target)
    message = f"{rel}:{line}: {target} -> {used} (#include {include}): {rule}"
    _assert_fails_with(
        tree, message, as_make_lint_runs_it=used == "franka_hw" or include == "<mujoco/mujoco.h>"
    )


@pytest.mark.parametrize(
    ("target", "include", "used"),
    [
        ("franka_hw", "<mujoco/mujoco.h>", "MuJoCo"),
        ("franka_hw", "<franka/robot_state.h>", "libfranka"),
        ("franka_hw_mujoco", "<franka/robot_state.h>", "libfranka"),
        ("franka_hw_libfranka", "<mujoco/mujoco.h>", "MuJoCo"),
        ("jtac_core", "<rclcpp/rclcpp.hpp>", "ROS"),
        ("jtac_core", "<pybind11/pybind11.h>", "pybind11"),
        ("jtac_core", "<thread>", "threads"),
        ("jtac_loop", "<pybind11/numpy.h>", "pybind11"),
        ("jtac_loop", "<std_msgs/msg/string.hpp>", "ROS"),
        ("franka_hw", "<pinocchio/multibody/model.hpp>", "Pinocchio"),
        ("jtac_core", "<gtest/gtest.h>", "test tools"),
    ],
)
def test_an_angle_include_of_a_forbidden_library_fails(tree, target, include, used):
    rel = _source_of(tree, target)
    line = _plant(tree, rel, f"#include {include}")
    rule = check_layers.rule_text(target)
    message = f"{rel}:{line}: {target} -> {used} (#include {include}): {rule}"
    _assert_fails_with(
        tree, message, as_make_lint_runs_it=used == "franka_hw" or include == "<mujoco/mujoco.h>"
    )


def test_a_device_header_that_includes_its_device_library_passes(tree):
    rel = _source_of(tree, "franka_hw_mujoco")
    _plant(tree, rel, "#include <mujoco/mujoco.h>")
    _plant(tree, _source_of(tree, "_native"), "#include <pybind11/stl.h>")
    assert check_layers.problems(tree) == []


@pytest.mark.parametrize(
    ("target", "item", "used"),
    [
        ("jtac_core", "jtac::mujoco", "MuJoCo"),
        ("jtac_core", "franka_hw", "franka_hw"),
        ("jtac_core", "jtac::loop", "jtac_loop"),
        ("franka_hw", "jtac_core", "jtac_core"),
        ("franka_hw", "jtac::libfranka", "libfranka"),
        ("franka_hw", "pinocchio::pinocchio_default", "Pinocchio"),
        ("franka_hw_mujoco", "jtac::libfranka", "libfranka"),
        ("jtac_loop", "franka_hw_mujoco", "franka_hw_mujoco"),
        ("jtac_loop", "pybind11::module", "pybind11"),
        ("jtac_rt", "ruckig::ruckig", "Ruckig"),
    ],
)
def test_a_cmake_link_across_a_forbidden_edge_fails(tree, target, item, used):
    rel = _cmake_of(tree, target)
    line = _plant(tree, rel, f"target_link_libraries({target} PRIVATE {item})")
    rule = check_layers.rule_text(target)
    message = f"{rel}:{line}: {target} -> {used} (target_link_libraries({target} ... {item})): {rule}"
    _assert_fails_with(tree, message, as_make_lint_runs_it=item == "jtac::mujoco")


def test_a_library_the_table_does_not_know_fails(tree):
    rel = _cmake_of(tree, "jtac_core")
    line = _plant(tree, rel, "add_library(jtac_extra STATIC src/extra.cpp)")
    _assert_fails_with(
        tree,
        f"{rel}:{line}: library jtac_extra is not in the layer table (UNITS in scripts/check_layers.py): "
        "add its row there and in ARCHITECTURE.md",
        as_make_lint_runs_it=True,
    )


@pytest.mark.parametrize(
    ("package", "statement", "used"),
    [
        ("jtac_py", "import rclpy", "ROS"),
        ("jtac_py", "from rclpy.node import Node", "ROS"),
        ("jtac_py", "from std_msgs.msg import String", "ROS"),
        ("jtac_py", "from jtac.action import FollowJointTrajectoryWithAdmittance", "ROS"),
        ("jtac_py", "import jtac_ros.node", "jtac_ros"),
        ("jtac_py", "from jtac_ros import conversions", "jtac_ros"),
    ],
)
def test_a_forbidden_python_import_fails(tree, package, statement, used):
    rel = Path(package) / "__init__.py"
    line = _plant(tree, rel, statement)
    how = statement if statement.startswith("import ") else f"from {statement.split()[1]} import ..."
    message = f"{rel}:{line}: {package} -> {used} ({how}): {check_layers.rule_text(package)}"
    _assert_fails_with(tree, message, as_make_lint_runs_it=statement == "import rclpy")


def test_a_dynamic_import_of_a_constant_is_checked(tree):
    rel = Path("jtac_py") / "__init__.py"
    line = _plant(tree, rel, "import importlib; importlib.import_module('rclpy.node')")
    rule = check_layers.rule_text("jtac_py")
    _assert_fails_with(tree, f"{rel}:{line}: jtac_py -> ROS (import_module('rclpy.node')): {rule}")


def test_tests_tools_and_the_ros_adapter_may_import_ros(tree):
    for rel in ("test/unit/test_x.py", "tools/x.py", "jtac_py/test/test_x.py"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("import rclpy\nimport jtac_ros\n")
    _plant(tree, Path("jtac_ros") / "__init__.py", "import rclpy")
    _plant(tree, Path("jtac_ros") / "__init__.py", "from jtac_py import _native")
    test_cpp = tree / "franka_hw" / "test" / "test_x.cpp"
    test_cpp.parent.mkdir(parents=True, exist_ok=True)
    test_cpp.write_text('#include <mujoco/mujoco.h>\n#include "jtac_core/trajectory.hpp"\n')
    assert check_layers.problems(tree) == []


# ---------------------------------------------------------------- the table and ARCHITECTURE.md
_DEVICES = {"franka_hw", "franka_hw_mujoco", "franka_hw_libfranka", "MuJoCo", "libfranka"}
_CPP = {"jtac_rt", "jtac_core", "franka_hw", "franka_hw_mujoco", "franka_hw_libfranka", "jtac_loop"}
# How ARCHITECTURE.md's table names each unit or component (a phrase -> what it stands for).
_VOCABULARY = {
    "jtac_rt": {"jtac_rt"},
    "jtac_core": {"jtac_core"},
    "franka_hw": {"franka_hw"},
    "franka_hw_mujoco": {"franka_hw_mujoco"},
    "franka_hw_libfranka": {"franka_hw_libfranka"},
    "jtac_loop": {"jtac_loop"},
    "_native": {"_native"},
    "jtac_py": {"jtac_py"},
    "jtac_ros": {"jtac_ros"},
    "the three C++ layers": _CPP,  # with the devices' libraries and jtac_rt beneath them
    "Eigen": {"Eigen"},
    "Pinocchio": {"Pinocchio"},
    "Ruckig": {"Ruckig"},
    "MuJoCo": {"MuJoCo"},
    "libfranka": {"libfranka"},
    "pybind11": {"pybind11", "Python"},  # pybind11 brings Python.h
    "pthreads": {"threads"},
    "threads": {"threads"},
    "devices": _DEVICES,
    "trajectories": {"jtac_core"},
    "ROS": {"ROS"},
    "rclpy": {"ROS"},
    "the message packages": {"ROS"},
    "Python": {"Python", "pybind11", "_native", "jtac_py"},
}


def _named(cell: str) -> set[str]:
    found = set()
    for phrase, meaning in _VOCABULARY.items():
        if re.search(rf"(?<![\w/]){re.escape(phrase)}(?!\w)", cell):
            found |= meaning
    return found


def _architecture_rows() -> dict[str, tuple[str, str]]:
    """folder -> (may use, knows nothing of), as ARCHITECTURE.md's Layers table says them."""
    rows = {}
    for line in (ROOT / "ARCHITECTURE.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        folder = re.fullmatch(r"`(\w+)/`", cells[0]) if len(cells) == 3 else None
        if folder:
            rows[folder.group(1)] = (cells[1], cells[2])
    return rows


def test_the_table_agrees_with_architecture_md():
    rows = _architecture_rows()
    folders = {u.folder for u in check_layers.UNITS.values()}
    assert set(rows) == folders
    for folder, (may_use_cell, knows_nothing_cell) in rows.items():
        units = [u for u in check_layers.UNITS.values() if u.folder == folder]
        own = {u.name for u in units}
        script_may_use = set().union(*(u.may_use for u in units)) - own
        assert _named(may_use_cell) - own == script_may_use, folder
        if knows_nothing_cell == "everything else":
            continue
        for unit in units:
            assert not (_named(knows_nothing_cell) - {"threads"}) & unit.may_use, unit.name
        if "threads" in _named(knows_nothing_cell):
            assert all("threads" in u.knows_nothing_of for u in units), folder


def test_each_device_library_is_the_only_one_with_its_device():
    may_use = {u.name: u.may_use for u in check_layers.UNITS.values()}
    franka_row = _architecture_rows()["franka_hw"][0]
    for device, library in (("MuJoCo", "franka_hw_mujoco"), ("libfranka", "franka_hw_libfranka")):
        assert f"{device} only in `{library}`" in franka_row
        assert {name for name, uses in may_use.items() if device in uses} == {library}
