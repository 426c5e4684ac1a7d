"""The Controller over any bound Device, and what it does when the hardware thread dies.

Layer: loop. The AsyncInterface takes any `_native.Device` (MujocoDevice, FrankaDevice); these tests
check that the simulated arm still runs through that base, and that a device error (on a real arm: a
libfranka reflex) resolves the pending goals with the device's own message. The error comes from a
simulated arm made to diverge (no torque limits, a stiffness no 1 ms step can hold), standing in for
a FrankaDevice, whose `last_error` the arm reports.
"""

import math
import re
import time

import mujoco
import numpy as np
import pytest

from jtac_py import _native
from jtac_py.controller import Controller, Trajectory
from jtac_py.hardware import SimulatedArm

RC = _native.ResultCode
DELTA = np.array([0.2, -0.15, 0.1, 0.2, -0.2, 0.15, 0.25])  # [rad]
REFLEX = 'readOnce: libfranka: Move command aborted: motion aborted by reflex! ["joint_velocity_violation"]'


def test_the_simulated_arm_is_a_device_and_a_goal_still_succeeds():
    arm = SimulatedArm("fr3", clock="lockstep")
    assert isinstance(arm.device, _native.Device)
    with Controller(arm, default_goal_time_tolerance=0.5) as c:
        c.step(20)
        q0 = c.state.q
        result = c.follow(Trajectory.quintic(q0, q0 + DELTA, 1.0), timeout=5.0)
        assert result.ok, result.message
        np.testing.assert_allclose(c.state.q, q0 + DELTA, atol=0.02)
        assert c.hardware_error is None
        assert c.timing()["hardware"]["device_errors"] == 0


def test_the_device_base_drives_a_simulated_arm_packet_by_packet():
    device = SimulatedArm("fr3", clock="lockstep").device
    status, state = _native.Device.read_once(device)
    assert status == _native.DeviceStatus.OK and state["tick"] == 1
    assert device.write_once(state["q_d"], np.zeros(7)) == _native.DeviceStatus.OK
    assert device.period_s == pytest.approx(0.001)


class DivergingArm(SimulatedArm):
    """A real-time simulated FR3 that diverges as soon as it moves: its device returns DEVICE_ERROR."""

    def __init__(self):
        super().__init__("fr3", clock="realtime")
        unlimited = re.sub(r' ctrlrange="[^"]*"', "", self.mjcf_xml)
        self.device = _native.MujocoDevice(
            unlimited,
            name_prefix=self.prefix,
            q_init_rad=self.q_init_rad,
            stiffness_Nm_rad=[1e9] * 7,
            clock="realtime",
        )

        self.reflex = False

    @property
    def last_error(self):
        """What a FrankaDevice's arm reports after a reflex (None before: a controller refuses to start
        on an arm with an error)."""
        return REFLEX if self.reflex else None


@pytest.fixture
def quiet_mujoco():
    # MuJoCo's default handler prints the divergence warning and appends it to ./MUJOCO_LOG.TXT.
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda message: None)
    yield
    mujoco.set_mju_user_warning(previous)


def test_a_device_error_resolves_the_pending_goal_with_the_devices_message(quiet_mujoco):
    arm = DivergingArm()
    c = Controller(arm).start()
    arm.reflex = True  # from here on, the device's failure reads as a reflex
    try:
        q0 = c.state.q
        # No path tolerance: the goal must end through the device error, not the arm's wild motion.
        handle = c.follow(Trajectory.quintic(q0, q0 + DELTA, 3.0), tolerances={"path": math.inf}, wait=False)
        result = handle.result(timeout=5.0)
        assert result.code == RC.INVALID_STATE
        assert REFLEX in result.message
        assert "DEVICE_ERROR" in result.message
        assert REFLEX in c.hardware_error
        # A goal after the error is refused, with the same reason.
        deadline = time.monotonic() + 2.0
        while c.hardware_error is None and time.monotonic() < deadline:
            time.sleep(0.01)
        late = c.follow(Trajectory.quintic(q0, q0 + DELTA, 1.0), timeout=1.0)
        assert late.code == RC.INVALID_STATE
        assert REFLEX in late.message
    finally:
        c.stop()
    assert c.timing()["hardware"]["device_errors"] >= 1
    with pytest.raises(RuntimeError, match=r"joint_velocity_violation.*automatic_error_recovery"):
        Controller(arm).start()


def test_a_controller_restarted_after_stopping_mid_motion_starts_where_the_arm_stopped():
    # Real time: the hardware thread stops while the reference moves at ~0.25 rad/s, and half a second
    # of robot time passes before the restart. The restart begins at the robot's echo at rest; it used
    # to continue the old reference, extrapolating its velocity over the ~500 ticks in between (0.45 rad
    # off the arm, PATH_TOLERANCE_VIOLATED on the next goal, 1 run in 3).
    arm = SimulatedArm("fr3", clock="realtime")
    c = Controller(arm, default_path_tolerance=0.3).start()
    try:
        time.sleep(0.2)
        q0 = c.state.q_cmd
        handle = c.follow(Trajectory.quintic(q0, q0 + 1.5 * DELTA, 2.0), wait=False)
        time.sleep(0.5)  # mid-motion, near the peak speed
        c.stop()
        assert handle.result(1.0).code == RC.INVALID_STATE
        q_stopped = c.state.q_cmd
        time.sleep(0.5)
        c.start()
        time.sleep(0.1)
        q_cmd = c.state.q_cmd
        assert np.abs(q_cmd - q_stopped).max() < 0.01  # [rad] the command did not run off
        result = c.follow(Trajectory.quintic(q_cmd, q0, 1.0), timeout=5.0)
        assert result.ok, result.message
    finally:
        c.stop()
