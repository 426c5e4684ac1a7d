"""The Franka Hand over libfranka's gripper protocol (``franka_protocol``), without pylibfranka.

One TCP connection to port 1338 on the robot's address carries the commands (written with sendall
under a small lock, so a call returns as soon as the bytes are out) and their responses; the hand
broadcasts its state over UDP to the port the Connect named. A reader thread waits on both sockets
with select (no lock held while it waits) and reports to the Gripper: every UDP state, every
response of a command it issued (by command_id; the result goes out with a state that shows the
command done, so that its width is the one after the command: the answer can overtake a datagram
sampled before it), and a lost link.

Preemption as libfranka does it: a new command while one runs sends Stop first, then the new one;
the running one then answers kAborted (the Gripper has already ended its handle PREEMPTED).
A lost link (TCP closed or reset, a malformed stream, or no UDP state for STATE_TIMEOUT_S) ends every
open command CONNECTION_LOST; the arm's own connection is apart and untouched. The next command after
Gripper.close() connects again.
"""

from __future__ import annotations

import math
import select
import socket
import threading
import time
from typing import Any

from jtac_py.gripper import franka_protocol as fp
from jtac_py.gripper.types import (
    FRANKA_HAND,
    GripperResultCode,
    GripperState,
    HandLimits,
    missed_band_message,
)

__all__ = ["CONNECT_TIMEOUT_S", "STATE_TIMEOUT_S", "FrankaHand"]

Code = GripperResultCode

#: Longest wait for the hand's TCP connection and its Connect response [s].
CONNECT_TIMEOUT_S = 2.0
#: No UDP state for this long: the link is lost [s] (the hand sends ~60 Hz on franka-sim).
STATE_TIMEOUT_S = 1.0
#: How long the reader waits in select before it looks at the clock and the stop flag [s].
_SELECT_S = 0.05
#: How long a write may take before the link counts as lost [s].
_SEND_TIMEOUT_S = 1.0
#: A move answered kSuccess whose fingers stopped farther than this from its width was blocked [m]
#: (franka-sim's hand answers kSuccess for a move that an object stopped; the default grasp band).
MOVE_TOLERANCE_M = 0.005
#: A result waits for the first state that shows its command done, at least this many states after
#: its answer: a datagram sampled before the command can arrive after the answer (franka-sim: a move's
#: answer and then a state with the old width, 2 ms later) ...
STATES_AFTER_ANSWER = 3
#: ... and for as long as this after the answer [s] (on the state's reception clock): franka-sim's
#: gripper server answers from its own timing while its physics, slowed by a loaded host, still shows
#: the fingers on the way for tenths of a second. A real hand answers once the fingers stopped.
SETTLE_AFTER_ANSWER_S = 1.0

_STATUS_MESSAGES = {
    fp.Status.FAIL: "the hand failed the command (kFail)",
    fp.Status.ABORTED: "aborted by a newer command (kAborted)",
}


