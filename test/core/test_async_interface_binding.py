"""The asynchronous interface's binding: one robot's whole limit table, keyword defaults, the records.

Layer: bindings (franka_hw). The limits reach the limiter as one robot's row of franka_hw's
joint_limits.hpp (generated from jtac_py/robots/tables.py): a Panda's rates never sit beside the FR3's
joint range.
"""

import numpy as np
import pytest

from jtac_py import _native, robots


@pytest.fixture
def device():
    return _native.MujocoDevice(robots.mjcf_xml("fr3"), name_prefix="fr3")


@pytest.mark.parametrize("robot", ["fr3", "panda"])
def test_the_limiter_holds_the_robots_whole_row(device, robot):
    spec = robots.robot_spec(robot)
    limits = _native.AsyncInterface(device, robot=robot, fifo_priority=0).limits
    np.testing.assert_allclose(limits["dq_max_rad_s"], spec.dq_max_rad_s, rtol=1e-12)
    np.testing.assert_allclose(limits["ddq_max_rad_s2"], spec.ddq_max_rad_s2, rtol=1e-12)
    np.testing.assert_allclose(limits["dddq_max_rad_s3"], spec.dddq_max_rad_s3, rtol=1e-12)
    assert limits["position_based_velocity_limits"] is (spec.velocity_bound_coeffs is not None)
    if spec.velocity_bound_coeffs is None:  # the Panda: its own range, not the FR3's
        np.testing.assert_array_equal(limits["q_min_rad"], spec.q_min_rad)
        np.testing.assert_array_equal(limits["q_max_rad"], spec.q_max_rad)
    else:
        np.testing.assert_array_equal(
            limits["q_min_rad"], [c.q_lower_ref_rad for c in spec.velocity_bound_coeffs]
        )


def test_the_rate_keywords_replace_the_rows_rates_and_keep_its_range(device):
    panda = robots.robot_spec("panda")
    limits = _native.AsyncInterface(
        device,
        robot="panda",
        dq_max_rad_s=[1.0] * 7,
        position_based_velocity_limits=False,
        fifo_priority=0,
    ).limits
    np.testing.assert_allclose(limits["dq_max_rad_s"], [1.0] * 7, rtol=1e-12)
    np.testing.assert_allclose(limits["ddq_max_rad_s2"], panda.ddq_max_rad_s2, rtol=1e-12)
    np.testing.assert_array_equal(limits["q_max_rad"], panda.q_max_rad)


def test_the_default_is_the_fr3_and_an_unknown_robot_is_refused(device):
    fr3 = robots.robot_spec("fr3")
    limits = _native.AsyncInterface(device, fifo_priority=0).limits
    np.testing.assert_allclose(limits["dq_max_rad_s"], fr3.dq_max_rad_s, rtol=1e-12)
    assert limits["position_based_velocity_limits"] is True
    assert limits["limit_margin"] == pytest.approx(0.8)
    with pytest.raises(ValueError, match="fr3, panda"):
        _native.AsyncInterface(device, robot="ur5")


def test_the_records_carry_every_field_of_their_tables(device):
    interface = _native.AsyncInterface(device, fifo_priority=0, late_commands="applied")
    for _ in range(5):
        assert interface.step_once() == _native.DeviceStatus.OK
    counters = interface.counters()
    assert counters["packets"] == 5
    assert set(counters) >= {"held_packets", "echo_resyncs", "max_write_interval_s", "max_latency_s"}
    trace = interface.packet_trace()
    assert list(trace["packet"]) == [0, 1, 2, 3, 4]
    assert trace["q_cmd"].shape == (5, _native.NUM_JOINTS)
    assert trace["flags"].dtype == np.uint8
    _, state = device.read_once()
    assert state["q"].shape == (_native.NUM_JOINTS,)
    assert {"tick", "time", "ddq_d", "wrench", "host_receive_ns", "motion_finished"} <= set(state)
