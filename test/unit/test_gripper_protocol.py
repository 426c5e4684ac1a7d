"""libfranka's gripper protocol as jtac speaks it (jtac_py/gripper/franka_protocol.py, franka_hand.py).

- Conformance: a recording hand on a loopback address answers like the Franka Hand; pylibfranka's
  Gripper and jtac's client send it the same commands, and the requests are equal byte for byte,
  field by field (the command ids and the client's UDP port aside). pylibfranka's Gripper holds the
  GIL while it waits for the hand, so that recording hand runs in a process of its own (this file,
  run as a script).
- The client against a scripted hand in this process: every status's result, preemption (Stop,
  then the new command, in that order on the wire), a lost link (TCP closed, UDP silent) ending the
  open commands CONNECTION_LOST, the connect timeout.
- The parser on short and malformed messages.
"""

from __future__ import annotations

import math
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jtac_py.gripper import Gripper, GripperResultCode
from jtac_py.gripper import franka_protocol as fp
from jtac_py.gripper.franka_hand import FrankaHand

Code = GripperResultCode
RESULT_TIMEOUT_S = 5.0


def _loopback_ip(slot: int) -> str:
    """A loopback address of this process's own (libfranka's gripper port is fixed at 1338)."""
    n = os.getpid() % (254 * 200)
    return f"127.{100 + slot}.{n // 254 % 256}.{n % 254 + 1}"


# ---------------------------------------------------------------------------------- a scripted hand
class ScriptedHand:
    """A hand on (ip, port) in this process: answers Connect (version), then each command with the
    status `answer(command, command_id)` gives (None: no answer yet; `answer_later` sends it), and
    sends a UDP state every state_period_s while `broadcasting` (a successful move or grasp sets the
    width at once, a homing opens fully). Records every request's bytes."""

    def __init__(self, ip: str, port: int = 0, *, state_period_s: float = 0.01, version: int = fp.VERSION):
        self.requests: list[bytes] = []
        self.answer = lambda command, command_id: fp.Status.SUCCESS
        self.broadcasting = True
        self.width_m = 0.05
        self.object_width_m: float | None = None  # stops a successful move short, as franka-sim's does
        # A successful move or grasp shows in the states only after this many more (franka-sim's
        # states are sampled before the answer goes out and can arrive after it).
        self.states_behind = 0
        self._arriving: list[float] = []  # widths [m] the next states show, oldest first
        self.version = version
        self.connect_answer = True
        self._state_period_s = state_period_s
        self._listener = socket.create_server((ip, port))
        self.ip, self.port = self._listener.getsockname()[:2]
        self._client: socket.socket | None = None
        self._udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._udp_to: tuple[str, int] | None = None
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._serve, daemon=True)]
        self._threads.append(threading.Thread(target=self._broadcast, daemon=True))
        for thread in self._threads:
            thread.start()

    def answer_later(self, command: fp.Command, command_id: int, status: fp.Status) -> None:
        self._client.sendall(_response(command, command_id, status))

    def close_connection(self) -> None:
        self._client.shutdown(socket.SHUT_RDWR)
        self._client.close()

    def stop(self) -> None:
        self._stop.set()
        self._listener.close()
        if self._client is not None:
            self._client.close()
        self._udp.close()

    def _serve(self) -> None:
        try:
            self._client, address = self._listener.accept()
        except OSError:
            return
        buffer = b""
        while not self._stop.is_set():
            try:
                data = self._client.recv(4096)
            except OSError:
                return
            if not data:
                return
            buffer += data
            while len(buffer) >= fp.HEADER.size:
                command, command_id, size = fp.HEADER.unpack_from(buffer)
                if len(buffer) < size:
                    break
                message, buffer = buffer[:size], buffer[size:]
                self.requests.append(message)
                self._answer(address[0], fp.Command(command), command_id, message)

    def _answer(self, host: str, command: fp.Command, command_id: int, message: bytes) -> None:
        if command is fp.Command.CONNECT:
            self._udp_to = (host, struct.unpack_from("<HH", message, fp.HEADER.size)[1])
            if self.connect_answer:
                status = fp.ConnectStatus.SUCCESS if self.version == fp.VERSION else 1
                payload = struct.pack("<HH", status, self.version)
                self._client.sendall(fp.HEADER.pack(0, command_id, fp.HEADER.size + 4) + payload)
            return
        status = self.answer(command, command_id)
        if status is fp.Status.SUCCESS and command in (fp.Command.MOVE, fp.Command.GRASP):
            width_m = struct.unpack_from("<d", message, fp.HEADER.size)[0]  # there at once
            width_m = max(width_m, self.object_width_m or 0.0)
            self._arriving = [self.width_m] * self.states_behind
            self.width_m = width_m
        elif status is fp.Status.SUCCESS and command is fp.Command.HOMING:
            self.width_m = 0.08
        if status is not None:
            self._client.sendall(_response(command, command_id, status))

    def _broadcast(self) -> None:
        message_id = 0
        while not self._stop.wait(self._state_period_s):
            if self.broadcasting and self._udp_to is not None:
                message_id += 1
                shown_m = self._arriving.pop(0) if self._arriving else self.width_m
                state = fp.STATE.pack(message_id, shown_m, 0.08, False, 31)
                try:
                    self._udp.sendto(state, self._udp_to)
                except OSError:
                    return


