"""The CLI a ROS user reaches for (ros2cli is not installable here), against a real node: the node runs
in this process on its own context (test/ros/node_rig.py), each `jtac` command in a subprocess, so
every call crosses DDS between two processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")

import yaml  # noqa: E402
from node_rig import JOINTS  # noqa: E402

pytestmark = pytest.mark.ros

REPO = Path(__file__).resolve().parents[2]
CONTROLLER_TYPE = "jtac/JointTrajectoryAdmittanceController"


def jtac(*args, timeout=60.0):
    return subprocess.run(
        [sys.executable, "-m", "jtac_ros.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        cwd=REPO,
        timeout=timeout,
        check=False,
    )


def test_every_new_command_has_help():
    for command in (
        ["echo"],
        ["param"],
        ["param", "set"],
        ["lifecycle"],
        ["lifecycle", "set"],
        ["list-controllers"],
        ["switch"],
    ):
        run = jtac(*command, "--help")
        assert run.returncode == 0, run.stderr
        assert "usage: jtac " + " ".join(command) in run.stdout


def test_param_list_get_and_set(rig):
    node = ["--node", rig.name, "--wait", "10"]
    run = jtac("param", "list", "time_scale", *node)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["time_scale_filter_constant", "time_scale_percentage"]

    run = jtac("param", "get", "update_rate", "time_scale_percentage", "stop_accelerations", *node)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "update_rate = 1000",
        "time_scale_percentage = 100.0",
        "stop_accelerations = [5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0]",
    ]

    run = jtac("param", "set", "time_scale_percentage", "50", *node)  # an integer for a double
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "time_scale_percentage = 50.0"
    assert rig.node.get_parameter("time_scale_percentage").value == 50.0

    run = jtac("param", "set", "stop_accelerations", "[4, 4, 4, 4, 4, 4, 4.5]", *node)
    assert run.returncode == 0, run.stderr
    assert list(rig.node.get_parameter("stop_accelerations").value) == [4.0] * 6 + [4.5]

    # Refusals: the node's reason (read_only, a bound), a value of the wrong type, an unknown name.
    run = jtac("param", "set", "update_rate", "500", *node)
    assert run.returncode == 1 and "update_rate" in run.stderr and "read" in run.stderr.lower()
    run = jtac("param", "set", "time_scale_percentage", "150", *node)
    assert run.returncode == 1 and "time_scale_percentage" in run.stderr and "150" in run.stderr
    assert rig.node.get_parameter("time_scale_percentage").value == 50.0
    run = jtac("param", "set", "time_scale_percentage", "fast", *node)
    assert run.returncode == 2 and "'fast' is not a double" in run.stderr
    run = jtac("param", "get", "no_such_parameter", *node)
    assert run.returncode == 1 and "has no parameter no_such_parameter" in run.stderr


def test_lifecycle_list_controllers_and_switch(rig):
    node = ["--node", rig.name, "--wait", "10"]
    run = jtac("lifecycle", "get", *node)
    assert run.returncode == 0 and run.stdout.strip() == "active [3]", run.stderr

    run = jtac("list-controllers", *node)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [rig.name, CONTROLLER_TYPE, "active"]
    run = jtac("list-controllers", "--verbose", *node)
    assert f"claimed interfaces: {', '.join(f'{j}/position' for j in JOINTS)}" in run.stdout

    run = jtac("switch", "--deactivate", rig.name, *node)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"{rig.name}: active -> inactive"
    assert rig.node._state_machine.current_state[1] == "inactive"
    run = jtac("list-controllers", "--verbose", *node)
    assert run.stdout.split()[:3] == [rig.name, CONTROLLER_TYPE, "inactive"]
    assert "claimed interfaces: (none)" in run.stdout

    run = jtac("lifecycle", "set", "activate", *node)
    assert run.returncode == 0 and run.stdout.strip() == "active [3]", run.stderr
    run = jtac("switch", "--activate", rig.name, *node)
    assert run.returncode == 0 and run.stdout.strip() == f"{rig.name} is already active"

    run = jtac("lifecycle", "set", "configure", *node)
    assert run.returncode == 1
    assert "is active: no transition 'configure' from there (available: deactivate, shutdown)" in run.stderr
    run = jtac("switch", "--activate", "some_other_controller", *node)
    assert run.returncode == 1 and "no controller some_other_controller" in run.stderr
    assert rig.node._state_machine.current_state[1] == "active"


def test_echo_prints_the_node_topics_as_yaml(rig):
    node = ["--node", rig.name, "--wait", "10"]
    run = jtac("echo", "controller_state", "--count", "2", *node)
    assert run.returncode == 0, run.stderr
    documents = [d for d in yaml.safe_load_all(run.stdout) if d]
    assert len(documents) == 2
    assert documents[0]["joint_names"] == JOINTS
    assert len(documents[0]["reference"]["positions"]) == 7
    assert documents[0]["speed_scaling_factor"] == 1.0

    run = jtac("echo", "joint_states", "--count", "1", *node)
    (joint_state,) = [d for d in yaml.safe_load_all(run.stdout) if d]
    assert joint_state["name"] == JOINTS and len(joint_state["position"]) == 7

    run = jtac("echo", "wrench/fr3_ft_sensor/raw", "--count", "1", *node)
    (wrench,) = [d for d in yaml.safe_load_all(run.stdout) if d]
    assert wrench["header"]["frame_id"] == "fr3_ft_sensor" and set(wrench["wrench"]) == {"force", "torque"}

    run = jtac("echo", "robot_description", "--count", "1", *node)  # latched: read after the fact
    (description,) = [d for d in yaml.safe_load_all(run.stdout) if d]
    assert description["data"] == rig.node._controller.hardware.urdf_xml

    run = jtac("echo", "no_such_topic", "--count", "1", "--node", rig.name, "--wait", "1")
    assert run.returncode == 2 and f"no publisher on /{rig.name}/no_such_topic" in run.stderr
