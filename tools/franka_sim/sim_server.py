"""Run franka-sim's FR3 server on one loopback address until SIGTERM (or SIGINT).

Runs in franka-sim's own venv, never in .venv:

    FR3_MJCF=test/franka/fr3_nomesh.xml .venv-sim/bin/python tools/franka_sim/sim_server.py --host 127.0.0.2

Started and stopped for tests and benchmarks by franka_sim_harness.py beside it (in .venv).

Prints ``READY <host>:<port> ...`` on stdout once the command port listens and the physics loop steps.
The stock ``franka-sim`` command binds 0.0.0.0; this launcher binds the one address it is given, which
must lie in 127.0.0.0/8. Motion-limit and communication-constraint enforcement are ON unless switched
off, so the server aborts a motion the way the real robot's controller does.

Network: loopback only, and checked. An audit hook refuses (with an exception, at once, instead of a
hang on a machine without internet) every socket address outside the loopback range, every name
lookup of a non-loopback host, any subprocess (robot_descriptions clones models with git) and the
import of robot_descriptions itself: franka-sim must take its model from FR3_MJCF.

Robot-side probe (``--probe PATH``): the server appends one JSON line per event to PATH, stamped with
``time.monotonic_ns()`` of this process (CLOCK_MONOTONIC, the clock a client on this machine reads with
``time.monotonic_ns()`` too). Events: ``probe_start``, ``session_start`` (a client's UDP session),
``move_received`` / ``move_accepted`` / ``move_refused``, ``command`` (every command datagram as
franka-sim's receiver takes it), ``state`` (every state datagram franka-sim sends, with franka-sim's
own verdict ``lost`` on the cycle that state's tick closed while a motion is counted), ``motion_end``,
and with faults ``dropped`` / ``delayed`` / ``fault``; ``probe_stop`` last. The format, and the
readers ``read_probe``, ``move_to_first_command_ms`` and ``commands_lost`` (standard library only, so
.venv's tests and benchmarks import them from here), are described in test/franka/README.md.

Fault injection (``--faults SPEC``): seeded loss, delay, bursts, outages and a dead link on the UDP
datagrams between franka-sim and the client (TCP passes untouched), in a proxy around franka-sim's UDP
socket; ``parse_faults`` documents the language. SIGUSR1 repairs a dead link.

The fault language and the probe's readers are in sim_probe.py (imported by both venvs, re-exported
here). This file holds what runs inside the server process, the network guard, the probe's writer, the
fault injector and the launcher, in one file of about 840 lines: they are one program, started as one
script by .venv-sim's interpreter, and the fault injector's proxy, its Link and the server subclass
that installs them only make sense read together.

Length: over 600 lines because it is one process's whole program (the launcher, the loopback guard, the
probe writer and the fault injector share its socket wrapper); it imports only franka-sim and the
standard library, so it cannot lean on the harness modules of .venv.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import heapq
import ipaddress
import itertools
import json
import logging
import os
import random
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sim_probe import (
    COMMAND,
    DIRECTIONS,
    PROBE_FLUSH_S,
    STATE,
    DirectionFaults,
    FaultSpec,
    MotionCycles,
    MoveStart,
    ProbeEvent,
    commands_lost,
    move_to_first_command_ms,
    parse_faults,
    publication_ratio,
    read_probe,
)

# Re-exported: tests and benchmarks import the probe's readers and the fault language from here.
__all__ = [
    "COMMAND",
    "DIRECTIONS",
    "PROBE_FLUSH_S",
    "STATE",
    "DirectionFaults",
    "FaultSpec",
    "MotionCycles",
    "MoveStart",
    "NetworkRefusedError",
    "ProbeEvent",
    "commands_lost",
    "main",
    "move_to_first_command_ms",
    "parse_faults",
    "publication_ratio",
    "read_probe",
]


T_START = time.monotonic()
DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "test" / "franka" / "fr3_nomesh.xml"
LOOPBACK = ipaddress.ip_network("127.0.0.0/8")


class NetworkRefusedError(RuntimeError):
    """Raised by the audit hook for anything that could leave the machine."""


def _is_loopback_host(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


_SOCKET_ADDRESS_EVENTS = {"socket.bind", "socket.connect", "socket.sendto"}
_PROCESS_EVENTS = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork"}


def _audit(event: str, args: tuple) -> None:
    """sys.addaudithook hook: keep this process on loopback and away from robot_descriptions."""
    if event in _SOCKET_ADDRESS_EVENTS:
        address = args[1]
        # AF_INET / AF_INET6 addresses are tuples whose first item is the host; AF_UNIX is a path.
        if isinstance(address, tuple) and not _is_loopback_host(address[0]):
            raise NetworkRefusedError(f"{event} to {address!r} refused: franka-sim stays on loopback")
    elif event == "socket.getaddrinfo":
        if args[0] is not None and not _is_loopback_host(args[0]):
            raise NetworkRefusedError(f"name lookup of {args[0]!r} refused: franka-sim stays on loopback")
    elif event == "import":
        if args[0] == "robot_descriptions" or args[0].startswith("robot_descriptions."):
            raise NetworkRefusedError(
                "import of robot_descriptions refused: it downloads models; set FR3_MJCF to a local MJCF"
            )
    elif event in _PROCESS_EVENTS:
        raise NetworkRefusedError(f"{event} refused: the franka-sim server starts no processes")


# ===================================================================================================
# The probe and the fault injector (run inside the server)


class _PerThread(threading.local):
    # franka-sim's publish thread stores the outcome of the tick it just ran here; the state datagram it
    # sends next carries the verdict (ticks and sends happen on that one thread, in that order).
    outcome: Any = None
    # _abort_with_error runs _engage_idle_hold inside it: the errors being latched, for motion_end.
    errors: list[str] | None = None


_TICK = _PerThread()
_ABORT = _PerThread()

_COMMAND_SIZE = 8 + (7 * 8 + 7 * 8 + 16 * 8 + 6 * 8 + 2 * 8 + 1 + 1) + (7 * 8 + 1)  # RobotCommand
_MOTION_FINISHED_AT = 8 + 7 * 8 + 7 * 8 + 16 * 8 + 6 * 8 + 2 * 8 + 1  # motion_generation_finished
_TORQUE_FINISHED_AT = _COMMAND_SIZE - 1  # torque_command_finished
# The delay line wakes early by the median lateness of its timed waits, tracked in steps of
# LEAD_STEP_NS (a running median) up to MAX_LEAD_NS: the late tail is the GIL and the CPU, not the timer.
LEAD_STEP_NS = 2_000
MAX_LEAD_NS = 200_000


def _command_fields(data: bytes) -> tuple[int, bool]:
    """(message_id, finished) of a RobotCommand datagram; (-1, False) for one of another size."""
    if len(data) != _COMMAND_SIZE:
        return -1, False
    return int.from_bytes(data[:8], "little"), bool(data[_MOTION_FINISHED_AT] or data[_TORQUE_FINISHED_AT])


def _raise_thread_priority(by: int = 1) -> None:
    """SCHED_FIFO one above the process's where the process runs at SCHED_FIFO (the harness starts it
    at 50): the delay line must wake on time, and it only ever sleeps or moves a datagram."""
    with contextlib.suppress(OSError):  # not allowed: the thread keeps the process's policy
        if os.sched_getscheduler(0) == os.SCHED_FIFO:
            priority = os.sched_getparam(0).sched_priority + by
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))


class Probe:
    """JSON lines to a file, written by a thread of its own every PROBE_FLUSH_S.

    The 1 kHz paths only append a tuple to a deque (no formatting, no I/O, no lock beyond the GIL's
    atomic append); the writer formats and writes in batches. ``t_ns`` is a moment the caller took, so
    what is stamped is when the datagram passed, not when the line was written.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: collections.deque = collections.deque()
        self._file = open(path, "a", buffering=1 << 16)  # noqa: SIM115 - closed in close()
        self._stop = threading.Event()
        self._records = 0
        self._writer_cpu_s = 0.0
        self._thread = threading.Thread(target=self._write_loop, name="probe-writer", daemon=True)
        self._thread.start()

    def state(self, t_ns: int, message_id: int, lost: bool | None) -> None:
        self._queue.append((t_ns, STATE, message_id, lost))

    def command(self, t_ns: int, message_id: int, finished: bool) -> None:
        self._queue.append((t_ns, COMMAND, message_id, finished))

    def record(self, t_ns: int, event: str, **fields: Any) -> None:
        self._queue.append((t_ns, event, fields, None))

    def _line(self, item: tuple) -> str:
        t_ns, event, a, b = item
        if event == STATE:
            verdict = "" if b is None else f',"lost":{"true" if b else "false"}'
            return f'{{"t_ns":{t_ns},"event":"state","message_id":{a}{verdict}}}\n'
        if event == COMMAND:
            return (
                f'{{"t_ns":{t_ns},"event":"command","message_id":{a},'
                f'"motion_finished":{"true" if b else "false"}}}\n'
            )
        return json.dumps({"t_ns": t_ns, "event": event, **a}, separators=(",", ":")) + "\n"

    def _drain(self) -> None:
        n = len(self._queue)
        if n:
            lines = [self._line(self._queue.popleft()) for _ in range(n)]
            self._file.write("".join(lines))
            self._file.flush()
            self._records += n

    def _write_loop(self) -> None:
        while not self._stop.wait(PROBE_FLUSH_S):
            t0 = time.thread_time()
            self._drain()
            self._writer_cpu_s += time.thread_time() - t0

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.record(
            time.monotonic_ns(), "probe_stop", records=self._records + len(self._queue) + 1,
            writer_cpu_s=round(self._writer_cpu_s, 6),
        )  # fmt: skip
        self._drain()
        self._file.close()


