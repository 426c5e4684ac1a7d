"""The ROS − controller clock offset the node keeps for stamped chunks (jtac_ros/clock_offset.py),
and the reading of a JointTrajectory as a chunk (conversions.chunk_from_msg). Pure: no node."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")

from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from jtac_ros import conversions
from jtac_ros.clock_offset import ClockOffset

OFFSET_NS = 1_700_000_000_123_456_789  # ROS time at controller time 0 [ns]


def test_the_offset_is_the_smallest_reading_and_late_ros_reads_do_not_shift_it():
    """Seeded: 200 readings whose ROS side is read 0–3 ms late (a preempted thread, a controller clock
    up to 1 ms behind) give the true offset to within the best reading's lateness."""
    rng = np.random.default_rng(3)
    clock = ClockOffset(window_s=2.0)
    for k in range(200):
        controller_s = 5.0 + 0.01 * k
        late_ns = int(rng.uniform(20_000, 3_000_000)) if k != 117 else 5_000  # one tight reading
        clock.add(OFFSET_NS + round(controller_s * 1e9) + late_ns, controller_s)
    assert clock.offset_ns() - OFFSET_NS == 5_000
    assert abs(clock.to_controller_s(OFFSET_NS + 6_500_000_000) - 6.5) < 1e-5
    assert clock.to_ros_ns(6.5) == OFFSET_NS + 6_500_000_000 + 5_000


def test_readings_older_than_the_window_are_dropped_so_a_drift_is_followed():
    clock = ClockOffset(window_s=2.0)
    clock.add(OFFSET_NS + 1_000_000_000, 1.0)  # the tightest, but 3 s old at the end
    for k in range(40):
        controller_s = 2.0 + 0.05 * k
        clock.add(OFFSET_NS + round(controller_s * 1e9) + 400_000, controller_s)  # drifted by 0.4 ms
    assert clock.offset_ns() - OFFSET_NS == 400_000


def test_no_reading_yet_is_an_error():
    with pytest.raises(ValueError, match="no reading"):
        ClockOffset().offset_ns()


def _msg(joints, rows, velocities=None):
    msg = JointTrajectory(joint_names=list(joints))
    for k, q in enumerate(rows):
        point = JointTrajectoryPoint(positions=list(q), time_from_start=Duration(nanosec=20_000_000 * k))
        if velocities is not None:
            point.velocities = list(velocities[k])
        msg.points.append(point)
    return msg


def test_a_chunk_is_reordered_into_the_controllers_joint_order():
    names = ["a", "b", "c"]
    chunk = conversions.chunk_from_msg(
        _msg(["c", "a", "b"], [[3, 1, 2], [6, 4, 5]], [[0.3, 0.1, 0.2]] * 2), names
    )
    np.testing.assert_array_equal(chunk.times_s, [0.0, 0.02])
    np.testing.assert_array_equal(chunk.positions_rad, [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(chunk.velocities_rad_s, [[0.1, 0.2, 0.3]] * 2)
    assert chunk.observed_at_s is None  # the node passes the stamp on the controller clock


@pytest.mark.parametrize(
    ("joints", "rows", "velocities", "message"),
    [
        (["a", "b"], [[1, 2]], None, "joint_names lacks ['c']"),
        (["a", "b", "x"], [[1, 2, 3]], None, "joint_names[2] = 'x' is not a joint"),
        (["a", "b", "a"], [[1, 2, 3]], None, "joint_names[2] = 'a' is named twice"),
        (["a", "b", "c"], [[1, 2, 3], [1, 2]], None, "points[1].positions has 2 values for 3 joints"),
        (["a", "b", "c"], [[1, 2, 3], [1, 2, 3]], [[0, 0, 0], []], "points[1].velocities has 0 values"),
        # Values are checked once, by Chunk.build: the point and the joint, in controller order.
        (["c", "a", "b"], [[1, 2, 3], [1, float("nan"), 3]], None, "positions_rad[1]: joint 'a' is nan"),
    ],
)
def test_a_malformed_chunk_is_refused_naming_the_field(joints, rows, velocities, message):
    with pytest.raises(
        conversions.GoalConversionError, match=message.replace("[", r"\[").replace("]", r"\]")
    ):
        conversions.chunk_from_msg(_msg(joints, rows, velocities), ["a", "b", "c"])
