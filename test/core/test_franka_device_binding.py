"""The libfranka device's binding without a robot: built in, refusing what is not a pylibfranka control.

Layer: bindings. scripts/setup.sh installs pylibfranka and fetches libfranka's headers, so a set-up
machine builds the device; the end-to-end tests against franka-sim are test/franka's.
"""

import pytest

from jtac_py import _native
from jtac_py.hardware import FrankaArm


def test_the_module_is_built_with_the_libfranka_device():
    assert _native.HAVE_LIBFRANKA is True, "run scripts/setup.sh (pylibfranka + libfranka headers)"
    assert _native.LIBFRANKA_VERSION == "0.21.3"
    assert issubclass(_native.FrankaDevice, _native.Device)
    assert issubclass(_native.MujocoDevice, _native.Device)


@pytest.mark.parametrize("not_a_control", [object(), 3, "127.0.0.1"])
def test_franka_device_refuses_what_is_not_a_pylibfranka_control(not_a_control):
    with pytest.raises(TypeError, match=r"pylibfranka object that Robot.start_joint_position_control\(\)"):
        _native.FrankaDevice(not_a_control)


def test_a_franka_device_without_a_control_waits_for_its_motion():
    device = _native.FrankaDevice(control="velocity", use_estimated_wrench=True)
    assert device.control == "velocity" and device.use_estimated_wrench
    assert not device.holds_control and not device.released and not device.has_error
    status, _state = device.read_once()
    assert status == _native.DeviceStatus.WAITING  # nothing read, nothing wrong: the motion is not started
    device.release()
    assert device.released
    assert device.read_once()[0] == _native.DeviceStatus.NOT_CONFIGURED
    with pytest.raises(ValueError, match="already had its motion"):
        device.start_motion(object(), 0)
    with pytest.raises(ValueError, match="'position' or 'velocity'"):
        _native.FrankaDevice(control="torque")


def test_franka_device_refuses_another_pylibfranka_object():
    pylibfranka = pytest.importorskip("pylibfranka")
    with pytest.raises(TypeError, match=r"got JointPositions"):
        _native.FrankaDevice(pylibfranka.JointPositions([0.0] * 7), use_estimated_wrench=True)


def test_franka_arm_checks_its_arguments_before_connecting():
    with pytest.raises(ValueError, match=r"Panda needs libfranka 0\.9"):
        FrankaArm("127.0.0.1", robot="panda")
    with pytest.raises(ValueError, match="realtime_config"):
        FrankaArm("127.0.0.1", realtime_config="sometimes")
    with pytest.raises(ValueError, match="control must be"):
        FrankaArm("127.0.0.1", control="torque")
    with pytest.raises(ValueError, match="upper force thresholds must be 6"):
        FrankaArm("127.0.0.1", collision_behavior=([20.0] * 7, [20.0] * 7, [20.0] * 6, [20.0] * 5))
