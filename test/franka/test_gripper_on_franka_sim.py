"""The Franka Hand through jtac's gripper client (jtac_py/gripper/franka_hand.py) on franka-sim's
gripper server (libfranka's protocol on port 1338 of the robot's address), with a virtual object of
OBJECT_WIDTH_M between the fingers (franka-sim's kinematic hand: a command sets its width at once).

franka-sim's server runs each command to its end before it reads the next, so a preempted command
has already finished there when the Stop arrives; the handles end as on the real hand all the same
(the replaced one PREEMPTED at once, the new one by the hand's answer). A link killed mid-command
(a TCP relay between client and server, cut) ends the open command CONNECTION_LOST while the arm on
the same robot finishes its goal.
"""

from __future__ import annotations

import socket
import threading

import numpy as np
import pytest

pylibfranka = pytest.importorskip("pylibfranka")


from jtac_py import _native  # noqa: E402
from jtac_py.controller import Controller, Trajectory  # noqa: E402
from jtac_py.gripper import Gripper, GripperResultCode  # noqa: E402
from jtac_py.gripper.franka_hand import FrankaHand  # noqa: E402

pytestmark = [
    pytest.mark.franka_sim,
    pytest.mark.skipif(not _native.HAVE_LIBFRANKA, reason="built without libfranka (see the CMake message)"),
]

Code = GripperResultCode
OBJECT_WIDTH_M = 0.03
RESULT_TIMEOUT_S = 10.0
# Test servers of test/franka/conftest.py take second octets 10..21; this module's takes the next.
SECOND_OCTET = 22


@pytest.fixture
def gripper(hand_sim):
    """A Gripper on the server's hand, opened fully first (the object then sits between the fingers)."""
    g = Gripper(FrankaHand(hand_sim.ip))
    g.open()
    assert g.home().result(RESULT_TIMEOUT_S).success
    yield g
    g.close()


def test_move_reaches_its_width_and_a_move_into_the_object_is_blocked(gripper):
    result = gripper.move(0.05, 0.1).result(RESULT_TIMEOUT_S)
    assert (result.code, result.command, result.message) == (Code.SUCCEEDED, "move", "")
    assert result.duration_s < 2.0
    assert gripper.state.width_m == pytest.approx(0.05, abs=1e-6)
    blocked = gripper.move(0.01, 0.1).result(RESULT_TIMEOUT_S)  # franka-sim answers kSuccess at 30 mm
    assert blocked.code is Code.BLOCKED
    assert blocked.width_m == pytest.approx(OBJECT_WIDTH_M, abs=1e-6)
    assert "stopped at 30.0 mm, short of 10.0 mm" in blocked.message


def test_grasp_holds_the_object_and_a_wrong_width_is_not_grasped(gripper):
    grasped = gripper.grasp(OBJECT_WIDTH_M, 0.1, 20.0, 0.005, 0.005).result(RESULT_TIMEOUT_S)
    assert grasped.grasped
    state = gripper.state
    assert state.is_grasped
    assert state.width_m == pytest.approx(OBJECT_WIDTH_M, abs=1e-6)
    assert gripper.home().result(RESULT_TIMEOUT_S).success
    missed = gripper.grasp(0.05, 0.1, 20.0, 0.005, 0.005).result(RESULT_TIMEOUT_S)
    assert missed.code is Code.NOT_GRASPED
    assert "outside the grasp band 45.0..55.0 mm" in missed.message
    assert "fingers stopped at 30.0 mm" in missed.message


def test_home_opens_fully_and_stop_has_its_own_result(gripper):
    gripper.move(0.04).result(RESULT_TIMEOUT_S)
    home = gripper.home().result(RESULT_TIMEOUT_S)
    assert home.success
    assert gripper.state.width_m == pytest.approx(0.08, abs=1e-6)
    assert gripper.state.max_width_m == pytest.approx(0.08, abs=1e-6)
    assert gripper.stop().result(RESULT_TIMEOUT_S).code is Code.SUCCEEDED


def test_a_new_command_preempts_the_running_one(gripper):
    first = gripper.move(0.06, 0.05)
    second = gripper.move(0.07, 0.05)
    assert first.result(0).code is Code.PREEMPTED  # at once, on the caller's side
    assert second.result(RESULT_TIMEOUT_S).success
    assert gripper.state.width_m == pytest.approx(0.07, abs=1e-6)


def test_state_arrives_at_the_servers_rate_and_is_fresh(gripper):
    samples = []
    done = threading.Event()

    def on_event(event):
        if event.kind == "state":
            samples.append(event.time_s)
            if len(samples) >= 31:
                done.set()

    gripper.add_listener(on_event)
    assert done.wait(5.0)
    rate_hz = 30 / (samples[30] - samples[0])
    assert 40.0 < rate_hz < 80.0  # franka-sim broadcasts at 60 Hz
    assert gripper.state.age_s < 0.1


class _Relay:
    """A TCP relay from a loopback port to the hand's command port: cut() kills the link."""

    def __init__(self, ip: str, port: int) -> None:
        self._target = (ip, port)
        self._listener = socket.create_server((ip, 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        client, _ = self._listener.accept()
        server = socket.create_connection(self._target)
        self._sockets += [client, server]
        for a, b in ((client, server), (server, client)):
            threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(4096):
                sink.sendall(data)
        except OSError:
            pass

    def cut(self) -> None:
        for sock in self._sockets:
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._listener.close()


def test_a_killed_link_ends_the_command_connection_lost_and_the_arm_goes_on(hand_sim):
    from jtac_py.hardware import FrankaArm

    relay = _Relay(hand_sim.ip, 1338)
    arm = FrankaArm(hand_sim.ip, use_estimated_wrench=False, late_commands="applied")
    controller = Controller(arm, default_path_tolerance=0.2, default_goal_time_tolerance=1.0).start()
    try:
        gripper = Gripper(FrankaHand(hand_sim.ip, port=relay.port))
        gripper.open()
        assert gripper.home().result(RESULT_TIMEOUT_S).success
        q0 = controller.state.q_cmd
        goal = controller.follow(Trajectory.quintic(q0, q0 + np.full(7, 0.1), 2.0), wait=False)
        relay.cut()
        lost = gripper.move(0.02).result(RESULT_TIMEOUT_S)
        assert lost.code is Code.CONNECTION_LOST
        assert "lost" in lost.message
        assert "lost" in gripper.state.last_error
        assert goal.result(10.0).ok
        assert arm.last_error is None
        gripper.close()
    finally:
        controller.stop()
        arm.close()


def test_frankaarms_hand_runs_on_the_controllers_clock(hand_sim):
    from jtac_py.hardware import FrankaArm

    arm = FrankaArm(hand_sim.ip, use_estimated_wrench=False, late_commands="applied", hand=True)
    controller = Controller(arm).start()
    try:
        gripper = controller.gripper
        assert gripper is arm.gripper and gripper.present
        result = gripper.move(0.06).result(RESULT_TIMEOUT_S)
        assert result.success
        state = gripper.state
        # Measured on the robot's time base, which the controller's state carries.
        assert abs(state.time_s - controller.controller_time()) < 0.1
        assert state.width_m == pytest.approx(0.06, abs=1e-6)
    finally:
        controller.stop()
        arm.close()
    closed = arm.gripper.move(0.05).result(0)  # at once: the arm closed its hand's link
    assert closed.code is Code.CONNECTION_LOST
    assert "Gripper.open() connects" in closed.message
