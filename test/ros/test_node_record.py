"""The node records to .mcap (``jtac record``, ``~/record/start`` and ``~/record/stop``), over real DDS
(test/ros/node_rig.py: the node on its own context, the client and the CLI on others, localhost, the
session's ROS_DOMAIN_ID): a goal sent through the action is in the file, its cycles and its events.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from mcap.reader import make_reader  # noqa: E402
from mcap_ros2.decoder import DecoderFactory  # noqa: E402
from node_rig import DELTA, _goal  # noqa: E402
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from jtac_py.recording import load  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GOAL_S = 0.5  # each goal's trajectory [s]


def _jtac(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "jtac_ros.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=dict(os.environ), cwd=REPO, timeout=60)


def _events(path: Path) -> list:
    """(log_time [ns], Log) of the file's /jtac/events."""
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        return [(m.log_time, d) for _s, _c, m, d in reader.iter_decoded_messages(topics=["/jtac/events"])]


def _start(rig, path: str, per_goal: bool = False):
    client = rig.client.create_client(SetParameters, f"{rig.ns}/record/start")
    assert client.wait_for_service(timeout_sec=5.0)
    parameters = [
        Parameter(name="path", value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=path)),
        Parameter(
            name="per_goal", value=ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=per_goal)
        ),
    ]
    return rig.wait(client.call_async(SetParameters.Request(parameters=parameters))).results[0]


def _stop(rig):
    client = rig.client.create_client(Trigger, f"{rig.ns}/record/stop")
    assert client.wait_for_service(timeout_sec=5.0)
    return rig.wait(client.call_async(Trigger.Request()))


def _goal_id_and_times(path: Path) -> tuple[int, int, int]:
    """The one goal of a file: its id, and the log times [ns] of its start and success."""
    logged = _events(path)
    (started,) = [(t, m.msg) for t, m in logged if m.msg.startswith("GOAL_STARTED goal ")]
    goal_id = int(started[1].split()[2].rstrip(":"))
    (succeeded,) = [t for t, m in logged if m.msg.startswith(f"GOAL_SUCCEEDED goal {goal_id}: ")]
    return goal_id, started[0], succeeded


def test_jtac_record_start_a_goal_stop_writes_the_goals_cycles_and_events(rig, tmp_path):
    path = tmp_path / "session.mcap"
    started = _jtac("record", "start", "--path", str(path), "--node", rig.ns)
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == f"recording to {path}"
    result = rig.run(_goal(rig.q_cmd(), rig.q_cmd() + DELTA, GOAL_S))
    assert result.error_code == 0, result.error_string
    stopped = _jtac("record", "stop", "--node", rig.ns)
    assert stopped.returncode == 0, stopped.stderr
    data = load(path)
    assert stopped.stdout.strip() == f"{len(data['time'])} cycles to {path}"
    goal_id, start_ns, success_ns = _goal_id_and_times(path)
    goal_rows = data["goal_id"] == goal_id
    # The goal's span on the controller clock (a cycle that ran late under load skips a robot tick:
    # rows are not always 1 ms apart, their times are the robot's).
    goal_s = float(data["time"][goal_rows][-1] - data["time"][goal_rows][0])
    assert GOAL_S - 0.01 <= goal_s < GOAL_S + 0.5 and np.all(np.diff(data["time"]) > 0)
    assert (success_ns - start_ns) * 1e-9 == pytest.approx(goal_s, abs=0.003)
    np.testing.assert_allclose(data["q_cmd"][goal_rows][-1] - data["q_cmd"][goal_rows][0], DELTA, atol=1e-3)
    again = _jtac("record", "stop", "--node", rig.ns)
    assert again.returncode == 1 and again.stderr.strip() == "not recording"


def test_a_per_goal_recording_writes_a_file_per_goal_named_after_its_id(rig, tmp_path):
    folder = tmp_path / "goals"
    answer = _start(rig, str(folder), per_goal=True)
    assert answer.successful and answer.reason == f"a file per goal in {folder}"
    for _ in range(2):
        q0 = rig.q_cmd()
        assert rig.run(_goal(q0, q0 + 0.5 * DELTA, GOAL_S)).error_code == 0
    stopped = _stop(rig)
    assert stopped.success, stopped.message
    files = sorted(folder.iterdir())
    assert len(files) == 2
    assert stopped.message.endswith(f"2 goal files in {folder}: {files[0].name}, {files[1].name}")
    for path in files:
        goal_id, start_ns, success_ns = _goal_id_and_times(path)
        assert path.name == f"goal_{goal_id}.mcap"
        data = load(path)
        assert np.all(data["goal_id"] == goal_id)
        span_s = float(data["time"][-1] - data["time"][0])  # the robot's times, not the row count
        assert (success_ns - start_ns) * 1e-9 == pytest.approx(span_s, abs=0.003)


def test_a_second_start_a_wrong_suffix_and_an_inactive_node_are_refused(rig, tmp_path):
    assert (
        _start(rig, str(tmp_path / "run.npz")).reason
        == f"a recording's path ends in .mcap, got '{tmp_path}/run.npz'"
    )
    assert _start(rig, str(tmp_path / "a.mcap")).successful
    second = _start(rig, str(tmp_path / "b.mcap"))
    assert not second.successful and second.reason == f"already recording to {tmp_path}/a.mcap"
    assert _stop(rig).success and (tmp_path / "a.mcap").stat().st_size > 0
    rig.node.trigger_deactivate()
    assert _start(rig, str(tmp_path / "c.mcap")).reason == "the controller is not active"
