"""How franka-sim's server is made to report to the probe and pass through the fault injector without
modifying franka-sim: a proxy around its UDP socket (ProbedUdpSocket) and a subclass of its server
(probed_server_class) that installs the proxy and reports Move, abort and motion end to a Link.
Imports franka-sim only inside probed_server_class, so this module loads in .venv too.
"""

from __future__ import annotations

import collections
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from sim_link import TICK, Link, command_fields, raise_thread_priority
from sim_probe import COMMAND


class _AbortErrors(threading.local):
    # _abort_with_error runs _engage_idle_hold inside it: the errors being latched, for motion_end.
    errors: list[str] | None = None


_ABORT = _AbortErrors()


class ProbedUdpSocket:
    """franka-sim's UDP socket with the probe and the faults in between.

    franka-sim keeps the object and compares it by identity (``udp_socket is self.udp_socket`` in
    ``_handle_commands``), polls ``fileno()`` (its receiver and its drain gate) and reads ``_closed``;
    the proxy is one object per session, so identity holds, and the descriptor it hands out is the one
    datagrams for franka-sim really arrive on:

    - without command delays, the socket's own: ``recvfrom`` skips a dropped datagram, takes the next
      one if it is already queued and otherwise raises BlockingIOError, which franka-sim's receiver
      treats as "nothing this time" (it never sees a wrong-size datagram, nor waits for one);
    - with command delays, one end of an AF_UNIX datagram socketpair: a pump thread takes the client's
      datagrams off the UDP socket and the delay line writes each into the pair when it is due, so
      franka-sim's poll (and its drain gate) see a command only once it has "arrived".
    """

    def __init__(self, raw: socket.socket, link: Link) -> None:
        self._raw = raw
        self._link = link
        self._pair: tuple[socket.socket, socket.socket] | None = None
        self._senders: collections.deque = collections.deque()
        self._closing = False
        if link.command_delays:
            self._pair = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
            threading.Thread(target=self._pump, name="fault-command-pump", daemon=True).start()

    # ---- what franka-sim uses
    @property
    def _closed(self) -> bool:
        return self._raw._closed

    def fileno(self) -> int:
        return self._pair[0].fileno() if self._pair is not None else self._raw.fileno()

    def sendto(self, data: bytes, address: Any) -> int:
        self._link.state_out(self._raw, data, address)
        return len(data)

    def recvfrom(self, bufsize: int, flags: int = 0) -> tuple[bytes, Any]:
        if self._pair is not None:
            data = self._pair[0].recv(bufsize, flags)
            address = self._senders.popleft()
        else:
            while True:
                data, address = self._raw.recvfrom(bufsize, flags)
                cause, _ = self._link.command_in(time.monotonic_ns(), data)
                if cause is None:
                    break
                # Skip it: the next one if it is queued already, else BlockingIOError ("nothing").
                flags |= socket.MSG_DONTWAIT
        if self._link.probe is not None:
            message_id, finished = command_fields(data)
            self._link.probe.command(time.monotonic_ns(), message_id, finished)
        return data, address

    def close(self) -> None:
        self._closing = True
        if self._pair is not None:
            for end in self._pair:
                end.close()
        self._raw.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    # ---- command delays
    def _pump(self) -> None:
        raise_thread_priority()
        poller = select.poll()
        poller.register(self._raw.fileno(), select.POLLIN)
        while not self._closing:
            try:
                if not poller.poll(50):
                    continue
                data, address = self._raw.recvfrom(65536, socket.MSG_DONTWAIT)
            except BlockingIOError:
                continue
            except (OSError, ValueError):
                return  # closed
            t_ns = time.monotonic_ns()
            cause, delay_ns = self._link.command_in(t_ns, data)
            if cause is None:
                self._link.delay_line.schedule(
                    COMMAND, t_ns + delay_ns, self._deliver(data, address, t_ns, delay_ns)
                )

    def _deliver(self, data: bytes, address: Any, wire_t_ns: int, delay_ns: int) -> Callable[[int], None]:
        def send(now_ns: int) -> None:
            message_id = command_fields(data)[0]
            cause = self._link.command_delivered(now_ns)
            if cause is not None:
                self._link.record(
                    "dropped", t_ns=now_ns, direction=COMMAND, message_id=message_id, cause=cause
                )
                return
            if self._closing:
                return
            self._senders.append(address)
            self._pair[1].send(data)
            self._link.record(
                "delayed", t_ns=now_ns, direction=COMMAND, message_id=message_id, wire_t_ns=wire_t_ns,
                planned_ns=delay_ns,
            )  # fmt: skip

        return send


