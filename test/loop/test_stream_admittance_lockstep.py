"""A stream with a compliant axis set on the simulated FR3 in lockstep: admittance while streaming.

Layer: loop with simulated hardware (MuJoCo arm with its F/T sensor, the hardware thread, the
controller's StreamLaw driving the JTAC controller's external-reference mode, the Python API), 1 ms at
a time on a virtual clock. A push on the tool while the stream holds still deflects the command by F/K
with the admittance and not at all without it; the set is validated as a goal's; a threshold stops the
stream; record rows carry the wrenches and the offset.
"""

import numpy as np
import pytest

from jtac_py import _native
from jtac_py.controller import Controller, Trajectory
from jtac_py.hardware import SimulatedArm

RC = _native.ResultCode
K_LINEAR = 400.0  # [N/m]
COMPLIANT = {  # damping: critical by default
    "mass": [4.0, 4.0, 4.0, 1.0, 1.0, 1.0],
    "stiffness": [K_LINEAR] * 3 + [50.0] * 3,
    "selected_axes": [True, True, True, False, False, False],
}
PUSH_N = np.array([0.0, 10.0, 0.0])  # [N], world y, at the TCP


@pytest.fixture
def rig():
    arm = SimulatedArm("fr3", clock="lockstep")
    controller = Controller(arm, default_path_tolerance=0.3).start()
    controller.step(20)
    yield arm, controller
    controller.stop()


def _ee_position(kin, q):
    """Position of the ee frame at q [m, base axes]."""
    return kin.forward(q, "fr3_ee")[:3, 3]


def _hold(c, stream, q0, kind, packets):
    """Streams q0 for `packets` ms: single targets at 125 Hz, or a chunk of 16 points 20 ms apart
    every 100 ms computed from an observation 50 ms old."""
    for p in range(packets):
        if kind == "targets" and p % 8 == 0:
            stream.send(q0)
        elif kind == "chunks" and p % 100 == 0:
            stream.send_chunk(0.02 * np.arange(16), np.tile(q0, (16, 1)), observed_at_s=stream.now() - 0.05)
        c.step(1)


@pytest.mark.parametrize("kind", ["targets", "chunks"])
@pytest.mark.parametrize("compliant", [True, False], ids=["admittance", "stiff"])
def test_a_push_while_streaming_deflects_the_command_by_f_over_k_only_with_admittance(rig, kind, compliant):
    arm, c = rig
    kin = _native.Kinematics()
    kin.configure(arm.urdf_xml, "fr3_link0", c.joint_names)
    q0 = c.state.q_cmd
    fields = ["time", "q", "q_cmd", "q_ref", "joint_offset", "wrench_control", "mode"]
    with c.stream(admittance=COMPLIANT if compliant else None) as stream, c.record(fields) as rec:
        assert stream.compliant == compliant
        _hold(c, stream, q0, kind, 300)
        arm.push(PUSH_N, 2.0)
        _hold(c, stream, q0, kind, 1800)  # critically damped, ω = 10 rad/s: settled within 1.8 s
        s = c.state
        assert stream.state.name == "FOLLOWING"
        assert stream.stop_code == RC.SUCCESSFUL
    command = _ee_position(kin, s.q_cmd) - _ee_position(kin, s.q_ref)
    np.testing.assert_allclose(s.q_ref, q0, atol=1e-9)  # the stream held still
    data = rec.data()
    if compliant:
        # ≈ F/K along the push, within 15 %; the other directions stay on the reference.
        along = float(np.dot(command, PUSH_N / np.linalg.norm(PUSH_N)))
        assert along == pytest.approx(np.linalg.norm(PUSH_N) / K_LINEAR, rel=0.15)
        assert np.linalg.norm(command - along * PUSH_N / np.linalg.norm(PUSH_N)) < 0.15 * along
        # The arm followed the command.
        moved = _ee_position(kin, s.q) - _ee_position(kin, q0)
        assert np.dot(moved, PUSH_N) > 0.85 * np.dot(PUSH_N / K_LINEAR, PUSH_N)
        # Record rows carry the offset (command = reference + offset) and the control wrench (≈ 10 N).
        np.testing.assert_allclose(data["q_cmd"] - data["q_ref"], data["joint_offset"], atol=1e-12)
        assert np.abs(data["joint_offset"][-1]).max() > 1e-3
        assert np.linalg.norm(data["wrench_control"][-1, :3]) == pytest.approx(10.0, rel=0.1)
    else:
        assert np.linalg.norm(command) == 0.0
        assert np.linalg.norm(_ee_position(kin, s.q_cmd) - _ee_position(kin, q0)) < 1e-9
        assert np.all(data["joint_offset"] == 0.0)
    # Closed: back to trajectory execution, a goal runs.
    c.step(20)
    q = c.state.q_cmd
    assert c.follow(Trajectory.quintic(q, q, 0.2), timeout=5.0).ok


def test_a_rejected_admittance_set_raises_the_goals_message_and_nothing_changes(rig):
    _, c = rig
    unstable = {
        "mass": 0.1,
        "stiffness": 400000.0,
        "damping": [32.0] * 6,
        "selected_axes": [True] * 3 + [False] * 3,
    }
    with pytest.raises(ValueError) as raised:
        c.stream(admittance=unstable)
    message = str(raised.value)
    assert message.startswith("admittance_parameters (tip 'fr3_ee') axis x: M = 0.1 kg, K = 400000 N/m")
    assert "unstable" in message
    with pytest.raises(ValueError, match=r"admittance_parameters\.mass\[1\] \(y\) = 0: must be > 0"):
        c.stream(admittance={**COMPLIANT, "mass": [4.0, 0.0, 4.0, 1.0, 1.0, 1.0]})
    # Nothing changed: no stream is open, and the goal API rejects the same set with the same words.
    q = c.state.q_cmd
    result = c.follow(Trajectory.quintic(q, q, 0.2), admittance=unstable, timeout=5.0)
    assert result.code == RC.INVALID_GOAL
    assert result.message == message
    assert c.follow(Trajectory.quintic(q, q, 0.2), timeout=5.0).ok


def test_a_threshold_exceeded_while_streaming_brakes_and_ends_the_stream(rig):
    arm, c = rig
    q0 = c.state.q_cmd
    stream = c.stream(admittance=COMPLIANT, thresholds=[8.0, 8.0, 8.0, 5.0, 5.0, 5.0])
    with pytest.raises(RuntimeError, match="stream with admittance is open"):
        c.zero_fts()
    _hold(c, stream, q0, "targets", 300)
    arm.push([0.0, 0.0, -25.0], 0.5)
    c.step(100)
    assert stream.stop_code == RC.FORCE_TORQUE_THRESHOLD_EXCEEDED
    assert "threshold exceeded" in stream.stop_message and "Fz" in stream.stop_message
    with pytest.raises(RuntimeError, match="this stream stopped"):
        stream.send(q0)
    c.step(1000)
    assert stream.state.name == "HOLDING"
    np.testing.assert_array_equal(c.state.dq_cmd, 0.0)
    stream.close()
    c.step(20)
    q = c.state.q_cmd
    assert c.follow(Trajectory.quintic(q, q, 0.2), timeout=5.0).ok
