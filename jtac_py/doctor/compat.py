"""The "compatibility" line: the robot's server (protocol) version from the connection handshake, the
libfranka jtac was built with, pylibfranka and Python.

The handshake is libfranka's own first message on TCP 1337, spoken here in a few bytes rather than
through pylibfranka, whose Robot does not expose the version the robot answered: a Connect request
{header {command u32 = 0, command_id u32, size u32}, version u16, udp_port u16}, and the robot's
response {header, status u8, version u16}, little-endian and packed. The robot answers with its own
version whether or not it matches (status 1: libfranka's IncompatibleVersionException). The
connection is closed right after: no motion, no state is read.
"""

from __future__ import annotations

import importlib.metadata
import socket
import struct
import sys
import time
from dataclasses import dataclass

from jtac_py.doctor.report import Check

ROBOT_COMMAND_PORT = 1337
#: The robot protocol version libfranka 0.21 sends in its Connect (research_interface kVersion; the
#: franka-sim test reads pylibfranka's own Connect in the server's log and compares).
LIBFRANKA_PROTOCOL_VERSION = 10
PYTHON_MIN = (3, 11)  # pyproject.toml requires-python; pylibfranka 0.21.3 ships cp311 wheels
_HEADER = struct.Struct("<III")
_CONNECT = struct.Struct("<HH")
_RESPONSE = struct.Struct("<BH")
_CONNECT_COMMAND = 0
HANDSHAKE_TIMEOUT_S = 3.0
# After the handshake's connection closes, the robot (and franka-sim) takes a moment to accept the next.
CLOSE_SETTLE_S = 0.3
VERIFIED_COMPAT = (
    "handshake verified on franka-sim 1.1.7 (server version 10, the version pylibfranka 0.21.3 sends); "
    "a real FR3's answer is unverified"
)


@dataclass(frozen=True)
class Handshake:
    """The robot's answer to a Connect."""

    compatible: bool  # status kSuccess
    server_version: int


def _receive_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"the robot closed the connection after {len(data)} of {size} bytes")
        data += chunk
    return data


def parse_connect_response(raw: bytes) -> Handshake:
    """The Connect response (ValueError when it is not one)."""
    if len(raw) < _HEADER.size + _RESPONSE.size:
        raise ValueError(f"a Connect response has {_HEADER.size + _RESPONSE.size} bytes, got {len(raw)}")
    command, _, size = _HEADER.unpack_from(raw)
    if command != _CONNECT_COMMAND or size != _HEADER.size + _RESPONSE.size:
        raise ValueError(f"not a Connect response (command {command}, size {size})")
    status, version = _RESPONSE.unpack_from(raw, _HEADER.size)
    return Handshake(compatible=status == 0, server_version=version)


def connect_request(udp_port: int, version: int = LIBFRANKA_PROTOCOL_VERSION) -> bytes:
    """libfranka's Connect: its protocol version and the UDP port the states would go to."""
    return _HEADER.pack(_CONNECT_COMMAND, 0, _HEADER.size + _CONNECT.size) + _CONNECT.pack(version, udp_port)


def robot_handshake(robot_ip: str, timeout_s: float = HANDSHAKE_TIMEOUT_S) -> Handshake:
    """Connect, read the robot's version, close (OSError / ValueError when it does not answer)."""
    tcp = socket.create_connection((robot_ip, ROBOT_COMMAND_PORT), timeout=timeout_s)
    with tcp, socket.socket(tcp.family, socket.SOCK_DGRAM) as udp:
        udp.bind((tcp.getsockname()[0], 0))  # a real port for the states, closed with the connection
        tcp.sendall(connect_request(udp.getsockname()[1]))
        raw = _receive_exactly(tcp, _HEADER.size + _RESPONSE.size)
    time.sleep(CLOSE_SETTLE_S)
    return parse_connect_response(raw)


def _versions() -> dict[str, str | None]:
    try:
        pylibfranka: str | None = importlib.metadata.version("pylibfranka")
    except importlib.metadata.PackageNotFoundError:
        pylibfranka = None
    try:
        from jtac_py import _native

        libfranka = getattr(_native, "LIBFRANKA_VERSION", None) or None
    except ImportError:
        libfranka = None
    python = ".".join(map(str, sys.version_info[:3]))
    return {"libfranka": libfranka, "pylibfranka": pylibfranka, "python": python}


def _robot_part(robot_ip: str | None) -> tuple[str, str, str, dict]:
    """(text, verdict, fix, data) of the robot's side."""
    if robot_ip is None:
        return "robot server version not asked (no --robot-ip)", "ok", "", {}
    try:
        answer = robot_handshake(robot_ip)
    except (OSError, ValueError) as exc:
        fix = (
            f"check that FCI is activated in Desk and nothing else is connected to {robot_ip}:"
            f"{ROBOT_COMMAND_PORT} (see the robot route line)"
        )
        return f"no Connect answer from {robot_ip}:{ROBOT_COMMAND_PORT} ({exc})", "fail", fix, {}
    data = {"server_version": answer.server_version, "handshake_compatible": answer.compatible}
    if answer.compatible and answer.server_version == LIBFRANKA_PROTOCOL_VERSION:
        return f"robot server version {answer.server_version} (matches libfranka's)", "ok", "", data
    fix = (
        f"the robot speaks protocol {answer.server_version}, this libfranka {LIBFRANKA_PROTOCOL_VERSION}: "
        "install the libfranka (and pylibfranka) release that Franka's compatibility table gives for the "
        "robot's system version, then rebuild jtac (scripts/setup.sh); or update the robot's system image"
    )
    text = f"robot server version {answer.server_version}, libfranka speaks {LIBFRANKA_PROTOCOL_VERSION}"
    return text + " (incompatible: libfranka refuses to connect)", "fail", fix, data


def check_compatibility(robot_ip: str | None) -> Check:
    """The robot's protocol against libfranka's, libfranka against pylibfranka, and Python."""
    name = "compatibility"
    versions = _versions()
    robot_text, verdict, fix, robot_data = _robot_part(robot_ip)
    libfranka = versions["libfranka"] or "none (jtac built without it)"
    pylib = versions["pylibfranka"] or "not installed"
    value = (
        f"{robot_text}; libfranka {libfranka} (protocol {LIBFRANKA_PROTOCOL_VERSION}), pylibfranka {pylib}, "
        f"Python {versions['python']}"
    )
    data = (
        versions | robot_data | {"protocol_version": LIBFRANKA_PROTOCOL_VERSION, "verified": VERIFIED_COMPAT}
    )
    fixes = [fix] if fix else []
    if sys.version_info[:2] < PYTHON_MIN:
        verdict = "fail"
        fixes.append(
            f"Python {'.'.join(map(str, PYTHON_MIN))} or newer (pylibfranka 0.21.3 has cp311 wheels)"
        )
    if versions["libfranka"] and versions["pylibfranka"] and versions["libfranka"] != versions["pylibfranka"]:
        value += " (libfranka and pylibfranka differ)"
        verdict = "fail" if verdict == "fail" else "warn"
        fixes.append(f"pip install pylibfranka=={versions['libfranka']}")
    return Check(name, value, verdict, "; ".join(fixes), data)