class DelayLine:
    """Sends datagrams at their due times, in due-time order, from one thread (SCHED_FIFO above the
    server's where allowed). Each direction keeps its order: a datagram is never due before the one
    ahead of it in its direction."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Callable[[int], None]]] = []
        self._sequence = itertools.count()
        self._last_due_ns: dict[str, int] = {}
        self._wake = threading.Condition()
        self._stop = False
        self._lead_ns = 0
        self._thread = threading.Thread(target=self._run, name="fault-delay-line", daemon=True)
        self._thread.start()

    def schedule(self, direction: str, due_ns: int, send: Callable[[int], None]) -> int:
        """Queue send(t_ns) for due_ns (later if the direction's previous datagram is due later);
        returns the due time used."""
        with self._wake:
            due_ns = max(due_ns, self._last_due_ns.get(direction, 0))
            self._last_due_ns[direction] = due_ns
            heapq.heappush(self._heap, (due_ns, next(self._sequence), send))
            self._wake.notify()
        return due_ns

    def _run(self) -> None:
        _raise_thread_priority()
        while True:
            with self._wake:
                while not self._stop:
                    if self._heap:
                        # Wake early by the median lateness of the timed waits so far, so that the
                        # datagrams leave on time at the median instead of ~50 µs late.
                        wait_ns = self._heap[0][0] - self._lead_ns - time.monotonic_ns()
                        if wait_ns <= 0:
                            break
                        woke = self._wake.wait(wait_ns * 1e-9)
                        if not woke and self._heap:
                            late_ns = time.monotonic_ns() - (self._heap[0][0] - self._lead_ns)
                            step = LEAD_STEP_NS if late_ns > self._lead_ns else -LEAD_STEP_NS
                            self._lead_ns = min(max(self._lead_ns + step, 0), MAX_LEAD_NS)
                    else:
                        self._wake.wait(0.1)
                if self._stop:
                    return
                _, _, send = heapq.heappop(self._heap)
            with contextlib.suppress(OSError):  # the session's socket closed while it was in flight
                send(time.monotonic_ns())

    def close(self) -> None:
        with self._wake:
            self._stop = True
            self._wake.notify()
        self._thread.join(timeout=2.0)


class Link:
    """The UDP link between franka-sim and its clients: the probe's records and the faults' decisions,
    shared by every session of this process (the timed faults count from the first command ever)."""

    def __init__(self, probe: Probe | None, faults: FaultSpec | None) -> None:
        self.probe = probe
        self.faults = faults or FaultSpec()
        self._lock = threading.Lock()
        seed = self.faults.seed
        # One stream per direction and purpose: a direction's losses do not depend on the other
        # direction's traffic, nor on whether delays are drawn too.
        self._loss_rng = {d: random.Random(f"{seed}/{d}/loss") for d in DIRECTIONS}
        self._delay_rng = {d: random.Random(f"{seed}/{d}/delay") for d in DIRECTIONS}
        self._anchor_ns: int | None = None
        self._dead = False
        self._repaired = False
        self._outages_announced: set[int] = set()
        self._burst_next_ns = {d: self.faults.direction(d).burst_period_ns for d in DIRECTIONS}
        self._burst_left = dict.fromkeys(DIRECTIONS, 0)
        # Probe only: the datagrams go straight through, no lock and no draws on the 1 kHz paths.
        self.faulty = faults is not None
        needs_line = any(self.faults.direction(d).delays for d in DIRECTIONS)
        self.delay_line = DelayLine() if needs_line else None
        self.command_delays = self.faults.command.delays

    # ------------------------------------------------------------------------------------ probe
    def record(self, event: str, t_ns: int | None = None, **fields: Any) -> None:
        if self.probe is not None:
            self.probe.record(time.monotonic_ns() if t_ns is None else t_ns, event, **fields)

    def close(self) -> None:
        if self.delay_line is not None:
            self.delay_line.close()
        if self.probe is not None:
            self.probe.close()

    # ------------------------------------------------------------------------------------ faults
    def repair(self) -> None:
        """The dead link works again (SIGUSR1), and stays up (a dead@ not reached yet never comes)."""
        with self._lock:
            was_dead = self._dead
            self._dead = False
            self._repaired = True
        self.record("fault", kind="repaired", was_dead=was_dead)

    def _blocked_locked(self, t_ns: int) -> str | None:
        """'dead' or 'outage' if nothing passes at t_ns, else None (announces each fault once)."""
        if self._dead:
            return "dead"
        if self._anchor_ns is None:
            return None
        elapsed = t_ns - self._anchor_ns
        dead_after = self.faults.dead_after_ns
        if dead_after is not None and not self._repaired and elapsed >= dead_after:
            self._dead = True
            self.record("fault", t_ns=self._anchor_ns + dead_after, kind="dead")
            return "dead"
        for k, (start, length) in enumerate(self.faults.outages_ns):
            if start <= elapsed < start + length:
                if k not in self._outages_announced:
                    self._outages_announced.add(k)
                    t0 = self._anchor_ns + start
                    self.record("fault", t_ns=t0, kind="outage", start_t_ns=t0, end_t_ns=t0 + length)
                return "outage"
        return None

    def _fate_locked(self, direction: str, t_ns: int) -> tuple[str | None, int]:
        """(why the datagram is lost or None, the delay to add [ns]) for a datagram entering at t_ns."""
        faults = self.faults.direction(direction)
        # Drawn for every datagram, first, so that the seeded sequences do not depend on the others.
        lost = faults.loss > 0.0 and self._loss_rng[direction].random() < faults.loss
        delay_ns = 0
        if faults.delays:
            low = max(0, faults.delay_ns - faults.jitter_ns)
            delay_ns = round(self._delay_rng[direction].uniform(low, faults.delay_ns + faults.jitter_ns))
        cause = self._blocked_locked(t_ns)
        if cause is None and faults.burst_datagrams and self._anchor_ns is not None:
            elapsed = t_ns - self._anchor_ns
            if elapsed >= self._burst_next_ns[direction]:
                period = faults.burst_period_ns
                start = self._burst_next_ns[direction]
                self._burst_next_ns[direction] += period * (1 + (elapsed - start) // period)
                self._burst_left[direction] = faults.burst_datagrams
                self.record(
                    "fault", t_ns=t_ns, kind="burst", direction=direction, datagrams=faults.burst_datagrams
                )
            if self._burst_left[direction] > 0:
                self._burst_left[direction] -= 1
                cause = "burst"
        if cause is None and lost:
            cause = "loss"
        return cause, delay_ns

    def _arm_locked(self, t_ns: int) -> None:
        if self._anchor_ns is None:
            self._anchor_ns = t_ns
            if not self.faults.text:
                return
            f = self.faults
            self.record(
                "fault", t_ns=t_ns, kind="armed", spec=f.text,
                dead_t_ns=None if f.dead_after_ns is None else t_ns + f.dead_after_ns,
                outages=[[t_ns + start, t_ns + start + length] for start, length in f.outages_ns],
            )  # fmt: skip

    # ------------------------------------------------------------------------------------ datagrams
    def state_out(self, raw: socket.socket, data: bytes, address: Any) -> None:
        """franka-sim sends a state: record it, then send it now, later or never."""
        t_ns = time.monotonic_ns()
        message_id = int.from_bytes(data[:8], "little")
        outcome, _TICK.outcome = _TICK.outcome, None
        if self.probe is not None:
            self.probe.state(
                t_ns, message_id, outcome.lost if outcome is not None and outcome.active else None
            )
        if not self.faulty:
            raw.sendto(data, address)
            return
        with self._lock:
            cause, delay_ns = self._fate_locked(STATE, t_ns)
        if cause is not None:
            self.record("dropped", t_ns=t_ns, direction=STATE, message_id=message_id, cause=cause)
            return
        if not self.faults.state.delays:
            raw.sendto(data, address)
            return

        def send(now_ns: int) -> None:
            with self._lock:
                cause = self._blocked_locked(now_ns)
            if cause is not None:
                self.record("dropped", t_ns=now_ns, direction=STATE, message_id=message_id, cause=cause)
                return
            raw.sendto(data, address)
            self.record(
                "delayed",
                t_ns=now_ns,
                direction=STATE,
                message_id=message_id,
                wire_t_ns=t_ns,
                planned_ns=delay_ns,
            )

        self.delay_line.schedule(STATE, t_ns + delay_ns, send)

    def command_in(self, t_ns: int, data: bytes) -> tuple[str | None, int]:
        """A command datagram came off the wire at t_ns: (why it is lost or None, delay [ns])."""
        if not self.faulty:
            return None, 0
        with self._lock:
            self._arm_locked(t_ns)
            cause, delay_ns = self._fate_locked(COMMAND, t_ns)
        if cause is not None:
            self.record(
                "dropped", t_ns=t_ns, direction=COMMAND, message_id=_command_fields(data)[0], cause=cause
            )
        return cause, delay_ns

    def command_delivered(self, now_ns: int) -> str | None:
        """A delayed command is due: 'dead' / 'outage' if it must still be dropped."""
        with self._lock:
            return self._blocked_locked(now_ns)


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
            message_id, finished = _command_fields(data)
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
        _raise_thread_priority()
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
            message_id = _command_fields(data)[0]
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
                _TICK.outcome = outcome
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


# ===================================================================================================
# The launcher


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", required=True, help="IPv4 address in 127.0.0.0/8 to bind")
    p.add_argument("--port", type=int, default=1337, help="command port (libfranka always uses 1337)")
    p.add_argument(
        "--no-enforce-comm-constraints",
        dest="enforce_comm_constraints",
        action="store_false",
        help="do not abort a motion after 20 lost command cycles",
    )
    p.add_argument(
        "--no-enforce-motion-limits",
        dest="enforce_motion_limits",
        action="store_false",
        help="do not abort a motion that breaks the FR3 position/velocity/acceleration/jerk limits",
    )
    p.add_argument(
        "--parent-pid",
        type=int,
        help="exit (SIGTERM) when this process, the one that started the server, dies",
    )
    p.add_argument("--probe", type=Path, help="append the robot-side probe's JSON lines to this file")
    p.add_argument("--faults", default="", help="fault injection on the UDP link (see parse_faults)")
    args = p.parse_args(argv)
    try:
        host = ipaddress.ip_address(args.host)
    except ValueError:
        p.error(f"--host {args.host!r}: give a literal IPv4 address in {LOOPBACK}")
    if host not in LOOPBACK:  # not an `assert`: this check must survive python -O
        p.error(f"--host {args.host} is not in {LOOPBACK}: the server binds loopback only")
    try:
        args.fault_spec = parse_faults(args.faults) if args.faults.strip() else None
    except ValueError as exc:
        p.error(f"--faults: {exc}")
    return args


def _die_with_parent(parent_pid: int) -> None:
    """SIGTERM this process when its parent dies (a pytest killed with SIGKILL leaves no server)."""
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        sys.exit(f"sim_server: parent {parent_pid} is gone")


class _QuietIdleLoop(logging.Filter):
    """Drop the two lines franka-sim's accept loop logs every second while no client is connected."""

    IDLE = ("Robot state initialized", "Server ready for new client connection...")

    def __init__(self):
        super().__init__()
        self.seen = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.IDLE:
            if message in self.seen:
                return False
            self.seen.add(message)
        return True


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.parent_pid is not None:
        _die_with_parent(args.parent_pid)
    model = Path(os.environ.setdefault("FR3_MJCF", str(DEFAULT_MODEL)))
    # Headless: without this, `import mujoco` loads GLFW, whose loader runs a subprocess.
    os.environ["MUJOCO_GL"] = "disable"
    if not model.is_file():
        print(f"sim_server: FR3_MJCF={model} is not a file", file=sys.stderr, flush=True)
        return 2
    sys.addaudithook(_audit)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    logging.getLogger().handlers[0].addFilter(_QuietIdleLoop())
    print(
        f"sim_server: pid {os.getpid()} host {args.host}:{args.port} model {model} "
        f"enforce_comm_constraints={args.enforce_comm_constraints} "
        f"enforce_motion_limits={args.enforce_motion_limits} "
        f"probe={args.probe} faults={args.faults.strip()!r}",
        flush=True,
    )

    from franka_sim import FrankaSimServer

    link = None
    server_class = FrankaSimServer
    if args.probe is not None or args.fault_spec is not None:
        probe = Probe(args.probe) if args.probe is not None else None
        link = Link(probe, args.fault_spec)
        link.record("probe_start", pid=os.getpid(), faults=args.faults.strip(), seed=link.faults.seed)
        server_class = probed_server_class(FrankaSimServer, link)
        # SIGUSR1: the link is repaired (a dead@ fault ends); the fixture's restore_link() sends it.
        signal.signal(signal.SIGUSR1, lambda _signum, _frame: link.repair())

    server = server_class(
        host=args.host,
        port=args.port,
        enable_vis=False,
        enable_gripper=False,
        physics="mujoco",
        enforce_comm_constraints=args.enforce_comm_constraints,
        enforce_motion_limits=args.enforce_motion_limits,
    )

    stop = threading.Event()

    def announce_ready() -> None:
        # start() binds the command port, compiles the model, starts the accept thread and then runs
        # the physics loop in this process's main thread; once that loop runs, clients can connect.
        while not stop.is_set():
            sim = server.physics_sim
            if getattr(sim, "running", False) and server.server_socket is not None:
                print(
                    f"READY {args.host}:{args.port} after {time.monotonic() - T_START:.2f} s "
                    f"(mujoco {sim.model.nv} dofs)",
                    flush=True,
                )
                return
            time.sleep(0.01)

    def on_signal(signum, _frame) -> None:
        # The physics loop checks this flag every step; start() then returns in the main thread.
        print(f"sim_server: {signal.Signals(signum).name}, stopping", flush=True)
        stop.set()
        server.physics_sim.running = False

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    threading.Thread(target=announce_ready, name="announce_ready", daemon=True).start()
    try:
        server.start()
    finally:
        stop.set()
        server.stop()
        if link is not None:
            link.close()
    print("sim_server: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