def probed_server_class(base: type, link: Link) -> type:
    """A subclass of franka-sim's server whose UDP sockets are ProbedUdpSockets and whose Move, abort
    and motion-end paths report to the probe. franka-sim itself is not modified."""
    from franka_sim.comm_constraints import COMMUNICATION_CONSTRAINTS_VIOLATION_INDEX
    from franka_sim.franka_protocol import MoveCommand
    from franka_sim.limits.tables import ERROR_NAMES

    error_names = {
        **ERROR_NAMES,
        COMMUNICATION_CONSTRAINTS_VIOLATION_INDEX: "communication_constraints_violation",
    }
    end_reasons = {
        "motion finished": "finished",
        "preempted by a new Move": "preempted",
        "StopMove": "stopped",
    }

    class ProbedFrankaSimServer(base):
        _probe_motion = 0  # the motion a move_accepted opened and no motion_end closed yet

        # franka-sim assigns self.udp_socket (a new socket per session) and self.comm (a new tracker
        # per session) in several places; properties catch every assignment.
        @property
        def udp_socket(self) -> Any:
            return self.__dict__.get("_probed_udp_socket")

        @udp_socket.setter
        def udp_socket(self, sock: Any) -> None:
            if sock is not None and not isinstance(sock, ProbedUdpSocket):
                sock = ProbedUdpSocket(sock, link)
            self.__dict__["_probed_udp_socket"] = sock

        @property
        def comm(self) -> Any:
            return self.__dict__.get("_probed_comm")

        @comm.setter
        def comm(self, tracker: Any) -> None:
            if tracker is not None:
                self._watch(tracker)
            self.__dict__["_probed_comm"] = tracker

        def _watch(self, tracker: Any) -> None:
            tick, start_motion = tracker.tick, tracker.start_motion

            def probed_tick(published_id: int) -> Any:
                outcome = tick(published_id)
                TICK.outcome = outcome
                return outcome

            def probed_start_motion(motion_id: int = 0) -> None:
                # handle_move_command calls this under its motion lock right after it switched the
                # published modes to the Move's (a few µs earlier): from here on the robot expects a
                # command every cycle.
                link.record(
                    "move_accepted", motion=motion_id, command_id=self.current_motion_id,
                    last_state_id=self._last_published_message_id,
                )  # fmt: skip
                self._probe_motion = motion_id
                start_motion(motion_id)

            tracker.tick, tracker.start_motion = probed_tick, probed_start_motion

        def start_robot_state_transmission(self, client_address: str, client_udp_port: int) -> None:
            link.record("session_start", client=f"{client_address}:{client_udp_port}")
            super().start_robot_state_transmission(client_address, client_udp_port)

        def handle_move_command(self, client_socket: Any, header: Any, payload: bytes) -> None:
            try:
                move = MoveCommand.from_bytes(payload)
                modes = {
                    "controller_mode": move.controller_mode.name,
                    "motion_generator_mode": move.motion_generator_mode.name,
                }
            except (ValueError, struct.error):  # franka-sim answers a malformed Move itself
                modes = {}
            link.record("move_received", command_id=header.command_id, **modes)
            generation = self._motion_generation
            super().handle_move_command(client_socket, header, payload)
            if self._motion_generation == generation:
                link.record("move_refused", command_id=header.command_id)

        def _abort_with_error(self, error_index: Any, reason: str, motion_id: int = 0) -> None:
            indices = (error_index,) if isinstance(error_index, int) else tuple(error_index)
            _ABORT.errors = [error_names.get(i, f"error_{i}") for i in indices]
            try:
                super()._abort_with_error(error_index, reason, motion_id)
            finally:
                _ABORT.errors = None

        def _engage_idle_hold(self, reason: str, motion_id: int | None = None) -> None:
            motion = self._probe_motion
            if motion and (motion_id is None or motion_id == motion):
                self._probe_motion = 0
                errors = _ABORT.errors
                if errors:
                    kind = "aborted"
                elif reason.startswith(("client", "TCP")):
                    kind = "disconnected"
                else:
                    kind = end_reasons.get(reason, reason)
                link.record("motion_end", motion=motion, reason=kind, errors=errors or [], detail=reason)
            super()._engage_idle_hold(reason, motion_id)

    return ProbedFrankaSimServer
