"""scripts/check_layers.py: a forbidden include or import fails `make lint`, an allowed one passes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts" / "check_layers.py")
check_layers = importlib.util.module_from_spec(_spec)
sys.modules["check_layers"] = check_layers  # dataclasses look their module up there
_spec.loader.exec_module(check_layers)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_device_that_includes_the_trajectory_core_is_refused(tmp_path):
    _write(tmp_path, "franka_hw/include/franka_hw/device.hpp", '#include "jtac_rt/mailbox.hpp"\n')
    _write(tmp_path, "franka_hw/src/device.cpp", '#include <array>\n\n#include "jtac_core/trajectory.hpp"\n')
    loop = '#include "jtac_core/trajectory.hpp"\n#include "franka_hw/x.hpp"\n'
    _write(tmp_path, "jtac_loop/src/loop.cpp", loop)
    found = check_layers.violations(tmp_path)
    assert [(str(v.path), v.line, v.used) for v in found] == [("franka_hw/src/device.cpp", 3, "jtac_core")]
    assert check_layers.main([str(tmp_path)]) == 1


def test_the_core_may_not_import_the_ros_layer_and_tests_are_not_checked(tmp_path):
    _write(tmp_path, "jtac_py/controller.py", "import numpy\nfrom jtac_ros.node import X\n")
    _write(tmp_path, "jtac_ros/node.py", "from jtac_py.controller import Controller\n")
    _write(tmp_path, "franka_hw/test/test_x.cpp", '#include "jtac_core/trajectory.hpp"\n')
    found = check_layers.violations(tmp_path)
    assert [(str(v.path), v.line, v.used) for v in found] == [("jtac_py/controller.py", 2, "jtac_ros")]
    assert "jtac_py uses jtac_ros" in str(found[0])


def test_a_clean_tree_passes(tmp_path):
    _write(tmp_path, "jtac_core/include/jtac_core/a.hpp", '#include "jtac_rt/mailbox.hpp"\n')
    _write(tmp_path, "jtac_rt/include/jtac_rt/mailbox.hpp", "#include <atomic>\n")
    assert check_layers.main([str(tmp_path)]) == 0
