"""The Controller on any object implementing the Arm protocol, and the one place that builds arms.

Layer: loop with simulated hardware, lockstep (deterministic). ``DelegatingArm`` is no SimulatedArm
(nor a subclass): it implements ``jtac_py.hardware.Arm`` by handing every call to a real lockstep
SimulatedArm and counting the motion calls, as a new backend's Python side would.
"""

import numpy as np
import pytest

from jtac_py import _native, arms, robots
from jtac_py.controller import LIMIT_MARGIN, Controller, Trajectory
from jtac_py.hardware import SimulatedArm

DELTA_RAD = np.array([0.2, -0.15, 0.1, 0.2, -0.2, 0.15, 0.3])  # a move that uses every joint


class DelegatingArm:
    """An Arm that is not a SimulatedArm: every member of the protocol from a lockstep one."""

    def __init__(self) -> None:
        self._inner = SimulatedArm("fr3", clock="lockstep")
        self.robot = self._inner.robot
        self.urdf_xml = self._inner.urdf_xml
        self.late_commands = self._inner.late_commands
        self.motions_started = 0
        self.motions_finished = 0

    @property
    def device(self):
        return self._inner.device

    @property
    def lockstep(self) -> bool:
        return self._inner.lockstep

    @property
    def ft_sensor_name(self) -> str:
        return self._inner.ft_sensor_name

    @property
    def last_error(self):
        return self._inner.last_error

    def start_motion(self, fifo_priority: int = 0) -> None:
        self.motions_started += 1

    def finish_motion(self) -> None:
        self.motions_finished += 1


def test_a_goal_runs_on_an_arm_that_only_implements_the_protocol():
    arm = DelegatingArm()
    with Controller(arm, default_goal_tolerance=0.01) as c:
        c.step(20)
        assert c.hardware is arm
        # The arm's sensor became the controller's, as with a SimulatedArm.
        assert c.wrench_sources == {"fr3_ft_sensor": "device"}
        q0 = np.array(c.state.q)
        result = c.follow(Trajectory.quintic(q0, q0 + DELTA_RAD, 1.5), timeout=5.0)
        assert result.ok, result.message
        # The 1.5 s quintic ends at its target within the goal tolerance, on time within a cycle.
        np.testing.assert_allclose(c.state.q, q0 + DELTA_RAD, atol=0.01)
        assert result.end_time_s - result.start_time_s == pytest.approx(1.5, abs=0.001 + 1e-9)
    # Lockstep: no motion to start or finish (a real arm's start_motion runs in real time only).
    assert (arm.motions_started, arm.motions_finished) == (0, 0)


def test_build_arm_builds_the_simulated_arm_on_its_own_clock():
    arm = arms.build_arm({"hardware": "sim", "robot": "panda", "robot_ip": "", "late_commands": "dropped"})
    assert isinstance(arm, SimulatedArm)
    assert (arm.robot, arm.clock, arm.late_commands) == ("panda", "realtime", "applied")
    assert not arm.gripper.present  # no `hand` in the mapping: no hand
    with_hand = arms.build_arm({"hardware": "sim", "robot": "fr3", "hand": True})
    assert with_hand.gripper.present and with_hand.device.has_hand


def test_build_arm_names_the_backends_it_knows():
    with pytest.raises(ValueError, match=r"hardware must be one of \['franka', 'sim'\], got 'kuka'"):
        arms.build_arm({"hardware": "kuka", "robot": "fr3"})


def test_a_controller_without_an_arm_builds_it_from_its_parameters():
    c = Controller(None, robot="panda")
    assert isinstance(c.hardware, SimulatedArm)
    assert (c.hardware.robot, c.hardware.clock) == ("panda", "realtime")
    assert c.joint_names[0] == "panda_joint1"


@pytest.mark.parametrize("robot", ["fr3", "panda"])
def test_the_hardware_limiter_enforces_the_arms_whole_limit_table(robot):
    c = Controller(SimulatedArm(robot, clock="lockstep"))
    limits = c._interface.limits
    # The arm's robot's row of franka_hw's table, every entry (rates, range, envelope).
    row = _native.AsyncInterface(SimulatedArm(robot, clock="lockstep").device, robot=robot).limits
    assert limits.keys() == row.keys()
    for name, value in row.items():
        np.testing.assert_array_equal(limits[name], value, err_msg=name)
    spec = robots.robot_spec(robot)
    np.testing.assert_allclose(limits["dq_max_rad_s"], spec.dq_max_rad_s, rtol=1e-12)
    assert limits["limit_margin"] == LIMIT_MARGIN
    if robot == "panda":  # its own joint range, no envelope: nothing of the FR3's
        np.testing.assert_array_equal(limits["q_min_rad"], spec.q_min_rad)
        np.testing.assert_array_equal(limits["q_max_rad"], spec.q_max_rad)
        assert limits["position_based_velocity_limits"] is False
