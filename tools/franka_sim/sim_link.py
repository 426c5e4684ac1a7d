"""The UDP link between franka-sim and its clients, inside the server process: the robot-side probe's
writer (Probe), the delay line that sends delayed datagrams on time (DelayLine) and the fault decisions
shared by every session (Link). The fault language and the probe's readers are in sim_probe.py; the
socket proxy and the server subclass that route franka-sim's datagrams through a Link are in
sim_probed_server.py. Standard library only.
"""

from __future__ import annotations

import collections
import contextlib
import heapq
import itertools
import json
import os
import random
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sim_probe import COMMAND, DIRECTIONS, PROBE_FLUSH_S, STATE, FaultSpec


class _TickOutcome(threading.local):
    # franka-sim's publish thread stores the outcome of the tick it just ran here; the state datagram it
    # sends next carries the verdict (ticks and sends happen on that one thread, in that order).
    outcome: Any = None


TICK = _TickOutcome()

COMMAND_SIZE = 8 + (7 * 8 + 7 * 8 + 16 * 8 + 6 * 8 + 2 * 8 + 1 + 1) + (7 * 8 + 1)  # RobotCommand
_MOTION_FINISHED_AT = 8 + 7 * 8 + 7 * 8 + 16 * 8 + 6 * 8 + 2 * 8 + 1  # motion_generation_finished
_TORQUE_FINISHED_AT = COMMAND_SIZE - 1  # torque_command_finished
# The delay line wakes early by the median lateness of its timed waits, tracked in steps of
# LEAD_STEP_NS (a running median) up to MAX_LEAD_NS: the late tail is the GIL and the CPU, not the timer.
LEAD_STEP_NS = 2_000
MAX_LEAD_NS = 200_000


def command_fields(data: bytes) -> tuple[int, bool]:
    """(message_id, finished) of a RobotCommand datagram; (-1, False) for one of another size."""
    if len(data) != COMMAND_SIZE:
        return -1, False
    return int.from_bytes(data[:8], "little"), bool(data[_MOTION_FINISHED_AT] or data[_TORQUE_FINISHED_AT])


def raise_thread_priority(by: int = 1) -> None:
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
        raise_thread_priority()
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
        outcome, TICK.outcome = TICK.outcome, None
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
                "dropped", t_ns=t_ns, direction=COMMAND, message_id=command_fields(data)[0], cause=cause
            )
        return cause, delay_ns

    def command_delivered(self, now_ns: int) -> str | None:
        """A delayed command is due: 'dead' / 'outage' if it must still be dropped."""
        with self._lock:
            return self._blocked_locked(now_ns)
