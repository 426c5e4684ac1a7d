"""libfranka's gripper protocol (research_interface::gripper, version 3), as libfranka speaks it.

jtac speaks it itself rather than through pylibfranka's ``Gripper``, whose commands hold the GIL
until the hand answers (a 1 s move froze every other Python thread, a stop() from another thread
among them). The conformance test (test/unit/test_gripper_protocol.py) compares these bytes with
pylibfranka's for the same commands.

- TCP, port 1338 on the robot's address: requests are a header {command u16, command_id u32, size
  u32} (size: the whole message, header included) and a payload: Connect {version u16, udp_port
  u16}, Move {width f64, speed f64}, Grasp {width f64, epsilon {inner f64, outer f64}, speed f64,
  force f64}, Homing and Stop nothing. Responses: the header and {status u16} (Connect: {status u16,
  version u16}), with the request's command_id: several commands may be in flight on one connection.
- UDP, to the port the Connect named: GripperState {message_id u32, width f64, max_width f64,
  is_grasped u8, temperature u16}.

All little-endian and packed. Units: m, m/s, N, °C.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

__all__ = [
    "COMMAND_PORT",
    "HEADER",
    "STATE",
    "VERSION",
    "Command",
    "ConnectStatus",
    "ProtocolError",
    "Response",
    "ResponseReader",
    "StateDatagram",
    "Status",
    "connect_request",
    "grasp_request",
    "homing_request",
    "move_request",
    "parse_state",
    "stop_request",
]

#: The hand's command port on the robot's address, and the protocol version libfranka 0.21 speaks.
COMMAND_PORT = 1338
VERSION = 3

#: {command u16, command_id u32, size u32}.
HEADER = struct.Struct("<HII")
_CONNECT = struct.Struct("<HH")
_MOVE = struct.Struct("<dd")
_GRASP = struct.Struct("<ddddd")
_STATUS = struct.Struct("<H")
#: {message_id u32, width f64, max_width f64, is_grasped u8, temperature u16}.
STATE = struct.Struct("<IddBH")
#: The longest response there is (Connect's); anything longer is a broken stream.
_MAX_RESPONSE_SIZE = HEADER.size + _CONNECT.size


class Command(enum.IntEnum):
    """research_interface::gripper::Command."""

    CONNECT = 0
    HOMING = 1
    GRASP = 2
    MOVE = 3
    STOP = 4


class Status(enum.IntEnum):
    """How a Homing/Grasp/Move/Stop ended (CommandBase::Status)."""

    SUCCESS = 0
    FAIL = 1
    UNSUCCESSFUL = 2
    ABORTED = 3


class ConnectStatus(enum.IntEnum):
    SUCCESS = 0
    INCOMPATIBLE_LIBRARY_VERSION = 1


class ProtocolError(ValueError):
    """Bytes that are not the gripper protocol (a short or malformed message)."""


def _request(command: Command, command_id: int, payload: bytes = b"") -> bytes:
    return HEADER.pack(int(command), command_id, HEADER.size + len(payload)) + payload


def connect_request(command_id: int, udp_port: int) -> bytes:
    """Connect: the protocol version and the UDP port the state goes to."""
    return _request(Command.CONNECT, command_id, _CONNECT.pack(VERSION, udp_port))


def move_request(command_id: int, width_m: float, speed_m_s: float) -> bytes:
    return _request(Command.MOVE, command_id, _MOVE.pack(width_m, speed_m_s))


def grasp_request(
    command_id: int,
    width_m: float,
    epsilon_inner_m: float,
    epsilon_outer_m: float,
    speed_m_s: float,
    force_n: float,
) -> bytes:
    return _request(
        Command.GRASP,
        command_id,
        _GRASP.pack(width_m, epsilon_inner_m, epsilon_outer_m, speed_m_s, force_n),
    )


def homing_request(command_id: int) -> bytes:
    return _request(Command.HOMING, command_id)


def stop_request(command_id: int) -> bytes:
    return _request(Command.STOP, command_id)


@dataclass(frozen=True)
class Response:
    """A response: the command and its id, the status (Status, or ConnectStatus for Connect) and
    the server's version (Connect only, else None)."""

    command: Command
    command_id: int
    status: int
    version: int | None = None


class ResponseReader:
    """Splits the TCP byte stream into responses: feed() what recv() returned, get the complete
    responses; a partial one waits for the rest. ProtocolError for a stream that is not the
    protocol (the connection is then unusable)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Response]:
        self._buffer += data
        responses = []
        while len(self._buffer) >= HEADER.size:
            command, command_id, size = HEADER.unpack_from(self._buffer)
            _check_header(command, size)
            if len(self._buffer) < size:
                break
            body = bytes(self._buffer[HEADER.size : size])
            del self._buffer[:size]
            responses.append(_response(Command(command), command_id, body))
        return responses


def _check_header(command: int, size: int) -> None:
    if command not in Command._value2member_map_:
        raise ProtocolError(f"gripper response: unknown command {command}")
    if not HEADER.size + _STATUS.size <= size <= _MAX_RESPONSE_SIZE:
        raise ProtocolError(f"gripper response: size {size} for command {Command(command).name}")


def _response(command: Command, command_id: int, body: bytes) -> Response:
    if command is Command.CONNECT:
        if len(body) != _CONNECT.size:
            raise ProtocolError(f"gripper Connect response: {len(body)} bytes after the header, not 4")
        status, version = _CONNECT.unpack(body)
        return Response(command, command_id, status, version)
    if len(body) != _STATUS.size:
        raise ProtocolError(f"gripper {command.name} response: {len(body)} bytes after the header, not 2")
    (status,) = _STATUS.unpack(body)
    if status not in Status._value2member_map_:
        raise ProtocolError(f"gripper {command.name} response: unknown status {status}")
    return Response(command, command_id, status)


@dataclass(frozen=True)
class StateDatagram:
    """One UDP state: the hand's message counter, width and stroke [m], grasp flag, temperature [°C]."""

    message_id: int
    width_m: float
    max_width_m: float
    is_grasped: bool
    temperature_c: int


def parse_state(datagram: bytes) -> StateDatagram:
    """The state in a UDP datagram; ProtocolError for one of another size."""
    if len(datagram) != STATE.size:
        raise ProtocolError(f"gripper state: {len(datagram)} bytes, not {STATE.size}")
    message_id, width_m, max_width_m, is_grasped, temperature_c = STATE.unpack(datagram)
    return StateDatagram(message_id, width_m, max_width_m, bool(is_grasped), temperature_c)
