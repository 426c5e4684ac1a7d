"""jtac_py.chunks: an action chunk checked once, when it is built (no controller, no ROS)."""

import math

import numpy as np
import pytest

from jtac_py.chunks import Chunk

JOINTS = ["j1", "j2"]


def test_a_built_chunk_holds_read_only_copies():
    q = np.array([[0.1, 0.2], [0.3, 0.4]])
    chunk = Chunk.build([0.0, 0.02], q, joint_names=JOINTS, observed_at_s=1.5)
    q[0, 0] = 9.0  # the caller's array is not the chunk's
    assert chunk.positions_rad[0, 0] == 0.1
    assert chunk.velocities_rad_s is None and chunk.observed_at_s == 1.5
    assert chunk.duration_s == pytest.approx(0.02)
    with pytest.raises(ValueError, match="read-only"):
        chunk.times_s[0] = 1.0


@pytest.mark.parametrize(
    ("times", "q", "dq", "observed", "message"),
    [
        ([], np.zeros((0, 2)), None, None, "times_s must be a non-empty 1-D sequence"),
        ([-0.1, 0.1], np.zeros((2, 2)), None, None, r"times_s\[0\] must be finite and >= 0"),
        ([0.1, 0.1], np.zeros((2, 2)), None, None, r"increase strictly: times_s\[1\] = 0.1 after 0.1"),
        ([0.1], np.zeros((1, 3)), None, None, r"positions_rad must have shape \(1, 2\)"),
        ([0.1, 0.2], [[0.0, 0.0], [0.0, math.nan]], None, None, r"positions_rad\[1\]: joint 'j2' is nan"),
        ([0.1], np.zeros((1, 2)), [[math.inf, 0.0]], None, r"velocities_rad_s\[0\]: joint 'j1' is inf"),
        ([0.1], np.zeros((1, 2)), None, math.nan, "observed_at_s must be finite"),
    ],
)
def test_a_malformed_chunk_is_refused_naming_field_point_and_joint(times, q, dq, observed, message):
    with pytest.raises(ValueError, match=message):
        Chunk.build(times, q, dq, joint_names=JOINTS, observed_at_s=observed)


def test_a_chunk_equals_only_itself_and_hashes():
    chunk = Chunk.build([0.1], [[0.0, 0.0]], joint_names=JOINTS)
    assert chunk == chunk and chunk != Chunk.build([0.1], [[0.0, 0.0]], joint_names=JOINTS)
    assert {chunk: 1}[chunk] == 1
