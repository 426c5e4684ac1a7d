"""The ``jtac`` command where ROS 2 is not installed (``make setup-demo``): every verb's --help works, the
verbs that need no ROS (plot, plot-admittance, doctor) run, and a ROS verb says that it needs ROS 2 and
how to get it instead of a traceback.

Each case runs in a subprocess whose first meta-path finder refuses rclpy and every ROS package, as an
environment without the ROS wheels would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jtac_ros.cli.needs_ros import is_ros_module

REPO = Path(__file__).resolve().parents[2]
ROS_VERBS = [
    ["run"],
    ["send-goal"],
    ["cancel"],
    ["tare"],
    ["time-scale"],
    ["state"],
    ["echo"],
    ["param"],
    ["param", "list"],
    ["param", "get"],
    ["param", "set"],
    ["lifecycle"],
    ["lifecycle", "get"],
    ["lifecycle", "set"],
    ["list-controllers"],
    ["switch"],
    ["gripper"],
    ["gripper", "move"],
    ["gripper", "state"],
    ["record"],
    ["record", "start"],
    ["record", "stop"],
]
ROS_FREE_VERBS = [["plot"], ["convert"], ["plot-admittance"], ["doctor"], ["why"]]

# Runs `main(sys.argv[1:])` of MODULE with ROS made unimportable; then prints the ROS modules loaded.
PRELUDE = """
import importlib.abc, sys

class NoRos(importlib.abc.MetaPathFinder):
    ROOTS = {"rclpy", "jtac", "rpyutils", "rosidl_runtime_py", "rosidl_parser", "ament_index_python"}

    @classmethod
    def is_ros(cls, name):
        root = name.partition(".")[0]
        return root in cls.ROOTS or root.endswith(("_msgs", "_srvs", "_interfaces"))

    def find_spec(self, name, path=None, target=None):
        if self.is_ros(name):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden: no ROS here)", name=name)
        return None

sys.meta_path.insert(0, NoRos())
from MODULE import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
loaded = sorted(m for m in sys.modules if NoRos.is_ros(m))
print("ROS", loaded, file=sys.stderr)
sys.exit(code)
"""


def jtac_without_ros(*args, module="jtac_ros.cli"):
    """Runs a jtac verb in a subprocess where ROS cannot be imported."""
    return subprocess.run(
        [sys.executable, "-c", PRELUDE.replace("MODULE", module), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )


def _assert_no_ros_loaded(run):
    assert run.stderr.rstrip().splitlines()[-1] == "ROS []", run.stderr


def test_the_finder_hides_ros():
    script = PRELUDE.replace("from MODULE import main", "import rclpy  # noqa")
    hidden = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=60, check=False
    )
    assert hidden.returncode != 0 and "hidden: no ROS here" in hidden.stderr


@pytest.mark.parametrize("verb", [[], *ROS_VERBS, *ROS_FREE_VERBS], ids=lambda v: " ".join(v) or "jtac")
def test_every_help_works_without_ros(verb):
    run = jtac_without_ros(*verb, "--help")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: jtac " + " ".join(verb))
    _assert_no_ros_loaded(run)


@pytest.mark.parametrize(
    "argv",
    [
        ["send-goal", "examples/goals/sweep.yaml"],
        ["cancel"],
        ["tare", "fr3_ft_sensor"],
        ["time-scale", "50"],
        ["state", "--count", "1"],
        ["echo", "joint_states"],
        ["param", "list"],
        ["lifecycle", "get"],
        ["list-controllers"],
        ["switch", "--activate", "x"],
        ["run"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_ros_verb_says_it_needs_ros_and_how_to_get_it(argv):
    run = jtac_without_ros(*argv)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"jtac {argv[0]}: needs ROS 2" in run.stderr
    assert "make setup" in run.stderr and "/opt/ros/jazzy/setup.bash" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("module", ["jtac_ros.cli", "jtac_py.cli"])
def test_doctor_runs_without_ros(module):
    run = jtac_without_ros("doctor", "--seconds", "0", "--json", module=module)
    assert json.loads(run.stdout)["exit_code"] == run.returncode, run.stderr
    _assert_no_ros_loaded(run)


def test_plot_admittance_runs_without_ros(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "step.png"
    run = jtac_without_ros("plot-admittance", "--mass", 4, "--stiffness", 400, "--axes", "z", "--out", out)
    assert run.returncode == 0, run.stderr
    assert "z: stable" in run.stdout and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _assert_no_ros_loaded(run)


def test_plot_runs_without_ros(tmp_path):
    pytest.importorskip("matplotlib")
    n = 200
    t = np.arange(n) * 1e-3
    q = 0.1 * np.sin(t[:, None] + np.arange(7))
    np.savez(
        tmp_path / "run.npz",
        time=t,
        q=q,
        q_cmd=q,
        q_ref=q,
        error=np.zeros((n, 7)),
        joint_offset=np.zeros((n, 7)),
        wrench_raw=np.zeros((n, 6)),
        wrench_filtered=np.zeros((n, 6)),
        ee_deflection=np.zeros((n, 6)),
        cycle_duration_us=np.full(n, 40.0),
        interval_us=np.full(n, 1000.0),
    )
    run = jtac_without_ros("plot", tmp_path / "run.npz", module="jtac_py.cli")
    assert run.returncode == 0, run.stderr
    assert [Path(p).name for p in run.stdout.split()] == [
        f"run_{k}.png" for k in ("tracking", "wrench", "deflection", "timing")
    ]
    _assert_no_ros_loaded(run)


def test_ros_module_names():
    for name in (
        "rclpy",
        "rclpy.action",
        "jtac.action",
        "control_msgs.action",
        "std_srvs.srv",
        "rcl_interfaces",
    ):
        assert is_ros_module(name), name
    for name in (None, "", "jtac_py", "jtac_ros.node", "numpy", "yaml"):
        assert not is_ros_module(name), name