def _response(command: fp.Command, command_id: int, status: fp.Status) -> bytes:
    return fp.HEADER.pack(int(command), command_id, fp.HEADER.size + 2) + struct.pack("<H", int(status))


@pytest.fixture
def hand():
    scripted = ScriptedHand("127.0.0.1")
    yield scripted
    scripted.stop()


@pytest.fixture
def gripper(hand):
    g = Gripper(FrankaHand(hand.ip, port=hand.port, state_timeout_s=0.3))
    g.open()
    _wait_until(lambda: not math.isnan(g.state.width_m))  # the first UDP state
    yield g
    g.close()


def _wait_until(done, timeout_s: float = RESULT_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


# ---------------------------------------------------------------------------------- conformance
COMMANDS = (
    ("move", (0.02, 0.05)),
    ("grasp", (0.03, 0.1, 20.0, 0.004, 0.006)),
    ("homing", ()),
    ("stop", ()),
)


def _record(client: str, ip: str) -> list[bytes]:
    """The requests a client ("pylibfranka" or "jtac") sends for COMMANDS, as the hand received them."""
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "record", ip],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout.readline().strip() == "listening"
        _run_client(client, ip)
        out, _ = server.communicate(timeout=10)
    finally:
        server.kill()
    return [bytes.fromhex(line) for line in out.split()]


def _run_client(client: str, ip: str) -> None:
    if client == "pylibfranka":
        import pylibfranka

        gripper = pylibfranka.Gripper(ip)
        calls = {"move": gripper.move, "grasp": gripper.grasp, "homing": gripper.homing, "stop": gripper.stop}
        for name, args in COMMANDS:
            assert calls[name](*args)
        del gripper
        return
    with Gripper(FrankaHand(ip)) as gripper:
        gripper.open()
        calls = {"move": gripper.move, "grasp": gripper.grasp, "homing": gripper.home, "stop": gripper.stop}
        for name, args in COMMANDS:
            assert calls[name](*args).result(RESULT_TIMEOUT_S).success


def _fields(message: bytes) -> tuple:
    """A request's fields without its command id (and the Connect's UDP port, the client's own)."""
    command, _command_id, size = fp.HEADER.unpack_from(message)
    payload = message[fp.HEADER.size :]
    if command == fp.Command.CONNECT:
        return command, size, struct.unpack("<HH", payload)[0]
    return (command, size, *struct.unpack(f"<{len(payload) // 8}d", payload))


def test_requests_equal_pylibfrankas_field_by_field():
    pytest.importorskip("pylibfranka")
    ip = _loopback_ip(0)
    theirs = _record("pylibfranka", ip)
    ours = _record("jtac", ip)
    assert [fp.Command(fp.HEADER.unpack_from(m)[0]).name for m in theirs] == [
        "CONNECT",
        "MOVE",
        "GRASP",
        "HOMING",
        "STOP",
    ]
    assert [_fields(m) for m in ours] == [_fields(m) for m in theirs]
    assert [len(m) for m in ours] == [len(m) for m in theirs] == [14, 26, 50, 10, 10]
    # The grasp's fields in libfranka's order: width, epsilon inner, epsilon outer, speed, force.
    assert _fields(ours[2])[2:] == (0.03, 0.004, 0.006, 0.1, 20.0)


def _serve_recording(ip: str) -> None:
    """The recording hand (run as a script): one client; answers like the hand; prints the requests."""
    hand = ScriptedHand(ip, fp.COMMAND_PORT)
    print("listening", flush=True)
    hand._threads[0].join(timeout=30)
    for message in hand.requests:
        print(message.hex())
    hand.stop()


