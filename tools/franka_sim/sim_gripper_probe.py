"""The robot-side probe of franka-sim's gripper (sim_server.py --gripper with --probe): what the hand's
server reads and answers, what it broadcasts, and when the fingers move, on the probe's clock.

Events (one JSON line each, stamped with time.monotonic_ns() of the server process):

- ``gripper_command``: the server starts a command (it reads one only after the last one ended):
  ``command`` (``homing``/``grasp``/``move``/``stop``), ``command_id``, ``width`` [m] (move, grasp).
- ``gripper_answer``: the server answered it: ``command``, ``command_id``, ``status`` (libfranka's
  ``kSuccess``/``kFail``/``kUnsuccessful``/``kAborted``).
- ``gripper_state``: a GripperState datagram sent: ``message_id`` (libfranka's
  ``GripperState.time`` in ms), ``width`` [m].
- ``finger_motion`` (physics hand only): the fingers' width rate changed direction, read in the physics
  loop after every step (1 kHz): ``direction`` ``closing``/``opening``/``rest`` (|rate| below
  FINGER_MOVING_M_S), ``width`` [m], ``rate`` [m/s].

Standard library and numpy; runs in .venv-sim only (sim_server.py installs it).
"""

from __future__ import annotations

import struct
from typing import Any

# The width rate above which the fingers count as moving [m/s]: at rest franka-sim's fingers read
# 0 exactly; one 1 ms step after a new target they already move at ~0.1 m/s.
FINGER_MOVING_M_S = 0.005
_COMMANDS = {1: "homing", 2: "grasp", 3: "move", 4: "stop"}
_STATUSES = {0: "kSuccess", 1: "kFail", 2: "kUnsuccessful", 3: "kAborted"}
_HEADER_SIZE = 10  # command u16, command_id u32, size u32 (packed)


class _Answer:
    """The connection's socket for one command: keeps the answer it sends (to read its status)."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self.sent = b""

    def sendall(self, data: bytes) -> None:
        self.sent = data
        self._sock.sendall(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _ProbedStateSocket:
    """franka-sim's gripper UDP socket: every datagram sent is recorded (its id and width)."""

    def __init__(self, raw: Any, link: Any) -> None:
        self._raw = raw
        self._link = link

    def sendto(self, data: bytes, address: Any) -> int:
        message_id, width = struct.unpack_from("<Id", data)
        sent = self._raw.sendto(data, address)
        self._link.record("gripper_state", message_id=message_id, width=width)
        return sent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _probed_gripper_class(base: type, link: Any) -> type:
    class ProbedGripperServer(base):
        """franka-sim's gripper server with its commands, answers and state datagrams recorded."""

        @property
        def udp_socket(self) -> Any:
            return self.__dict__.get("_probed_udp")

        @udp_socket.setter
        def udp_socket(self, sock: Any) -> None:
            self.__dict__["_probed_udp"] = None if sock is None else _ProbedStateSocket(sock, link)

        def _dispatch_command(self, sock: Any, header: Any, payload: bytes) -> None:
            command = _COMMANDS.get(int(header.command), str(int(header.command)))
            width = struct.unpack_from("<d", payload)[0] if command in ("move", "grasp") else None
            link.record("gripper_command", command=command, command_id=header.command_id, width=width)
            answer = _Answer(sock)
            super()._dispatch_command(answer, header, payload)
            status = struct.unpack_from("<H", answer.sent, _HEADER_SIZE)[0] if answer.sent else None
            link.record(
                "gripper_answer", command=command, command_id=header.command_id,
                status=_STATUSES.get(status, status),
            )  # fmt: skip

    return ProbedGripperServer


def _watch_fingers(sim: Any, link: Any) -> None:
    """Wrap the physics loop's state publication: record each change of the fingers' direction."""
    publish = sim._read_and_publish_state
    last = {"direction": "rest"}

    def probed_publish() -> None:
        publish()
        snapshot = sim._finger_snapshot
        rate_m_s = float(snapshot["dq"][0] + snapshot["dq"][1])
        if rate_m_s > FINGER_MOVING_M_S:
            direction = "opening"
        elif rate_m_s < -FINGER_MOVING_M_S:
            direction = "closing"
        else:
            direction = "rest"
        if direction != last["direction"]:
            last["direction"] = direction
            width_m = float(snapshot["q"][0] + snapshot["q"][1])
            link.record("finger_motion", direction=direction, width=width_m, rate=rate_m_s)

    sim._read_and_publish_state = probed_publish


def install(server: Any, link: Any) -> None:
    """Probe the gripper of a FrankaSimServer built with enable_gripper=True (before start())."""
    gripper = server.gripper_server
    gripper.__class__ = _probed_gripper_class(type(gripper), link)
    if getattr(server.physics_sim, "enable_hand", False):
        _watch_fingers(server.physics_sim, link)
