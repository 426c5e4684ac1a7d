"""The fault language and the readers of the robot-side probe's JSON lines: standard library only, so that
.venv's tests and benchmarks import them (through sim_server, or directly) as well as the launcher in
.venv-sim. The probe's format is described in test/franka/README.md.
"""

from __future__ import annotations

import collections
import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

PROBE_FLUSH_S = 0.01  # the writer thread's period: a reader sees an event at most this much later


# ===================================================================================================
# The fault language (parsed in both venvs: the fixture checks a marker's spec before it starts a server)

STATE = "state"  # direction: franka-sim -> client
COMMAND = "command"  # direction: client -> franka-sim
DIRECTIONS = (STATE, COMMAND)

_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_DURATION = r"(\d+(?:\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s)"


def _duration_ns(text: str, what: str) -> int:
    match = re.fullmatch(_DURATION, text.strip())
    if match is None:
        raise ValueError(f"{what}: {text!r} is not a duration (a number with ns, us, ms or s)")
    return round(float(match.group(1)) * _UNITS_NS[match.group(2)])


@dataclass(frozen=True)
class DirectionFaults:
    """Faults of one direction of the UDP exchange."""

    delay_ns: int = 0  # mean added delay [ns]
    jitter_ns: int = 0  # the delay is uniform in [delay - jitter, delay + jitter], never below 0 [ns]
    loss: float = 0.0  # probability that a datagram is lost, independently per datagram
    burst_datagrams: int = 0  # consecutive datagrams lost once per burst period
    burst_period_ns: int = 0  # [ns]; the first burst starts one period after the first command

    @property
    def delays(self) -> bool:
        return self.delay_ns > 0 or self.jitter_ns > 0


@dataclass(frozen=True)
class FaultSpec:
    """A parsed --faults SPEC; times of the timed faults count from the first command datagram."""

    text: str = ""
    state: DirectionFaults = DirectionFaults()
    command: DirectionFaults = DirectionFaults()
    outages_ns: tuple[tuple[int, int], ...] = ()  # (start after the first command, length) [ns]
    dead_after_ns: int | None = None  # the link dies this long after the first command [ns]
    seed: int = 0

    def direction(self, name: str) -> DirectionFaults:
        return self.state if name == STATE else self.command


def parse_faults(text: str) -> FaultSpec:
    """Parse the fault language: items separated by commas or spaces.

    - ``delay=0.3ms±0.2ms`` (also ``+-``): every datagram, both ways, delayed by a uniform
      draw from [0.1, 0.5] ms; order is kept per direction. ``state_delay=`` / ``command_delay=``:
      one direction.
    - ``loss=1%``: every datagram, both ways, lost with probability 1 %, independently (seeded, one
      random stream per direction). ``state_loss=`` / ``command_loss=``: one direction.
    - ``burst=5states@1s`` (or ``commands``): 5 consecutive datagrams of that direction lost, once a
      second, the first burst 1 s after the first command.
    - ``outage=30ms@2s``: nothing passes either way for 30 ms, starting 2 s after the first command
      (repeatable).
    - ``dead@2s``: from 2 s after the first command nothing passes either way, on every session,
      until the launcher gets SIGUSR1 (the link is repaired).
    - ``seed=N``: the seed of the random draws (default 0).

    Raises ValueError naming the item it does not understand.
    """
    spec: dict[str, Any] = {"text": text.strip(), "outages_ns": [], "dead_after_ns": None, "seed": 0}
    per_direction: dict[str, dict[str, Any]] = {STATE: {}, COMMAND: {}}
    for item in filter(None, re.split(r"[,\s]+", text.strip())):
        key, sep, value = item.partition("=")
        if item.startswith("dead@"):
            spec["dead_after_ns"] = _duration_ns(item[len("dead@") :], item)
            continue
        if not sep:
            raise ValueError(f"fault {item!r}: expected key=value or dead@<time>")
        targets = {"state_": (STATE,), "command_": (COMMAND,)}
        directions = DIRECTIONS
        for prefix, only in targets.items():
            if key.startswith(prefix):
                key, directions = key[len(prefix) :], only
        if key == "delay":
            mean, _, jitter = value.replace("+-", "±").partition("±")
            delay = {
                "delay_ns": _duration_ns(mean, item),
                "jitter_ns": _duration_ns(jitter, item) if jitter else 0,
            }
            for d in directions:
                per_direction[d].update(delay)
        elif key == "loss":
            match = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)%", value)
            if match is None or not 0.0 <= float(match.group(1)) <= 100.0:
                raise ValueError(f"fault {item!r}: loss is a percentage, e.g. loss=1%")
            for d in directions:
                per_direction[d]["loss"] = float(match.group(1)) / 100.0
        elif key == "burst" and directions == DIRECTIONS:
            match = re.fullmatch(r"(\d+)\s*(states|commands)@(.+)", value)
            if match is None or int(match.group(1)) < 1:
                raise ValueError(f"fault {item!r}: expected burst=<N>states@<period> or <N>commands@<period>")
            period_ns = _duration_ns(match.group(3), item)
            if period_ns <= 0:
                raise ValueError(f"fault {item!r}: the period must be positive")
            d = STATE if match.group(2) == "states" else COMMAND
            per_direction[d].update(burst_datagrams=int(match.group(1)), burst_period_ns=period_ns)
        elif key == "outage" and directions == DIRECTIONS:
            length, at, start = value.partition("@")
            if not at:
                raise ValueError(f"fault {item!r}: expected outage=<length>@<start>")
            spec["outages_ns"].append((_duration_ns(start, item), _duration_ns(length, item)))
        elif key == "seed" and directions == DIRECTIONS:
            if not re.fullmatch(r"\d+", value):
                raise ValueError(f"fault {item!r}: the seed is a non-negative integer")
            spec["seed"] = int(value)
        else:
            raise ValueError(f"fault {item!r}: unknown (delay, loss, burst, outage, dead@, seed)")
    spec["outages_ns"] = tuple(sorted(spec["outages_ns"]))
    return FaultSpec(
        state=DirectionFaults(**per_direction[STATE]),
        command=DirectionFaults(**per_direction[COMMAND]),
        **spec,
    )


