"""The node's stream server without DDS: a chunk message becomes one checked Chunk, placed at the
time the server read (jtac_ros/stream_server.py). Fakes stand in for the node, the Controller and the
Stream; the server over real DDS is test_node_stream.py."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("rclpy")

from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from jtac_py.chunks import Chunk
from jtac_ros.goal_log import GoalLog
from jtac_ros.stream_server import StreamServer

JOINTS = ["a", "b"]


class _Logger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, text: str) -> None:
        self.lines.append(text)

    warning = error = info


class _Stream:
    """Stream's calls the server makes; now() advances 1 ms per call, as the real clock would."""

    def __init__(self) -> None:
        self.now_s = 10.0
        self.chunks: list[Chunk] = []

    def now(self) -> float:
        self.now_s += 0.001
        return self.now_s

    def send_chunk(self, chunk: Chunk) -> None:
        self.chunks.append(chunk)


def _server(stream: _Stream) -> tuple[StreamServer, _Logger, SimpleNamespace]:
    clock = SimpleNamespace(now=lambda: SimpleNamespace(nanoseconds=5_000_000_000))
    node = SimpleNamespace(get_clock=lambda: clock)
    controller = SimpleNamespace(
        joint_names=JOINTS, update_rate_hz=1000.0, controller_time=lambda: 10.0, stream=lambda: stream
    )
    logger = _Logger()
    server = StreamServer(node, active_controller=lambda: controller, log=GoalLog(logger))
    server._open(controller)
    return server, logger, controller


def _msg(rows: list[list[float]], *, accelerations: bool = False) -> JointTrajectory:
    msg = JointTrajectory(joint_names=list(reversed(JOINTS)))
    for k, q in enumerate(rows):
        point = JointTrajectoryPoint(
            positions=list(q), time_from_start=Duration(nanosec=100_000_000 * (k + 1))
        )
        if accelerations:
            point.accelerations = [0.0, 0.0]
        msg.points.append(point)
    return msg


def test_an_unstamped_chunk_is_placed_at_the_now_the_server_read():
    stream = _Stream()
    server, _logger, controller = _server(stream)
    server.on_chunk_msg(controller, _msg([[2.0, 1.0], [4.0, 3.0]]))
    (chunk,) = stream.chunks
    # The one reading of stream.now() in on_chunk_msg is the observation time the chunk carries: the
    # stale check and the chunk use the same instant.
    assert chunk.observed_at_s == pytest.approx(stream.now_s)
    np.testing.assert_array_equal(chunk.positions_rad, [[1.0, 2.0], [3.0, 4.0]])  # controller order


def test_a_malformed_chunk_is_refused_once_and_ignored_fields_are_noted():
    stream = _Stream()
    server, logger, controller = _server(stream)
    server.on_chunk_msg(controller, _msg([[1.0, float("nan")]]))
    assert not stream.chunks
    assert any(
        "refused: INVALID_GOAL (-1): stream positions_rad[0]: joint 'a' is nan" in line
        for line in logger.lines
    )
    server.on_chunk_msg(controller, _msg([[1.0, 2.0]], accelerations=True))
    assert len(stream.chunks) == 1
    assert any("accelerations are ignored" in line for line in logger.lines)