# ---------------------------------------------------------------------------------- the client
@pytest.mark.parametrize(
    ("command", "status", "code"),
    [
        ("move", fp.Status.SUCCESS, Code.SUCCEEDED),
        ("move", fp.Status.UNSUCCESSFUL, Code.BLOCKED),
        ("grasp", fp.Status.UNSUCCESSFUL, Code.NOT_GRASPED),
        ("grasp", fp.Status.FAIL, Code.FAILED),
        ("home", fp.Status.ABORTED, Code.PREEMPTED),
    ],
)
def test_each_status_gives_its_result(hand, gripper, command, status, code):
    hand.answer = lambda *_: status
    handle = {"move": lambda: gripper.move(0.02), "grasp": lambda: gripper.grasp(0.03), "home": gripper.home}[
        command
    ]()
    result = handle.result(RESULT_TIMEOUT_S)
    assert result.code is code
    assert result.command == command
    assert (result.message == "") == (code is Code.SUCCEEDED)
    if code is Code.FAILED:
        assert "kFail" in result.message
        assert "kFail" in gripper.state.last_error
    assert result.width_m == pytest.approx(0.02 if (command, code) == ("move", Code.SUCCEEDED) else 0.05)


def test_a_move_answered_success_short_of_its_width_is_blocked(hand, gripper):
    hand.object_width_m = 0.03
    blocked = gripper.move(0.02).result(RESULT_TIMEOUT_S)
    assert blocked.code is Code.BLOCKED
    assert blocked.width_m == pytest.approx(0.03)
    assert "kSuccess, but the fingers stopped at 30.0 mm, short of 20.0 mm" in blocked.message
    assert gripper.move(0.026).result(RESULT_TIMEOUT_S).success  # within MOVE_TOLERANCE_M (5 mm)


@pytest.mark.parametrize("command", ["move", "grasp"])
def test_a_result_waits_for_the_state_that_shows_it_done(hand, gripper, command):
    hand.states_behind = 2  # the answer overtakes two states with the old width (0.05 m)
    handle = gripper.move(0.02) if command == "move" else gripper.grasp(0.03, epsilon_outer_m=0.004)
    result = handle.result(RESULT_TIMEOUT_S)
    assert result.success
    assert result.width_m == pytest.approx(0.02 if command == "move" else 0.03)


def test_a_new_command_sends_stop_then_itself_and_preempts(hand, gripper):
    hand.answer = lambda command, command_id: None  # the hand answers only when told
    first = gripper.move(0.02)
    _wait_until(lambda: len(hand.requests) == 2)
    second = gripper.grasp(0.03)
    _wait_until(lambda: len(hand.requests) == 4)
    assert first.result(0).code is Code.PREEMPTED  # at once, on the caller's side
    commands = [fp.HEADER.unpack_from(m)[:2] for m in hand.requests[1:]]
    assert [fp.Command(c).name for c, _ in commands] == ["MOVE", "STOP", "GRASP"]
    (_, move_id), (_, stop_id), (_, grasp_id) = commands
    assert (first.id, second.id) == (move_id, grasp_id)
    hand.answer_later(fp.Command.MOVE, move_id, fp.Status.ABORTED)  # as the real hand answers
    hand.answer_later(fp.Command.STOP, stop_id, fp.Status.SUCCESS)
    hand.answer_later(fp.Command.GRASP, grasp_id, fp.Status.SUCCESS)
    assert second.result(RESULT_TIMEOUT_S).grasped
    assert first.result(0).code is Code.PREEMPTED


def test_stop_has_a_handle_of_its_own(hand, gripper):
    hand.answer = lambda command, command_id: None if command is fp.Command.MOVE else fp.Status.SUCCESS
    move = gripper.move(0.02)
    stop = gripper.stop()
    assert stop.result(RESULT_TIMEOUT_S).code is Code.SUCCEEDED
    assert move.result(0).code is Code.PREEMPTED
    names = [fp.Command(fp.HEADER.unpack_from(m)[0]).name for m in hand.requests[1:]]
    assert names == ["MOVE", "STOP"]  # a stop preempts without a second Stop


def test_tcp_closed_ends_open_commands_connection_lost(hand, gripper):
    hand.answer = lambda *_: None
    move = gripper.move(0.02)
    _wait_until(lambda: len(hand.requests) == 2)
    hand.close_connection()
    result = move.result(RESULT_TIMEOUT_S)
    assert result.code is Code.CONNECTION_LOST
    assert "lost" in result.message
    assert "lost" in gripper.state.last_error
    later = gripper.move(0.03)  # at once, without a wait to connect
    assert later.done()
    assert later.result(0).code is Code.CONNECTION_LOST


