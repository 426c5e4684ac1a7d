"""The simulated Franka Hand through jtac_py._native: MujocoDevice.has_hand / hand_command / hand_state with
the contract's Python names (lower-case kinds and statuses), driven packet by packet in lockstep."""

from __future__ import annotations

import numpy as np
import pytest

from jtac_py import _native, robots

Q_HOME = np.array(robots.robot_spec("fr3").q_home_rad)


def _device(**model) -> _native.MujocoDevice:
    return _native.MujocoDevice(
        robots.mjcf_xml("fr3", hand=True, **model), name_prefix="fr3", clock="lockstep"
    )


def _tick(device: _native.MujocoDevice, n: int = 1) -> None:
    for _ in range(n):
        device.write_once(Q_HOME, np.zeros(7))
        device.read_once()


def _until_done(device: _native.MujocoDevice, command_id: int, max_ticks: int = 5000) -> int:
    for tick in range(1, max_ticks + 1):
        _tick(device)
        state = device.hand_state()
        if state.command_id == command_id and state.status != "running":
            return tick
    raise AssertionError(f"command {command_id} still running after {max_ticks} ticks")


def test_move_and_its_state_under_the_contract_s_names():
    device = _device()
    assert device.has_hand
    state = device.hand_state()
    assert (state.width_m, state.status, state.command_id, state.temperature_c) == (0.08, "idle", 0, 30.0)
    first = device.hand_command("move", width_m=0.04, speed_m_s=0.05)
    assert first > 0
    _tick(device, 100)
    state = device.hand_state()
    assert (state.command_id, state.command_kind, state.status, state.moving) == (
        first,
        "move",
        "running",
        True,
    )
    assert state.width_velocity_m_s == pytest.approx(-0.05, abs=1e-3)
    ticks = _until_done(device, first) + 100
    state = device.hand_state()
    assert state.status == "success"
    assert ticks * 1e-3 == pytest.approx(0.8, rel=0.1)
    assert state.width_m == pytest.approx(0.04, abs=1e-3)
    assert state.tick == ticks - 1  # the device tick whose state it measured


def test_grasp_of_the_box_then_stop_releases():
    device = _device(grasp_object=robots.GraspObject(0.03))
    grasp = device.hand_command("grasp", width_m=0.03, speed_m_s=0.1, force_n=20.0)
    _until_done(device, grasp)
    _tick(device, 50)
    state = device.hand_state()
    assert (state.status, state.is_grasped) == ("success", True)
    assert state.width_m == pytest.approx(0.03, abs=2e-3)
    assert state.force_n == 20.0
    stop = device.hand_command("stop")
    assert stop == grasp + 1
    _tick(device)
    state = device.hand_state()
    assert (state.command_id, state.command_kind, state.status) == (stop, "stop", "success")
    _tick(device, 50)
    assert abs(device.hand_state().force_n) < 1.0  # the grasp force released


def test_bad_commands_name_the_field_and_no_hand_is_an_error():
    device = _device()
    with pytest.raises(ValueError, match="kind"):
        device.hand_command("open")
    with pytest.raises(ValueError, match="width_m"):
        device.hand_command("move", width_m=0.2)
    with pytest.raises(ValueError, match="force_N"):
        device.hand_command("grasp", width_m=0.03, force_n=0.0)
    arm_only = _native.MujocoDevice(robots.mjcf_xml("fr3"), name_prefix="fr3", clock="lockstep")
    assert not arm_only.has_hand
    assert np.isnan(arm_only.hand_state().width_m)
    with pytest.raises(RuntimeError, match="no hand"):
        arm_only.hand_command("homing")