class FrankaHand:
    """The Franka Hand at `ip` (libfranka's gripper protocol on port).

    limits: the hand's (FRANKA_HAND); state_timeout_s: UDP silence that counts as a lost link [s]."""

    needs_polling = False
    opens_at_once = False

    def __init__(
        self,
        ip: str,
        *,
        port: int = fp.COMMAND_PORT,
        limits: HandLimits = FRANKA_HAND,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        state_timeout_s: float = STATE_TIMEOUT_S,
    ) -> None:
        self.ip = ip
        self.port = port
        self.limits = limits
        self._connect_timeout_s = connect_timeout_s
        self._state_timeout_s = state_timeout_s
        self._gripper: Any = None
        self._tcp: socket.socket | None = None
        self._udp: socket.socket | None = None
        self._send_lock = threading.Lock()  # the command ids and the TCP writes
        self._next_id = 1
        self._pending: dict[int, tuple[str, dict[str, float]]] = {}  # id -> command, values
        self._own_stops: set[int] = set()  # the Stops sent before a new command: no handle waits
        # Answered commands whose result waits for a state after the command (the answer can overtake
        # the datagrams sampled before it): [id, command, values, status, states seen since].
        self._answered: list[list[Any]] = []
        self._lost: str | None = None
        self._latest: tuple[fp.StateDatagram, float] | None = None  # state, received at [gripper clock]
        self._reader: threading.Thread | None = None
        self._closing = threading.Event()

    # ------------------------------------------------------------------------------------ backend
    def open(self, gripper: Any) -> None:
        """Connects (ConnectionError naming the address within connect_timeout_s when the hand does
        not answer or speaks another version) and starts the reader thread."""
        self._gripper = gripper
        self._lost, self._latest = None, None
        self._pending.clear()
        self._own_stops.clear()
        self._answered.clear()
        try:
            self._connect()
        except BaseException:
            self._close_sockets()
            raise
        self._closing.clear()
        self._reader = threading.Thread(target=self._read, name="jtac::gripper", daemon=True)
        self._reader.start()

    def issue(self, command: str, values: dict[str, float]) -> int:
        with self._send_lock:
            if self._lost is not None or self._tcp is None:
                closed = f"the Franka Hand at {self.ip} is not connected: Gripper.open() connects"
                raise ConnectionError(self._lost or closed)
            running = any(name != "stop" for name, _ in self._pending.values())
            if running and command != "stop":
                stop_id = self._take_id()
                self._own_stops.add(stop_id)
                self._send(fp.stop_request(stop_id))
            command_id = self._take_id()
            self._pending[command_id] = (command, values)
            self._send(_request(command, command_id, values))
            return command_id

    def state(self) -> GripperState:
        latest, gripper = self._latest, self._gripper
        now_s = gripper.now() if gripper is not None else time.monotonic()
        if latest is None:
            return _state(None, math.nan, now_s, None)
        datagram, received_s = latest
        return _state(datagram, received_s, now_s, self._running_command())

    def poll(self) -> None:
        """Nothing: the reader thread reports."""

    def close(self) -> None:
        self._closing.set()
        reader, self._reader = self._reader, None
        if reader is not None and reader is not threading.current_thread():
            reader.join()
        self._close_sockets()
        self._gripper = None

    # ------------------------------------------------------------------------------------ connect
    def _connect(self) -> None:
        where = f"the Franka Hand at {self.ip}:{self.port}"
        self._udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._udp.bind(("", 0))
        try:
            self._tcp = socket.create_connection((self.ip, self.port), timeout=self._connect_timeout_s)
        except OSError as error:
            raise ConnectionError(f"{where} does not answer: {error}") from error
        self._tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        udp_port = self._udp.getsockname()[1]
        try:
            self._tcp.sendall(fp.connect_request(0, udp_port))
            response = self._connect_response()
        except (OSError, fp.ProtocolError) as error:
            raise ConnectionError(f"{where}: the Connect failed: {error}") from error
        if response.status != fp.ConnectStatus.SUCCESS:
            raise ConnectionError(
                f"{where} refused the Connect: server version {response.version}, jtac speaks {fp.VERSION}"
            )
        self._tcp.settimeout(_SEND_TIMEOUT_S)

    def _connect_response(self) -> fp.Response:
        reader = fp.ResponseReader()
        deadline = time.monotonic() + self._connect_timeout_s
        while True:
            left_s = deadline - time.monotonic()
            if left_s <= 0:
                raise OSError(f"no Connect response within {self._connect_timeout_s} s")
            self._tcp.settimeout(left_s)
            try:
                data = self._tcp.recv(4096)
            except TimeoutError:
                raise OSError(f"no Connect response within {self._connect_timeout_s} s") from None
            if not data:
                raise OSError("the hand closed the connection")
            responses = reader.feed(data)
            if responses:
                return responses[0]

    # ------------------------------------------------------------------------------------ reader
    def _read(self) -> None:
        """The reader thread: UDP states and TCP responses until close() or a lost link."""
        responses = fp.ResponseReader()
        last_state_s = time.monotonic()
        while not self._closing.is_set():
            try:
                readable, _, _ = select.select([self._tcp, self._udp], [], [], _SELECT_S)
                if self._udp in readable:
                    self._take_state(self._udp.recv(64))
                    last_state_s = time.monotonic()
                if self._tcp in readable:
                    data = self._tcp.recv(4096)
                    if not data:
                        raise ConnectionError("the hand closed the TCP connection")
                    for response in responses.feed(data):
                        self._take_response(response)
            except (OSError, fp.ProtocolError) as error:  # ConnectionError is an OSError
                self._lose(f"the link to the Franka Hand at {self.ip} is lost: {error}")
                return
            if time.monotonic() - last_state_s > self._state_timeout_s:
                silent = f"no state for {self._state_timeout_s:g} s"
                self._lose(f"the link to the Franka Hand at {self.ip} is lost: {silent}")
                return

    def _take_state(self, datagram: bytes) -> None:
        try:
            state = fp.parse_state(datagram)
        except fp.ProtocolError:
            return  # a stray datagram on our port: not the hand's
        gripper = self._gripper
        received_s = gripper.now() if gripper is not None else time.monotonic()
        self._latest = (state, received_s)
        if gripper is None:
            return
        gripper._on_state(_state(state, received_s, received_s, self._running_command()))
        waiting = []
        for entry in self._answered:
            command_id, command, values, status, seen, answered_s = entry
            entry[4] = seen = seen + 1
            settling = seen < STATES_AFTER_ANSWER or received_s - answered_s < SETTLE_AFTER_ANSWER_S
            if settling and not _shows(command, values, status, state):
                waiting.append(entry)
                continue
            code, message = _outcome(command, values, status, state.width_m)
            gripper._on_end(command_id, code, message, state.width_m, received_s)
        self._answered = waiting

    def _take_response(self, response: fp.Response) -> None:
        with self._send_lock:
            if response.command_id in self._own_stops:
                self._own_stops.discard(response.command_id)
                return
            entry = self._pending.pop(response.command_id, None)
        if entry is not None:  # the result follows with a state (the reader's own list)
            gripper = self._gripper
            answered_s = gripper.now() if gripper is not None else time.monotonic()
            self._answered.append([response.command_id, *entry, fp.Status(response.status), 0, answered_s])

    def _lose(self, message: str) -> None:
        with self._send_lock:
            self._lost = message
            self._pending.clear()
            self._own_stops.clear()
            self._answered.clear()
        gripper = self._gripper
        if gripper is not None:
            gripper._on_lost(message)

    # ------------------------------------------------------------------------------------ helpers
    def _take_id(self) -> int:
        command_id, self._next_id = self._next_id, self._next_id + 1
        return command_id

    def _send(self, message: bytes) -> None:
        """Writes under the send lock; a failed write is a lost link (ConnectionError)."""
        try:
            self._tcp.sendall(message)  # type: ignore[union-attr]
        except OSError as error:
            self._lost = f"the link to the Franka Hand at {self.ip} is lost: {error}"
            raise ConnectionError(self._lost) from error

    def _running_command(self) -> str | None:
        commands = [name for name, _ in list(self._pending.values()) if name != "stop"]
        return commands[-1] if commands else None

    def _close_sockets(self) -> None:
        for sock in (self._tcp, self._udp):
            if sock is not None:
                sock.close()
        self._tcp = self._udp = None


