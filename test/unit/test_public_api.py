"""The public API: ``jtac_py.__all__`` resolves, ``import jtac_py`` stays light, the examples and the
docs' code import only public names, and the version is written once.

The import checks parse the files with ``ast`` (nothing is run): examples/*.py, the ```python blocks
of docs/*.md and README.md.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
import textwrap
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import jtac_py
import jtac_ros

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("rclpy", "mujoco", "matplotlib", "numba", "mcap", "mcap_ros2")
FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)


def test_every_public_name_resolves():
    assert len(jtac_py.__all__) == len(set(jtac_py.__all__)), "a name is listed twice in jtac_py.__all__"
    missing = [name for name in jtac_py.__all__ if getattr(jtac_py, name, None) is None]
    assert missing == []
    assert len(jtac_ros.__all__) == len(set(jtac_ros.__all__))
    for name in jtac_ros.__all__:
        if name not in jtac_ros.__dict__:  # needs rclpy: checked only where ROS is installed
            pytest.importorskip("rclpy")
        assert getattr(jtac_ros, name) is not None


def test_public_names_are_the_objects_behind_the_old_paths():
    from jtac_py import _native, controller, hardware, laws, recording

    assert jtac_py.Controller is controller.Controller
    assert jtac_py.Trajectory is controller.Trajectory
    assert jtac_py.SimulatedArm is hardware.SimulatedArm
    assert jtac_py.FrankaArm is hardware.FrankaArm
    assert jtac_py.ResultCode is controller.ResultCode is _native.ResultCode
    assert jtac_py.AdmittanceGoal is _native.JtacGoal
    assert jtac_py.compile_law is laws.compile
    assert jtac_py.load_recording is recording.load
    assert jtac_py.ResultCode.GOAL_ABORTED_DUE_TO_STITCHING.value == -8


def test_unknown_name_raises_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="'no_such_name'"):
        jtac_py.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="'no_such_name'"):
        jtac_ros.no_such_name  # noqa: B018


def test_import_loads_no_ros_mujoco_or_matplotlib():
    """In a fresh interpreter: importing jtac_py and jtac_ros loads none of the heavy optional packages;
    touching a lazy name loads its module then."""
    code = textwrap.dedent(
        f"""
        import sys
        import jtac_py, jtac_ros
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
        jtac_py.plots
        print("matplotlib" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded, plots_loaded_matplotlib = out.stdout.split("\n")[:2]
    assert loaded == "[]"
    assert plots_loaded_matplotlib == "True"


def test_without_the_native_module_import_works_and_a_name_says_why():
    """Where the native module does not import (a shared library missing), ``import jtac_py`` and the
    ``jtac`` command still load, so that ``jtac doctor`` can say why; a public name raises ImportError
    with the cause."""
    code = textwrap.dedent(
        """
        import importlib.abc, sys

        class Missing(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "jtac_py._native":
                    raise ImportError("libfranka.so.0.21: cannot open shared object file")

        sys.meta_path.insert(0, Missing())
        import jtac_py
        from jtac_py.doctor.build import check_build
        from jtac_ros.cli.app import build_parser

        print(jtac_py.__version__)
        check = check_build()
        print(check.verdict, "libfranka.so.0.21" in check.value)
        try:
            jtac_py.Controller
        except ImportError as error:
            print(error)
        build_parser().parse_args(["--version"])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stderr
    assert lines[0] == jtac_py.__version__
    assert lines[1] == "fail True"
    assert lines[2].startswith("jtac_py.Controller is unavailable: the native module does not import")
    assert "libfranka.so.0.21" in lines[2] and "jtac doctor" in lines[2]
    assert lines[3] == f"jtac {jtac_py.__version__}"


# ---------------------------------------------------------------------------------- the imports in use


def _sources() -> list[tuple[str, str]]:
    """(where, Python source) for every example and every ```python block of the docs and README."""
    found = [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "examples").glob("*.py"))]
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text()
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            found.append((f"{doc.relative_to(ROOT)}:{line}", match.group(1)))
    return found


def _parse(source: str) -> ast.Module:
    """A block's tree; a fragment with a top-level ``await`` is parsed as a coroutine's body."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return ast.parse("async def _block():\n" + textwrap.indent(source, "    "))


PACKAGES = {"jtac_py": jtac_py, "jtac_ros": jtac_ros}


def _public_modules() -> set[str]:
    """The packages and the submodules their ``__all__`` list (``jtac_py.laws``, ``jtac_ros.conversions``)."""
    found = set(PACKAGES)
    for package_name, package in PACKAGES.items():
        for name in package.__all__:
            if importlib.util.find_spec(f"{package_name}.{name}") is not None:
                found.add(f"{package_name}.{name}")
    return found


def import_problems(where: str, source: str) -> list[str]:
    """Each import of a private module, of a name outside ``jtac_py.__all__`` / ``jtac_ros.__all__``,
    or of one of their modules other than the packages and their public submodules, as ``where: line:
    what``."""
    public_modules = _public_modules()
    problems = []
    for node in ast.walk(_parse(source)):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
            if node.module in PACKAGES:
                public = PACKAGES[node.module].__all__
                problems += [
                    f"{where}: line {node.lineno}: {alias.name} is not in {node.module}.__all__"
                    for alias in node.names
                    if alias.name not in public
                ]
        for module in modules:
            parts = module.split(".")
            if parts[0] not in PACKAGES:
                continue
            if any(part.startswith("_") for part in parts):
                problems.append(f"{where}: line {node.lineno}: imports the private module {module}")
            elif module not in public_modules:
                problems.append(f"{where}: line {node.lineno}: {module} (import from {parts[0]})")
    return problems


def test_examples_and_docs_import_only_public_names():
    sources = _sources()
    assert len(sources) > 10, "the examples and docs' code blocks were not found"
    problems = [problem for where, source in sources for problem in import_problems(where, source)]
    assert problems == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from jtac_py import _native", "_native is not in jtac_py.__all__"),
        ("import jtac_py._native", "private module jtac_py._native"),
        ("from jtac_py.controller import Controller", "jtac_py.controller (import from jtac_py)"),
        ("from jtac_py import goal_intake", "goal_intake is not in jtac_py.__all__"),
        ("from jtac_ros.node import JtacNode", "jtac_ros.node (import from jtac_ros)"),
        ("from jtac_ros import GoalLog", "GoalLog is not in jtac_ros.__all__"),
        ("result = await controller.follow_async(t)\nfrom jtac_py import _native", "line 2: _native"),
    ],
)
def test_the_import_check_catches(source, expected):
    problems = import_problems("x", source)
    assert len(problems) == 1 and expected in problems[0], problems


def test_the_import_check_passes_public_imports():
    source = "from jtac_py import Controller, SimulatedArm, laws\nfrom jtac_py.robots import GraspObject\n"
    source += "from jtac_ros import JtacNode\nfrom jtac_ros.conversions import time_to_s\n"
    assert import_problems("x", source) == []


# ---------------------------------------------------------------------------------- the version


def test_version_is_written_once():
    """jtac_py.__version__ is the one literal; package.xml repeats it, pyproject.toml reads it."""
    version = jtac_py.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert ET.parse(ROOT / "package.xml").getroot().findtext("version") == version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    if "version" in project:
        assert project["version"] == version
    else:
        assert "version" in project["dynamic"]
    cli = subprocess.run(
        [sys.executable, "-m", "jtac_ros.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert cli.stdout.strip() == f"jtac {version}"


def test_old_module_paths_still_work():
    for module, name in [
        ("jtac_py.controller", "Controller"),
        ("jtac_py.hardware", "SimulatedArm"),
        ("jtac_py.goals", "Trajectory"),
        ("jtac_py.arm_group", "ArmGroup"),
    ]:
        assert getattr(jtac_py, name) is getattr(importlib.import_module(module), name)


# ---------------------------------------------------------------------------------- the reference docs


def test_reference_pages_are_current_and_cover_every_public_name():
    """docs/reference/ is what docs/gen_reference.py writes from __all__, and names every public name
    once (the strict mkdocs build itself is `make docs`, run by `make lint`)."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        gen_reference = importlib.import_module("gen_reference")
    finally:
        sys.path.remove(str(ROOT / "docs"))
    assert gen_reference.main(["--check"]) == 0
    pages = gen_reference.pages((ROOT / "jtac_py" / "__init__.py").read_text())
    documented = re.findall(r"^::: jtac_py\.(\w+)$", "".join(pages.values()), flags=re.MULTILINE)
    assert sorted(documented) == sorted(n for n in jtac_py.__all__ if n != "__version__")
    assert "| `GOAL_ABORTED_DUE_TO_STITCHING` | -8 |" in pages["controller.md"]
    assert re.findall(r"^::: jtac_ros\.(\w+)$", pages["ros.md"], flags=re.MULTILINE) == jtac_ros.__all__


def test_the_examples_of_the_package_docstring_and_the_docs_home_run():
    """The first code a reader sees (``help(jtac_py)``, docs/index.md) runs as written, in lockstep: the
    goal succeeds and the arm ends within the goal tolerance of the target."""
    block = jtac_py.__doc__.split("::\n", 1)[1].split("\nThe names below", 1)[0]
    home = FENCE.search((ROOT / "docs" / "index.md").read_text()).group(1)
    for code in (textwrap.dedent(block), home):
        scope: dict = {}
        exec(compile(code, "<example>", "exec"), scope)
        assert scope["result"].code == jtac_py.ResultCode.SUCCESSFUL
        controller = scope["controller"]
        assert abs(controller.state.q - (scope["q0"] + 0.1)).max() < 0.01


def test_the_strict_docs_build_fails_on_a_broken_link_or_reference(tmp_path):
    """The reference docs' configuration on a copy of docs/ with one page added that holds a broken
    link, a link to a missing repository file and a cross-reference to a name jtac_py does not have:
    `mkdocs build --strict` fails naming each (the real build passing is `make docs`, in `make lint`)."""
    pytest.importorskip("mkdocs", reason="requirements-docs.txt is installed by `make docs`")
    import shutil

    import yaml

    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    (docs / "probe.md").write_text(
        "# Probe\n\n[a guide](no_such_guide.md), [a file](../no_such_file.md), "
        "[a name][jtac_py.NoSuchName], [a real one][jtac_py.Controller]\n"
    )
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["docs_dir"] = str(docs)
    config["site_dir"] = str(tmp_path / "site")
    config["hooks"] = [str(ROOT / hook) for hook in config["hooks"]]
    config["nav"].append({"Probe": "probe.md"})
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            plugin["mkdocstrings"]["handlers"]["python"]["paths"] = [str(ROOT)]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    mkdocs = Path(sys.executable).parent / "mkdocs"
    out = subprocess.run(
        [str(mkdocs), "build", "--strict", "-f", str(tmp_path / "mkdocs.yml")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    warnings = [line for line in out.stderr.splitlines() if line.startswith("WARNING")]
    assert out.returncode != 0
    assert any("no_such_guide.md" in line for line in warnings), warnings
    assert any("no_such_file.md" in line and "does not exist" in line for line in warnings), warnings
    assert any("jtac_py.NoSuchName" in line for line in warnings), warnings
    assert not any("jtac_py.Controller" in line for line in warnings), warnings
    assert len(warnings) == 4, warnings  # mkdocs' and the hook's word on the missing file, and the two above