# ===================================================================================================
# Reading a probe file (any venv)


@dataclass(frozen=True)
class ProbeEvent:
    """One line of a probe file; the fields an event does not have are None (``fields``: the whole line)."""

    t_ns: int
    event: str
    message_id: int | None = None
    motion_finished: bool | None = None
    direction: str | None = None
    cause: str | None = None
    motion: int | None = None
    lost: bool | None = None
    fields: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def read_probe(path: str | os.PathLike) -> list[ProbeEvent]:
    """The events of a probe file in time order (a line still being written is skipped)."""
    events = []
    with open(path) as lines:
        for line in lines:
            if not line.endswith("\n"):
                break
            record = json.loads(line)
            events.append(
                ProbeEvent(
                    t_ns=record["t_ns"],
                    event=record["event"],
                    message_id=record.get("message_id"),
                    motion_finished=record.get("motion_finished"),
                    direction=record.get("direction"),
                    cause=record.get("cause"),
                    motion=record.get("motion"),
                    lost=record.get("lost"),
                    fields=record,
                )
            )
    # Threads append in the order they stamp, nearly; a stable sort makes it exact.
    events.sort(key=lambda e: e.t_ns)
    return events


@dataclass(frozen=True)
class MoveStart:
    """One accepted Move and how long the robot waited for its first command."""

    motion: int
    accepted_t_ns: int
    first_command_t_ns: int | None  # None: no command of this motion reached franka-sim
    ms: float | None  # accepted -> first command [ms]
    states_between: int  # state datagrams franka-sim sent meanwhile (each one a 1 ms cycle it waited)


@dataclass(frozen=True)
class MotionCycles:
    """Communication cycles of one motion as the robot counts them."""

    motion: int
    first_command_t_ns: int | None
    end_t_ns: int | None
    end: str  # motion_end's reason ("finished", "aborted", ...), "open" when none was recorded
    errors: tuple[str, ...]
    cycles: int  # cycles counted (from the one the first command arrived in)
    lost: int  # of those, cycles no command answered in time, from message ids and arrival times
    max_consecutive_lost: int
    lost_franka_sim: int  # franka-sim's own verdicts (the states' "lost" flags)


def _motions(events: list[ProbeEvent]) -> Iterable[tuple[ProbeEvent, list[ProbeEvent]]]:
    """(move_accepted, the events until the next move_accepted) per motion."""
    starts = [i for i, e in enumerate(events) if e.event == "move_accepted"]
    for k, i in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else len(events)
        yield events[i], events[i + 1 : stop]


def _first_command(accepted: ProbeEvent, window: list[ProbeEvent]) -> int | None:
    """Index in `window` of the motion's first command: the first one answering a state published after
    the Move was accepted (a datagram still draining from the previous motion answers an older one)."""
    last_state_id = accepted.fields.get("last_state_id", -1)
    for i, e in enumerate(window):
        if e.event == "motion_end" and e.motion == accepted.motion:
            return None
        if e.event == "command" and e.message_id is not None and e.message_id > last_state_id:
            return i
    return None


def first_command_message_id(events: list[ProbeEvent]) -> int | None:
    """The id of the state the last motion's first command answered (the client's cycle 0 of that
    motion); None without a motion or a command."""
    motions = list(_motions(events))
    if not motions:
        return None
    accepted, window = motions[-1]
    i = _first_command(accepted, window)
    return None if i is None else window[i].message_id


