"""`jtac gripper` against a node with the simulated Franka Hand: each command in a subprocess, so every
call crosses DDS between two processes (as test_cli_node.py does for the other verbs)."""

from __future__ import annotations

import re

import pytest

rclpy = pytest.importorskip("rclpy")

from node_rig import Rig  # noqa: E402
from test_cli_node import jtac  # noqa: E402

pytestmark = pytest.mark.ros


@pytest.fixture
def hand_rig():
    rig = Rig({"hand": True}).activate()
    yield rig
    rig.close()


def width_of(stdout: str) -> float:
    match = re.search(r"width (-?\d+\.\d+) m", stdout)
    assert match, stdout
    return float(match.group(1))


def test_gripper_commands_round_trip(hand_rig):
    node = ["--node", hand_rig.name, "--wait", "10"]
    gripper = hand_rig.node._controller.gripper

    run = jtac("gripper", "move", "0.05", "--speed", "0.05", *node)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("RESULT ok")
    assert abs(gripper.state.width_m - 0.05) < 0.5e-3
    assert abs(width_of(run.stdout) - 0.05) < 0.5e-3  # the width after the result (joint_states)

    run = jtac("gripper", "state", *node)
    assert run.returncode == 0, run.stderr
    assert abs(width_of(run.stdout) - 0.05) < 1e-3
    assert "fr3_finger_joint1 0.025" in run.stdout and "fr3_finger_joint2 0.025" in run.stdout

    # Nothing between the fingers: the grasp closes past its band and fails (exit 1, the reason).
    run = jtac("gripper", "grasp", "0.03", "--force", "30", "--epsilon-inner", "0.002", *node)
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.startswith("RESULT failed: ")
    assert gripper.state.width_m < 0.03 - 0.002

    assert abs(width_of(run.stdout) - gripper.state.width_m) < 0.5e-3

    run = jtac("gripper", "home", *node)
    assert run.returncode == 0, run.stderr
    assert abs(gripper.state.width_m - 0.08) < 0.5e-3
    assert abs(width_of(run.stdout) - 0.08) < 0.5e-3

    run = jtac("gripper", "stop", *node)
    assert run.returncode == 0, run.stderr

    # A value outside the hand's limits: the node refuses it, naming the field and value.
    run = jtac("gripper", "move", "0.2", *node)
    assert run.returncode == 1
    assert "RESULT failed: " in run.stdout and "0.2" in run.stdout


def test_gripper_without_a_hand_says_why(rig):
    node = ["--node", rig.name, "--wait", "10"]
    run = jtac("gripper", "move", "0.05", *node)
    assert run.returncode == 1
    assert "REJECTED" in run.stdout and "parameter hand" in run.stdout
    run = jtac("gripper", "state", *node)
    assert run.returncode == 1 and "no finger joints" in run.stderr
    run = jtac("param", "get", "hand", *node)
    assert run.returncode == 0 and run.stdout.strip() == "hand = false"
    run = jtac("param", "set", "hand", "true", *node)  # read-only, like hardware
    assert run.returncode == 1 and "hand" in run.stderr and "read" in run.stderr.lower()


def test_gripper_usage_errors_exit_2():
    run = jtac("gripper", "move", "wide")
    assert run.returncode == 2 and "'wide' is not a number" in run.stderr
    run = jtac("gripper", "move", "0.05", "--node", "nobody_here", "--wait", "0.5")
    assert run.returncode == 2 and "no action server /nobody_here/gripper/move" in run.stderr
    for command in ("move", "grasp", "home", "stop", "state"):
        run = jtac("gripper", command, "--help")
        assert run.returncode == 0 and f"usage: jtac gripper {command}" in run.stdout