def _request(command: str, command_id: int, values: dict[str, float]) -> bytes:
    if command == "move":
        return fp.move_request(command_id, values["width_m"], values["speed_m_s"])
    if command == "grasp":
        return fp.grasp_request(
            command_id,
            values["width_m"],
            values["epsilon_inner_m"],
            values["epsilon_outer_m"],
            values["speed_m_s"],
            values["force_n"],
        )
    if command == "home":
        return fp.homing_request(command_id)
    return fp.stop_request(command_id)


def _shows(command: str, values: dict[str, float], status: fp.Status, state: fp.StateDatagram) -> bool:
    """Whether a state shows the answered command done: a successful move at its width, a successful
    grasp holding (the grasp flag, or a width within its band); anything else at once."""
    if status is not fp.Status.SUCCESS:
        return True
    if command == "move":
        return abs(state.width_m - values["width_m"]) <= MOVE_TOLERANCE_M
    if command == "grasp":
        low_m = values["width_m"] - values["epsilon_inner_m"]
        high_m = values["width_m"] + values["epsilon_outer_m"]
        return state.is_grasped or low_m <= state.width_m <= high_m
    return True


def _outcome(command: str, values: dict[str, float], status: fp.Status, width_m: float) -> tuple[Code, str]:
    """A response's code and message: kUnsuccessful is NOT_GRASPED for a grasp, BLOCKED otherwise;
    a move that succeeded short of its width (by more than MOVE_TOLERANCE_M) is BLOCKED too."""
    if (
        status is fp.Status.SUCCESS
        and command == "move"
        and abs(width_m - values["width_m"]) > MOVE_TOLERANCE_M
    ):
        return Code.BLOCKED, (
            f"the hand answered kSuccess, but the fingers stopped at {width_m * 1e3:.1f} mm, short of "
            f"{values['width_m'] * 1e3:.1f} mm"
        )
    if status is fp.Status.SUCCESS:
        return Code.SUCCEEDED, ""
    if status is fp.Status.ABORTED:
        return Code.PREEMPTED, _STATUS_MESSAGES[status]
    if status is fp.Status.FAIL:
        return Code.FAILED, f"{command}: {_STATUS_MESSAGES[status]}"
    if command == "grasp":
        return Code.NOT_GRASPED, f"kUnsuccessful: {missed_band_message(values, width_m)}"
    return Code.BLOCKED, f"kUnsuccessful: the fingers stopped at {width_m * 1e3:.1f} mm"


def _state(
    datagram: fp.StateDatagram | None, time_s: float, now_s: float, command: str | None
) -> GripperState:
    if datagram is None:
        nan = math.nan
        return GripperState(nan, nan, False, False, nan, command, None, nan, nan)
    return GripperState(
        width_m=datagram.width_m,
        max_width_m=datagram.max_width_m,
        is_grasped=datagram.is_grasped,
        moving=command is not None,  # the UDP state has no motion flag: a command runs
        temperature_c=float(datagram.temperature_c),
        command=command,
        last_error=None,
        time_s=time_s,
        age_s=max(0.0, now_s - time_s),
    )