def test_udp_silence_ends_open_commands_connection_lost(hand, gripper):
    hand.answer = lambda *_: None
    move = gripper.move(0.02)
    hand.broadcasting = False
    result = move.result(RESULT_TIMEOUT_S)
    assert result.code is Code.CONNECTION_LOST
    assert "no state for 0.3 s" in result.message  # the fixture's state_timeout_s


def test_state_is_the_newest_datagram_and_listeners_get_each(hand, gripper):
    events = []
    gripper.add_listener(events.append)
    _wait_until(lambda: sum(e.kind == "state" for e in events) >= 5)
    state = gripper.state
    assert state.width_m == pytest.approx(0.05)
    assert state.max_width_m == pytest.approx(0.08)
    assert state.temperature_c == 31.0
    assert 0.0 <= state.age_s < 0.5
    hand.width_m = 0.04
    _wait_until(lambda: gripper.state.width_m == pytest.approx(0.04))


def test_connect_refused_and_unanswered_are_named_connection_errors(hand):
    with pytest.raises(ConnectionError, match="does not answer"):
        Gripper(FrankaHand("127.0.0.1", port=_free_port())).open()
    hand.connect_answer = False
    started = time.monotonic()
    with pytest.raises(ConnectionError, match=r"no Connect response within 0\.3 s"):
        Gripper(FrankaHand(hand.ip, port=hand.port, connect_timeout_s=0.3)).open()
    assert time.monotonic() - started < 2.0


def test_another_version_is_refused():
    other = ScriptedHand("127.0.0.1", version=fp.VERSION + 1)
    try:
        with pytest.raises(ConnectionError, match=f"server version {fp.VERSION + 1}, jtac speaks 3"):
            Gripper(FrankaHand(other.ip, port=other.port)).open()
    finally:
        other.stop()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------- the parser
def test_responses_split_across_reads_and_joined_in_one():
    reader = fp.ResponseReader()
    stream = _response(fp.Command.MOVE, 7, fp.Status.SUCCESS) + _response(
        fp.Command.GRASP, 8, fp.Status.ABORTED
    )
    assert reader.feed(stream[:5]) == []
    assert reader.feed(stream[5:13]) == [fp.Response(fp.Command.MOVE, 7, fp.Status.SUCCESS)]
    assert reader.feed(stream[13:]) == [fp.Response(fp.Command.GRASP, 8, fp.Status.ABORTED)]
    connect = fp.HEADER.pack(0, 0, 14) + struct.pack("<HH", 0, 3)
    assert reader.feed(connect) == [fp.Response(fp.Command.CONNECT, 0, 0, 3)]


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (fp.HEADER.pack(9, 1, 12) + b"\0\0", "unknown command 9"),
        (fp.HEADER.pack(3, 1, 10), "size 10 for command MOVE"),
        (fp.HEADER.pack(3, 1, 4000) + b"\0\0", "size 4000 for command MOVE"),
        (fp.HEADER.pack(3, 1, 12) + struct.pack("<H", 7), "unknown status 7"),
        (fp.HEADER.pack(0, 1, 12) + b"\0\0", "Connect response: 2 bytes after the header, not 4"),
        (fp.HEADER.pack(3, 1, 14) + b"\0\0\0\0", "MOVE response: 4 bytes after the header, not 2"),
    ],
)
def test_malformed_responses_raise_protocol_error(message, match):
    with pytest.raises(fp.ProtocolError, match=match):
        fp.ResponseReader().feed(message)


def test_state_datagrams_of_another_size_raise():
    good = fp.STATE.pack(5, 0.031, 0.0795, True, 29)
    assert fp.STATE.size == 23
    assert fp.parse_state(good) == fp.StateDatagram(5, 0.031, 0.0795, True, 29)
    for datagram in (b"", good[:22], good + b"\0"):
        with pytest.raises(fp.ProtocolError, match=f"{len(datagram)} bytes, not 23"):
            fp.parse_state(datagram)
    assert math.isnan(Gripper(FrankaHand("127.0.0.1")).state.width_m)  # no datagram yet


if __name__ == "__main__" and sys.argv[1:2] == ["record"]:
    _serve_recording(sys.argv[2])
