"""scripts/run_clang_tidy.py picks the libraries' own sources from the build's compile commands, and
docs/lint.md explains every check that .clang-tidy turns on or off (clang-tidy itself runs in `make lint`)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("run_clang_tidy", ROOT / "scripts" / "run_clang_tidy.py")
run_clang_tidy = importlib.util.module_from_spec(_spec)
sys.modules["run_clang_tidy"] = run_clang_tidy
_spec.loader.exec_module(run_clang_tidy)


def test_only_library_sources_that_exist_are_analysed(tmp_path):
    entries = [
        "jtac_core/src/kinematics.cpp",
        "franka_hw/mujoco/src/mujoco_device.cpp",
        "franka_hw/mujoco/test/test_mujoco_device.cpp",
        "jtac_loop/test/test_control_loop.cpp",
        "malloc_tests/malloc_counter.cpp",
        "bindings/bind_hw.cpp",
        "jtac_core/src/no_such_file.cpp",
    ]
    build = tmp_path / "build"
    build.mkdir()
    database = [{"directory": str(build), "file": str(ROOT / e), "command": "g++ -c x"} for e in entries]
    (build / "compile_commands.json").write_text(json.dumps(database))
    existing = [e for e in entries[:2] if (ROOT / e).exists()]
    assert [str(p) for p in run_clang_tidy.library_sources(build)] == sorted(existing)


def test_a_build_without_compile_commands_says_to_run_setup(tmp_path):
    with pytest.raises(SystemExit, match="make setup"):
        run_clang_tidy.library_sources(tmp_path)


def _checks() -> list[str]:
    text = (ROOT / ".clang-tidy").read_text()
    block = re.search(r"^Checks: >\n((?:  .*\n)+)", text, re.MULTILINE).group(1)
    return [c.strip() for c in block.replace(",", "\n").split() if c.strip() and c.strip() != "-*"]


def test_every_check_turned_on_or_off_is_explained_in_docs_lint_md():
    doc = (ROOT / "docs" / "lint.md").read_text()
    checks = _checks()
    assert len(checks) > 10
    for check in checks:
        assert f"`{check.lstrip('-')}`" in doc, check
