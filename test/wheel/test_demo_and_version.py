"""What the wheel ships, checked in the tree: `jtac demo` (jtac_py.demo) without ROS, and one version.

scripts/test_wheel.sh checks the same from an installed wheel outside the tree (make test-wheel runs
both). The demo runs in lockstep: deterministic, and the same however loaded the machine is.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jtac_py import demo

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import check_version  # noqa: E402

# `jtac` with every ROS package unimportable, as where the ROS 2 wheels are not installed.
NO_ROS = """
import importlib.abc, sys

class NoRos(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        root = name.partition(".")[0]
        if root in {"rclpy", "jtac", "rosidl_runtime_py", "ament_index_python"} or root.endswith("_msgs"):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden: no ROS here)", name=name)
        return None

sys.meta_path.insert(0, NoRos())
from jtac_ros.cli import main
code = main(sys.argv[1:])
print("ROS", sorted(m for m in sys.modules if m.partition(".")[0] in {"rclpy", "jtac"}), file=sys.stderr)
sys.exit(code)
"""


def jtac_without_ros(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", NO_ROS, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_demo_run_returns_its_figures(tmp_path):
    lines: list[str] = []
    result = demo.run(tmp_path / "out", lockstep=True, plots=False, log=lines.append)
    assert result.ok and result.code == "SUCCESSFUL", result.message
    # The 15 N push against K = 400 N/m: F/K = 37.5 mm; the admittance's dynamics overshoot a little.
    assert result.expected_deflection_mm == pytest.approx(37.5)
    assert result.peak_deflection_mm == pytest.approx(result.expected_deflection_mm, rel=0.1)
    assert result.peak_force_n == pytest.approx(15.0, rel=0.1)
    assert 0.0 < result.tracking_error_mrad < 5.0
    assert result.rows >= 6000 and result.dropped == 0
    assert [p.name for p in result.files] == ["demo_recording.npz", "demo.mcap"]
    with np.load(tmp_path / "out" / "demo_recording.npz") as record:
        assert record["q"].shape == (result.rows, 7)
        assert record["ee_deflection"].shape == (result.rows, 6)
    assert any(line.startswith("result: SUCCESSFUL") for line in lines)
    assert not any("skipped" in line for line in lines), lines


def test_jtac_demo_runs_without_ros_into_the_current_folder(tmp_path):
    run = jtac_without_ros("demo", "--lockstep", "--no-plots", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "result: SUCCESSFUL" in run.stdout
    assert (tmp_path / "demo_recording.npz").is_file() and (tmp_path / "demo.mcap").is_file()
    assert run.stderr.rstrip().splitlines()[-1] == "ROS []", run.stderr


def test_jtac_demo_refuses_an_out_that_is_a_file(tmp_path):
    (tmp_path / "taken").write_text("")
    run = jtac_without_ros("demo", "--lockstep", "--out", "taken", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "jtac demo: --out taken: exists and is not a folder" in run.stderr


def test_every_version_agrees():
    assert check_version.problems() == []


def test_a_disagreeing_version_is_named(tmp_path):
    for name in ("package.xml", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / "jtac_py").mkdir()
    (tmp_path / "jtac_py" / "__init__.py").write_text('__version__ = "9.8.7"\n')
    found = check_version.problems(tmp_path, [Path("jtac_py-9.8.6-cp311-cp311-linux_x86_64.whl")])
    assert len(found) == 2, found
    assert found[0].startswith("package.xml: <version> is ") and "jtac_py/__init__.py has '9.8.7'" in found[0]
    assert "the wheel's version is '9.8.6'" in found[1]