def move_to_first_command_ms(events: list[ProbeEvent]) -> list[MoveStart]:
    """For each accepted Move: the time from franka-sim switching its state to Move (``move_accepted``)
    to the first command datagram of that motion reaching its receiver, and the states sent between."""
    out = []
    for accepted, window in _motions(events):
        i = _first_command(accepted, window)
        end = (
            i
            if i is not None
            else next(
                (k for k, e in enumerate(window) if e.event == "motion_end" and e.motion == accepted.motion),
                len(window),
            )
        )
        states = sum(1 for e in window[:end] if e.event == "state")
        t_first = window[i].t_ns if i is not None else None
        out.append(
            MoveStart(
                motion=accepted.motion or 0,
                accepted_t_ns=accepted.t_ns,
                first_command_t_ns=t_first,
                ms=None if t_first is None else (t_first - accepted.t_ns) / 1e6,
                states_between=states,
            )
        )
    return out


def publication_ratio(events: list[ProbeEvent]) -> float | None:
    """The states franka-sim sent (lost ones included) per millisecond of this machine's clock over the
    probe's span: 1.0 when it kept its 1 kHz cycle, less when this machine could not run it in real
    time (its cycles stretch; a real robot's never do). None with fewer than two states."""
    t_ns = [e.t_ns for e in events if e.event == "state"]
    if len(t_ns) < 2 or t_ns[-1] <= t_ns[0]:
        return None
    return (len(t_ns) - 1) / ((t_ns[-1] - t_ns[0]) / 1e6)


def commands_lost(events: list[ProbeEvent]) -> list[MotionCycles]:
    """Per motion, the 1 ms cycles after its first command that no command answered in time, counted
    the way franka-sim's CommConstraintTracker counts them (franka_sim/comm_constraints.py):

    - a cycle is the interval between two state datagrams franka-sim sends (cycle space, not wall
      clock: a server that sends late stretches the cycle);
    - the cycle opened by the state with id N is answered if a command echoing N arrives before the
      next state is sent; an older id (a late answer) or none at all is a lost cycle;
    - counting starts with the cycle in which the motion's first command arrives (franka-sim arms its
      tracker there: the states of the Move before any command are never charged) and ends with the
      last cycle a state closed before the motion ended; a communication_constraints_violation is
      raised by the tick that closes the 20th lost cycle, which is counted.

    ``lost_franka_sim`` counts franka-sim's own verdicts (the ``lost`` flags the probe copies from its
    tracker onto the next state) for comparison; the two differ only when a command and a tick race
    within microseconds.
    """
    out = []
    for accepted, window in _motions(events):
        end_i = next(
            (k for k, e in enumerate(window) if e.event == "motion_end" and e.motion == accepted.motion),
            None,
        )
        end = window[end_i] if end_i is not None else None
        errors = tuple(end.fields.get("errors", ())) if end else ()
        lost_franka_sim = sum(1 for e in window if e.event == "state" and e.lost)
        i = _first_command(accepted, window)
        end_t_ns = end.t_ns if end else None
        end_reason = end.fields["reason"] if end else "open"
        if i is None:
            out.append(
                MotionCycles(
                    accepted.motion or 0, None, end_t_ns, end_reason, errors, 0, 0, 0, lost_franka_sim
                )
            )
            continue
        t_first = window[i].t_ns
        t_end = end.t_ns if end else math.inf
        states = [e for e in window if e.event == "state"]
        answers: dict[int, list[int]] = collections.defaultdict(list)
        for e in window:
            if e.event == "command" and not e.motion_finished and e.message_id is not None:
                answers[e.message_id].append(e.t_ns)
        # The cycle in which the first command arrived: opened by the last state sent before it.
        k0 = max((k for k, s in enumerate(states) if s.t_ns <= t_first), default=None)
        if k0 is None:
            k0 = 0
        closing = [k for k in range(k0 + 1, len(states)) if states[k].t_ns < t_end]
        if end is not None and "communication_constraints_violation" in errors:
            after = next((k for k in range(k0 + 1, len(states)) if states[k].t_ns >= t_end), None)
            if after is not None:
                closing.append(after)
        lost = run = worst = 0
        for k in closing:
            opened, closed = states[k - 1], states[k]
            answered = any(opened.t_ns <= t < closed.t_ns for t in answers.get(opened.message_id, ()))
            if answered:
                run = 0
            else:
                lost += 1
                run += 1
                worst = max(worst, run)
        out.append(
            MotionCycles(
                motion=accepted.motion or 0,
                first_command_t_ns=t_first,
                end_t_ns=end_t_ns,
                end=end_reason,
                errors=errors,
                cycles=len(closing),
                lost=lost,
                max_consecutive_lost=worst,
                lost_franka_sim=lost_franka_sim,
            )
        )
    return out
