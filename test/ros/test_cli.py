"""The ``jtac`` command line (jtac_ros/cli/, one module per verb) and its goal files (jtac_ros/goal_file.py).

Goal files are parsed in this process; the CLI runs as ``python -m jtac_ros.cli`` in a subprocess with
this session's environment (conftest: localhost discovery, a random ROS_DOMAIN_ID), against no node,
against test/ros/echo_action_server.py, and — once jtac_ros.node exists — against the real node.
"""

import importlib.util
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jtac_ros.goal_file import GoalFileError, goal_from_dict, read_goal_file, spec_from_dict

pytestmark = pytest.mark.ros

REPO = Path(__file__).resolve().parents[2]
GOALS = REPO / "examples" / "goals"
HOME = [0.0, -0.785398, 0.0, -2.356194, 0.0, 1.570796, 0.785398]
NO_NODE_HINT = "is the node running? (jtac run)"


def jtac(*args, timeout=60.0):
    """Runs the CLI in a subprocess; returns the CompletedProcess (text stdout/stderr)."""
    return subprocess.run(
        [sys.executable, "-m", "jtac_ros.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        cwd=REPO,
        timeout=timeout,
        check=False,
    )


def _two_joint(**extra):
    data = {
        "joint_names": ["a", "b"],
        "points": [
            {"positions": [0.1, 0.2], "velocities": [0.0, 1], "time_from_start": 1.5},
            {"positions": [0.3, -0.4], "time_from_start": 3},
        ],
    }
    data.update(extra)
    return data


# ------------------------------------------------------------------------------------------ goal files
def test_points_and_times_land_in_the_message():
    goal = goal_from_dict(_two_joint(tolerances={"path": 0.1, "goal": [0.01, 0.02], "goal_time": 0.25}))
    traj = goal.trajectory
    assert list(traj.joint_names) == ["a", "b"]
    assert [list(p.positions) for p in traj.points] == [[0.1, 0.2], [0.3, -0.4]]
    assert list(traj.points[0].velocities) == [0.0, 1.0]
    assert list(traj.points[1].velocities) == [] and list(traj.points[1].accelerations) == []
    assert (traj.points[0].time_from_start.sec, traj.points[0].time_from_start.nanosec) == (1, 500_000_000)
    assert (traj.points[1].time_from_start.sec, traj.points[1].time_from_start.nanosec) == (3, 0)
    assert (traj.header.stamp.sec, traj.header.stamp.nanosec) == (0, 0)  # no start_delay: start now
    assert list(goal.path_tolerance) == [0.1, 0.1]  # a number applies to every joint
    assert list(goal.goal_tolerance) == [0.01, 0.02]
    assert (goal.goal_time_tolerance.sec, goal.goal_time_tolerance.nanosec) == (0, 250_000_000)
    assert list(goal.absolute_force_torque_threshold) == []
    assert list(goal.admittance_parameters.mass) == [] and list(goal.additional_tips) == []


def test_start_delay_stamps_the_header_from_now():
    goal = goal_from_dict(_two_joint(start_delay=0.75), now_ns=100 * 10**9 + 500_000_000)
    assert (goal.trajectory.header.stamp.sec, goal.trajectory.header.stamp.nanosec) == (101, 250_000_000)


def test_damping_defaults_to_critical():
    goal = goal_from_dict(_two_joint(admittance={"mass": [4, 4, 4, 1, 1, 1], "stiffness": 400}))
    tip = goal.admittance_parameters
    assert list(tip.stiffness) == [400.0] * 6
    assert list(tip.damping) == pytest.approx([80.0, 80.0, 80.0, 40.0, 40.0, 40.0])  # 2·sqrt(m·k)
    ratio = goal_from_dict(_two_joint(admittance={"mass": 4, "stiffness": 400, "damping_ratio": 0.5}))
    assert list(ratio.admittance_parameters.damping) == pytest.approx([40.0] * 6)
    explicit = goal_from_dict(
        _two_joint(admittance={"mass": 4, "stiffness": 400, "damping": [1, 2, 3, 4, 5, 6]})
    )
    assert list(explicit.admittance_parameters.damping) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_a_list_of_tips_fills_additional_tips():
    tips = [
        {
            "end_effector_frame": "left_ee",
            "mass": 2,
            "stiffness": [300, 300, 300, 20, 20, 20],
            "selected_axes": [True, True, True, False, False, False],
            "joint_damping": 0.5,
            "ee_pose_control": {"position": [0, 0, 0.1], "orientation": [0, 0, 1, 0]},
            "end_effector_mass": 1.2,
            "end_effector_cog": [0.0, 0.01, 0.05],
            "thresholds": [30, 30, 30, 5, 5, 5],
        },
        {"end_effector_frame": "right_ee", "mass": 3, "stiffness": 100},
    ]
    goal = goal_from_dict(_two_joint(admittance=tips, thresholds=[45, 45, 45, 10, 10, 10]))
    first = goal.admittance_parameters
    assert first.end_effector_frame == "left_ee"
    assert list(first.selected_axes) == [True, True, True, False, False, False]
    assert first.joint_damping == 0.5 and first.end_effector_mass == 1.2
    assert list(first.end_effector_cog) == [0.0, 0.01, 0.05]
    assert first.ee_pose_control.position.z == 0.1
    assert (first.ee_pose_control.orientation.z, first.ee_pose_control.orientation.w) == (1.0, 0.0)
    assert list(first.absolute_force_torque_threshold) == [30.0, 30.0, 30.0, 5.0, 5.0, 5.0]
    assert [t.end_effector_frame for t in goal.additional_tips] == ["right_ee"]
    assert list(goal.additional_tips[0].damping) == pytest.approx([2 * math.sqrt(300.0)] * 6)
    assert list(goal.absolute_force_torque_threshold) == [45.0, 45.0, 45.0, 10.0, 10.0, 10.0]


def test_example_goal_files():
    sweep = read_goal_file(GOALS / "sweep.yaml")
    assert len(sweep.joint_names) == 7 and len(sweep.goal.trajectory.points) == 4
    assert list(sweep.goal.trajectory.points[-1].positions) == HOME
    assert sweep.duration_s == 6.0
    moveit = sweep.moveit_goal()
    assert [t.name for t in moveit.path_tolerance] == sweep.joint_names
    assert {t.position for t in moveit.path_tolerance} == {0.1}
    assert moveit.goal_time_tolerance.sec == 1

    compliant = read_goal_file(GOALS / "sweep_compliant.yaml")
    tip = compliant.goal.admittance_parameters
    assert list(tip.stiffness)[:3] == [400.0, 400.0, 400.0]
    assert list(tip.selected_axes) == [True, True, True, False, False, False]
    assert len(compliant.goal.absolute_force_torque_threshold) == 6
    with pytest.raises(GoalFileError, match=r"sweep_compliant\.yaml:\d+: 'thresholds' has no field"):
        compliant.moveit_goal()


ONE_POINT = "joint_names: [a]\npoints: [{positions: [0], time_from_start: 1}]\n"
BAD_FILES = [
    # (file text, line of the error, substrings of the message)
    (
        "jont_names: [a]\npoints: []\n",
        1,
        ["unknown key 'jont_names'", "did you mean 'joint_names'", "known keys:"],
    ),
    (
        "joint_names: [a, b]\npoints:\n  - positions: [0.1]\n    time_from_start: 1\n",
        3,
        ["points[0].positions must have 2 values", "got 1"],
    ),
    (
        "joint_names: [a, b]\npoints:\n  - time_from_start: 1\n    positions:\n      - 0.1\n      - abc\n",
        6,
        ["points[0].positions[1] must be a number", "'abc'"],
    ),
    (
        "joint_names: [a]\npoints:\n  - positions: [0.1]\n",
        3,
        ["points[0] is missing the required key 'time_from_start'"],
    ),
    (
        f"{ONE_POINT}admittance:\n  mass: [1, 2, 3, 4, 5]\n",
        4,
        ["admittance.mass must have 6 values", "[x, y, z, rx, ry, rz]", "got 5"],
    ),
    (
        f"{ONE_POINT}admittance:\n  - {{mass: 1}}\n  - selected_axes: [true, true, 1, false, false, false]\n",
        5,
        ["admittance[1].selected_axes[2] must be true or false"],
    ),
    (
        f"{ONE_POINT}tolerances: {{path: 0.1, goal_tim: 1}}\n",
        3,
        ["unknown key 'goal_tim' in tolerances", "known keys: path, goal, goal_time"],
    ),
    ("joint_names: [a]\njoint_names: [b]\n", 2, ["'joint_names' appears twice"]),
    ("joint_names: [a\npoints: x\n", 2, ["malformed YAML"]),
]


@pytest.mark.parametrize(("text", "line", "parts"), BAD_FILES)
def test_bad_files_name_file_line_and_key(tmp_path, text, line, parts):
    path = tmp_path / "goal.yaml"
    path.write_text(text)
    with pytest.raises(GoalFileError) as info:
        read_goal_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    for part in parts:
        assert part in message, message


def test_dict_errors_and_missing_files():
    with pytest.raises(GoalFileError, match=r"^<dict>: .*points\[1\]\.time_from_start must be a number"):
        spec_from_dict(
            {
                "joint_names": ["a"],
                "points": [
                    {"positions": [0], "time_from_start": 1},
                    {"positions": [1], "time_from_start": "2s"},
                ],
            }
        )
    with pytest.raises(GoalFileError, match="empty"):
        spec_from_dict(None)
    with pytest.raises(GoalFileError, match="no such file"):
        read_goal_file(GOALS / "does_not_exist.yaml")


# ------------------------------------------------------------------------------------------ CLI: no node
@pytest.mark.parametrize(
    ("value", "expected"),
    [("150", "must be within [0.0, 100.0]"), ("-1", "time_scale_percentage"), ("fast", "is not a number")],
)
def test_time_scale_rejects_bad_percent(value, expected):
    run = jtac("time-scale", value, "--wait", "0.5")
    assert run.returncode == 2
    assert expected in run.stderr


def test_argparse_errors():
    run = jtac("tare", "fr3_ft_sensor", "--node", "1bad-name")
    assert run.returncode == 2 and "not a ROS node name" in run.stderr
    run = jtac("state", "--count", "0")
    assert run.returncode == 2 and "expected an integer >= 1" in run.stderr
    run = jtac("frobnicate")
    assert run.returncode == 2 and "invalid choice" in run.stderr


def test_send_goal_without_node_exits_2_with_hint():
    run = jtac("send-goal", GOALS / "sweep.yaml", "--wait", "0.5")
    assert run.returncode == 2, run.stderr
    assert (
        "no action server /joint_trajectory_admittance_controller/follow_joint_trajectory — " + NO_NODE_HINT
        in run.stderr
    )
    assert "Traceback" not in run.stderr


def test_send_goal_bad_file_exits_2_before_ros(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("joint_names: [a]\npoints:\n  - positions: [0.1, 0.2]\n    time_from_start: 1\n")
    run = jtac("send-goal", path, "--wait", "0.5")
    assert run.returncode == 2
    assert f"{path}:3: points[0].positions must have 1 values" in run.stderr
    run = jtac("send-goal", GOALS / "sweep_compliant.yaml", "--moveit", "--wait", "0.5")
    assert run.returncode == 2 and "has no field in control_msgs/FollowJointTrajectory" in run.stderr


def test_tare_without_node_exits_2():
    run = jtac("tare", "fr3_ft_sensor", "--wait", "0.5")
    assert run.returncode == 2
    assert "no service /joint_trajectory_admittance_controller/zero_fts/fr3_ft_sensor" in run.stderr
    assert NO_NODE_HINT in run.stderr


def test_run_passes_ros_args_to_the_node(monkeypatch, tmp_path):
    import types

    import jtac_ros
    from jtac_ros import cli

    calls = []
    fake = types.ModuleType("jtac_ros.node")
    fake.main = lambda argv: calls.append(argv) or 0
    monkeypatch.setitem(sys.modules, "jtac_ros.node", fake)
    monkeypatch.setattr(jtac_ros, "node", fake, raising=False)
    params = tmp_path / "params.yaml"
    params.write_text("{}\n")
    assert cli.main(["run", "--node", "/arm/ctl", "--params-file", str(params), "--", "--no-autostart"]) == 0
    assert cli.main(["run"]) == 0
    ros_args = ["--ros-args", "-r", "__node:=ctl", "-r", "__ns:=/arm", "--params-file", str(params)]
    assert calls == [
        ["--no-autostart", *ros_args],
        ["--ros-args", "-r", "__node:=joint_trajectory_admittance_controller"],
    ]
    assert cli.main(["run", "--params-file", str(tmp_path / "missing.yaml")]) == 2
    assert len(calls) == 2


# ------------------------------------------------------------------------------------------ CLI: echo server
def test_send_goal_and_cancel_against_the_echo_server(echo_server):
    run = jtac(
        "--node", "echo", "send-goal", GOALS / "sweep_compliant.yaml", "--wait", "30", "--timeout", "30"
    )
    assert run.returncode == 0, run.stderr
    assert (
        "RESULT 0 SUCCESSFUL: points=4 tips=1 frames=fr3_ee mass0=[4.0, 4.0, 4.0, 1.0, 1.0, 1.0]"
        in run.stdout
    )
    assert "threshold=[45.0, 45.0, 45.0, 10.0, 10.0, 10.0] settle=1.000000000" in run.stdout
    # A progress line (feedback may be dropped, or overtaken by the result: no fixed count).
    assert "/6.0 s  max|desired-actual|" in run.stderr
    run = jtac("cancel", "--node", "echo", "--wait", "30")
    assert run.returncode == 0, run.stderr
    assert "0 goals canceling on /echo/follow_joint_trajectory" in run.stdout


# ------------------------------------------------------------------------------------------ CLI: plot
def _recording(n=300):
    t = np.arange(n) * 1e-3
    q = 0.1 * np.sin(t[:, None] + np.arange(7))
    wrench = np.zeros((n, 6))
    wrench[n // 3 : n // 2, 0] = 10.0
    return {
        "time": t,
        "q": q,
        "q_cmd": q + 1e-4,
        "q_ref": q,
        "error": np.full((n, 7), -1e-4),
        "joint_offset": np.zeros((n, 7)),
        "wrench_raw": wrench + 0.1,
        "wrench_filtered": wrench,
        "ee_deflection": np.zeros((n, 6)),
        "cycle_duration_us": np.full(n, 40.0),
        "interval_us": np.r_[0.0, np.full(n - 1, 1000.0)],
    }


def test_plot_writes_four_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    record = tmp_path / "run1.npz"
    np.savez(record, **_recording())
    run = jtac("plot", record, "--out", tmp_path / "plots")
    assert run.returncode == 0, run.stderr
    written = [Path(line) for line in run.stdout.split()]
    assert [p.name for p in written] == [
        f"run1_{k}.png" for k in ("tracking", "wrench", "deflection", "timing")
    ]
    for p in written:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_errors(tmp_path):
    pytest.importorskip("matplotlib")
    run = jtac("plot", tmp_path / "missing.npz")
    assert run.returncode == 2 and "no such file" in run.stderr
    partial = _recording()
    del partial["wrench_raw"]
    np.savez(tmp_path / "partial.npz", **partial)
    run = jtac("plot", tmp_path / "partial.npz")
    assert run.returncode == 2 and "'wrench_raw'" in run.stderr and "Traceback" not in run.stderr


# ------------------------------------------------------------------------------- CLI: plot-admittance
def test_plot_admittance_prints_the_verdict_and_writes_the_step_response(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "step.png"
    # M = 0.1 kg, D = 4 N·s/m at 125 Hz: K_max = (4M − 2hD)/h² = 5250 N/m.
    args = ("--mass", 0.1, "--damping", 4, "--rate", 125, "--axes", "z", "--out", out)
    run = jtac("plot-admittance", "--stiffness", 6000, *args)
    assert run.returncode == 1, run.stderr  # goal intake would refuse it
    assert "rate 125 Hz, joint damping 0/s: unstable" in run.stdout
    assert "z: unstable       radius 1.777424  K_max 5250" in run.stdout
    assert "the largest stable stiffness for this mass and damping at this rate is 5250 N/m" in run.stdout
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    run = jtac("plot-admittance", "--stiffness", 4000, *args)
    assert run.returncode == 0, run.stderr
    assert "z: lightly_damped" in run.stdout and "damping ratio 0.1 < 0.2" in run.stdout
    # Critical damping by default, six axes.
    run = jtac("plot-admittance", "--mass", 4, 4, 4, 1, 1, 1, "--stiffness", 400, "--out", out)
    assert run.returncode == 0 and run.stdout.count(": stable         radius") == 6, run.stdout


def test_plot_admittance_usage_errors(tmp_path):
    run = jtac("plot-admittance", "--mass", 1, 2, "--stiffness", 400, "--out", tmp_path / "x.png")
    assert run.returncode == 2 and "--mass takes 1 or 6 values" in run.stderr
    run = jtac("plot-admittance", "--mass", 1, "--stiffness", 400, "--axes", "w", "--out", tmp_path / "x.png")
    assert run.returncode == 2 and "unknown axis ['w']" in run.stderr


# ------------------------------------------------------------------------------------------ CLI: the node
@pytest.mark.slow
@pytest.mark.skipif(not importlib.util.find_spec("jtac_ros.node"), reason="node not yet written")
def test_against_the_running_node(tmp_path):
    log = (tmp_path / "node.log").open("w")
    node = subprocess.Popen(
        [sys.executable, "-m", "jtac_ros.cli", "run"],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ),
        cwd=REPO,
    )

    def node_log():
        log.flush()
        return (tmp_path / "node.log").read_text()

    try:
        # The first call waits for the node to start (hardware, model, loop) and be discovered.
        run = jtac("send-goal", GOALS / "sweep.yaml", "--wait", "60", "--timeout", "60", timeout=150)
        assert run.returncode == 0, run.stdout + run.stderr + node_log()
        assert "RESULT 0 SUCCESSFUL" in run.stdout
        # --timeout before the 6 s goal ends: canceled, exit 1.
        run = jtac("send-goal", GOALS / "sweep.yaml", "--wait", "10", "--timeout", "2")
        assert run.returncode == 1, run.stdout + run.stderr
        # Under load the goal response itself can take longer: either timeout cancels.
        assert "jtac send-goal: timeout: " in run.stderr and "; cancel requested" in run.stderr, run.stderr
        _interrupted_goal_is_canceled()
        run = jtac("tare", "fr3_ft_sensor", "--wait", "10")
        assert run.returncode == 0, run.stdout + run.stderr
        run = jtac("time-scale", "50", "--wait", "10")
        assert run.returncode == 0, run.stdout + run.stderr
        assert "time_scale_percentage = 50" in run.stdout
        run = jtac("state", "--count", "3", "--wait", "10")
        assert run.returncode == 0, run.stdout + run.stderr
        assert len(run.stdout.splitlines()) == 3 and "scale" in run.stdout
    finally:
        node.send_signal(signal.SIGINT)
        try:
            rc = node.wait(timeout=30)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()
            rc = None
        log.close()
    assert rc == 0, node_log()


def _interrupted_goal_is_canceled():
    """Ctrl-C while a goal runs: send-goal cancels it first and exits 130."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "jtac_ros.cli", "send-goal", GOALS / "sweep.yaml", "--wait", "10"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        cwd=REPO,
    )
    seen = []
    try:
        # A progress line (not a terminal: one per 10 %) means the goal was accepted and runs.
        for line in proc.stderr:
            seen.append(line)
            if "max|desired-actual|" in line:
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, "".join(seen) + err
    assert "interrupted: canceling the goal" in err and "Traceback" not in err
