"""Fixtures that run franka-sim (the libfranka wire protocol over MuJoCo) on a loopback address.

franka-sim lives in its own venv, `.venv-sim` (scripts/setup_franka_sim.sh); these tests run in .venv and
talk to it over TCP 1337 + UDP like to a real FR3, through pylibfranka.

- `franka_sim_pool` (session): starts one server per enforcement setting on first use, each on a
  loopback address of this pytest session's own (127.<10+k>.<pid-derived>.<pid-derived>; libfranka's
  port is fixed at 1337, so parallel sessions need different addresses), and stops them at the end.
- `franka_sim`: the server for the requesting test, enforcement ON (communication constraints and
  motion limits: the server aborts a motion the way the robot's controller does). A test can switch
  either off with `@pytest.mark.franka_sim(enforce_comm_constraints=False, enforce_motion_limits=False)`.
  Has `.ip`, `.port`, `.log_path`, `.startup_s`, `.enforce_comm_constraints`, `.enforce_motion_limits`.
- `franka_robot`: a `pylibfranka.Robot(ip, RealtimeConfig.kIgnore)` connected to `franka_sim`,
  recovered from any reflex (`automatic_error_recovery`) before and after the test.
- `@pytest.mark.franka_sim(probe=True)` and/or `faults="loss=1% seed=3"` give the test a server of its
  own, started for it and stopped after it, with the robot-side probe (`franka_sim.probe_path`,
  `franka_sim.probe_events()`; helpers `move_to_first_command_ms` and `commands_lost` in sim_server)
  and/or the fault injector on its UDP link (`franka_sim.restore_link()` repairs a `dead@` link).

A failing test that used the server gets the tail of the server's log in its report; the whole log
stays in pytest's tmp directory (`franka_sim.log_path`).
"""

from __future__ import annotations

import contextlib
import faulthandler
import ipaddress
import itertools
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sim_server import PROBE_FLUSH_S, ProbeEvent, parse_faults, publication_ratio, read_probe

ROOT = Path(__file__).resolve().parents[2]
VENV_SIM = Path(os.environ.get("JTAC_VENV_SIM", ROOT / ".venv-sim"))
SIM_PYTHON = VENV_SIM / "bin" / "python"
SIM_SERVER = Path(__file__).resolve().parent / "sim_server.py"
MODEL = Path(__file__).resolve().parent / "fr3_nomesh.xml"
FCI_PORT = 1337  # libfranka connects to this port, always
READY_TIMEOUT_S = 30.0
# franka-sim stands for the robot's controller, which never shares a CPU with the client: it runs at
# SCHED_FIFO 50 where that is allowed (below jtac's hardware and controller threads, 80 / 70, as in
# bench_franka_sim.py), so that a test's own load (a GIL-holding thread) cannot starve its command
# receiver into communication_constraints_violation. Refused: normal priority and one warning.
SERVER_FIFO_PRIORITY = 50
STOP_TIMEOUT_S = 10.0
# pylibfranka holds the GIL and libfranka waits without a timeout when the server is busy with another
# client: a connect that hangs this long dumps every thread's stack and ends pytest, instead of hanging
# CI. Normal connects take a few ms.
CONNECT_WATCHDOG_S = 60.0
LOG_TAIL_LINES = 60
MARKER = "franka_sim"
_LOG_NUMBERS = itertools.count(1)
# The pool's servers take address slots 0-3 (one per enforcement setting); a test's own server (probe
# or faults) takes one of the next eight in turn, so that a just-stopped server's TIME_WAIT
# connections on 1337 never make the next one move.
_DEDICATED_SLOTS = itertools.cycle(range(4, 12))


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{MARKER}(enforce_comm_constraints=True, enforce_motion_limits=True, probe=False, faults=''): talks "
        "to franka-sim (scripts/setup_franka_sim.sh); the keyword arguments switch the server's enforcement "
        "for the test; probe=True or faults='...' give the test a server of its own with the robot-side "
        "probe and/or the fault injector on its UDP link",
    )


# ---------------------------------------------------------------------------------------------------
# The server process


def _established_to(ip: str, port: int) -> int:
    """TCP connections to ip:port in state ESTABLISHED, from /proc/net/tcp (the kernel's word)."""
    want = f"{int(ipaddress.IPv4Address(ip)).to_bytes(4, 'big')[::-1].hex().upper()}:{port:04X}"
    count = 0
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            fields = line.split()
            # local_address, rem_address, st (01 = ESTABLISHED); the server's side of the connection
            # has the listening address as its local address.
            if fields[1] == want and fields[3] == "01":
                count += 1
    return count


def _port_free(ip: str, port: int) -> bool:
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind((ip, port))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _candidate_ips(slot: int):
    """Loopback addresses for server `slot` of this pytest process: 127.<10+slot>.<hi>.<lo> from the pid.

    Never 127.0.0.1 (a developer's own franka-sim or robot stand-in listens there); the next addresses
    are fallbacks for a pid-derived address that another process already uses.
    """
    pid = os.getpid()
    for attempt in range(8):
        n = pid + attempt * 7919
        yield f"127.{10 + slot + 16 * attempt}.{(n // 254) % 256}.{n % 254 + 1}"


@dataclass
class FrankaSim:
    """One running franka-sim server."""

    ip: str
    port: int
    enforce_comm_constraints: bool
    enforce_motion_limits: bool
    log_path: Path
    process: subprocess.Popen = field(repr=False)
    startup_s: float = 0.0
    restarts: int = 0
    probe_path: Path | None = None  # the robot-side probe's JSON lines (probe=True)
    faults: str = ""  # the fault spec on the server's UDP link (sim_server.parse_faults)

    def probe_events(self) -> list[ProbeEvent]:
        """The probe's events so far, in time order (after the writer's next flush)."""
        if self.probe_path is None:
            raise RuntimeError(f"franka-sim {self.ip} runs without the probe: mark the test probe=True")
        time.sleep(3 * PROBE_FLUSH_S)
        return read_probe(self.probe_path)

    def restore_link(self) -> None:
        """Repair a dead@ link (SIGUSR1 to the launcher): datagrams pass again, on every session."""
        self.process.send_signal(signal.SIGUSR1)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError as exc:
            return f"(no log: {exc})"
        return "\n".join(text.splitlines()[-lines:])

    def clients(self) -> int:
        """How many TCP clients are connected to the server right now."""
        return _established_to(self.ip, self.port)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _server_to_fifo() -> None:
    """In the server's child process before exec: SCHED_FIFO, inherited by every thread it starts."""
    with contextlib.suppress(OSError):  # no rtprio: the parent sees the policy and warns
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(SERVER_FIFO_PRIORITY))


def _start_server(
    log_dir: Path, slot: int, comm: bool, motion: bool, probe: bool = False, faults: str = ""
) -> FrankaSim:
    flags = [] if comm else ["--no-enforce-comm-constraints"]
    flags += [] if motion else ["--no-enforce-motion-limits"]
    number = next(_LOG_NUMBERS)
    probe_path = log_dir / f"franka_sim_{number}_probe.jsonl" if probe else None
    flags += ["--probe", str(probe_path)] if probe_path else []
    flags += ["--faults", faults] if faults else []
    env = dict(os.environ, FR3_MJCF=str(MODEL), PYTHONUNBUFFERED="1")
    # The launcher takes enforcement from its flags; franka-sim's own switches must not override them.
    for name in ("FRANKA_SIM_ENFORCE_COMM_CONSTRAINTS", "FRANKA_SIM_ENFORCE_MOTION_LIMITS", "PYTHONPATH"):
        env.pop(name, None)
    failures = []
    for ip in _candidate_ips(slot):
        if not _port_free(ip, FCI_PORT):
            failures.append(f"{ip}:{FCI_PORT} in use")
            continue
        log_path = log_dir / f"franka_sim_{number}_{ip}.log"
        cmd = [str(SIM_PYTHON), str(SIM_SERVER), "--host", ip, "--parent-pid", str(os.getpid()), *flags]
        t0 = time.monotonic()
        with open(log_path, "wb") as log:
            # Own session: a Ctrl-C aimed at pytest reaches the server only through the fixture's
            # SIGTERM; --parent-pid makes it exit with pytest even if pytest is killed.
            process = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                start_new_session=True, preexec_fn=_server_to_fifo,
            )  # fmt: skip
        if os.sched_getscheduler(process.pid) != os.SCHED_FIFO:
            warnings.warn(
                f"franka-sim on {ip} runs at normal priority (SCHED_FIFO {SERVER_FIFO_PRIORITY} refused): "
                "under load its command receiver can be starved into communication_constraints_violation",
                stacklevel=1,
            )
        sim = FrankaSim(ip, FCI_PORT, comm, motion, log_path, process, probe_path=probe_path, faults=faults)
        while True:
            text = log_path.read_text(errors="replace")
            if any(line.startswith("READY ") for line in text.splitlines()):
                sim.startup_s = time.monotonic() - t0
                return sim
            if process.poll() is not None:
                if "already in use" in text:  # lost a race for the address: take the next one
                    failures.append(f"{ip}:{FCI_PORT} taken while starting")
                    break
                pytest.fail(
                    f"franka-sim on {ip} exited with {process.returncode} before READY; "
                    f"log {log_path}:\n{sim.log_tail()}",
                    pytrace=False,
                )
            if time.monotonic() - t0 > READY_TIMEOUT_S:
                sim.stop()
                pytest.fail(
                    f"franka-sim on {ip} not READY within {READY_TIMEOUT_S:.0f} s; "
                    f"log {log_path}:\n{sim.log_tail()}",
                    pytrace=False,
                )
            time.sleep(0.02)
    pytest.fail(f"no free loopback address for franka-sim: {'; '.join(failures)}", pytrace=False)


class FrankaSimPool:
    """The session's servers, one per (enforce_comm_constraints, enforce_motion_limits)."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.servers: dict[tuple[bool, bool], FrankaSim] = {}

    def get(self, enforce_comm_constraints: bool = True, enforce_motion_limits: bool = True) -> FrankaSim:
        key = (bool(enforce_comm_constraints), bool(enforce_motion_limits))
        sim = self.servers.get(key)
        if sim is None or sim.process.poll() is not None:
            self.servers[key] = sim = _start_server(self.log_dir, len(self.servers), *key)
        return sim

    def restart(self, sim: FrankaSim) -> FrankaSim:
        """Stop `sim` and start a fresh server with its settings on its address."""
        key = (sim.enforce_comm_constraints, sim.enforce_motion_limits)
        sim.stop()
        slot = list(self.servers).index(key)
        fresh = _start_server(self.log_dir, slot, *key)
        fresh.restarts = sim.restarts + 1
        self.servers[key] = fresh
        return fresh

    def dedicated(self, comm: bool, motion: bool, probe: bool, faults: str) -> FrankaSim:
        """A server for one test only (the caller stops it): probe and faults need a fresh process, whose
        probe holds nothing but this test's events and whose timed faults count from its first command."""
        return _start_server(self.log_dir, next(_DEDICATED_SLOTS), comm, motion, probe, faults)

    def stop_all(self) -> None:
        for sim in self.servers.values():
            sim.stop()


@pytest.fixture(scope="session")
def franka_sim_python() -> Path:
    """The interpreter of franka-sim's venv; skips when scripts/setup_franka_sim.sh has not run."""
    if not SIM_PYTHON.exists():
        pytest.skip(f"franka-sim is not installed ({VENV_SIM} is missing): run scripts/setup_franka_sim.sh")
    return SIM_PYTHON


@pytest.fixture(scope="session")
def franka_sim_pool(tmp_path_factory, franka_sim_python):
    pool = FrankaSimPool(tmp_path_factory.mktemp("franka_sim"))
    yield pool
    pool.stop_all()


def _marker_settings(request) -> dict:
    settings = {"enforce_comm_constraints": True, "enforce_motion_limits": True, "probe": False, "faults": ""}
    # Closest marker last, so a test's own marker overrides its module's.
    for marker in reversed(list(request.node.iter_markers(MARKER))):
        unknown = set(marker.kwargs) - set(settings)
        if unknown or marker.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes only {sorted(settings)} as keywords")
        settings.update(marker.kwargs)
    try:
        parse_faults(settings["faults"])
    except ValueError as exc:
        raise pytest.UsageError(f"@pytest.mark.{MARKER}(faults={settings['faults']!r}): {exc}") from exc
    return settings


@pytest.fixture
def franka_sim(request, franka_sim_pool):
    """The franka-sim server for this test (a session-lived process, or one of its own with probe or
    faults; see the module docstring)."""
    settings = _marker_settings(request)
    comm, motion = settings["enforce_comm_constraints"], settings["enforce_motion_limits"]
    if settings["probe"] or settings["faults"]:
        sim = franka_sim_pool.dedicated(comm, motion, bool(settings["probe"]), settings["faults"])
        request.node.franka_sim_dedicated = sim
        yield sim
        sim.stop()
        return
    sim = franka_sim_pool.get(comm, motion)
    # franka-sim serves one client at a time, and libfranka waits for ever (holding the GIL) on a
    # server that is busy: a client leaked by an earlier test (a Robot kept alive by a traceback) is
    # ended by restarting the server.
    if not _wait_no_clients(sim):
        print(
            f"franka-sim {sim.ip}: a client from an earlier test is still connected (a Robot or "
            "ActiveControl object kept alive, e.g. by a traceback): restarting the server",
            file=sys.stderr,
        )
        sim = franka_sim_pool.restart(sim)
    yield sim


def _connect(pylibfranka, sim: FrankaSim):
    faulthandler.dump_traceback_later(CONNECT_WATCHDOG_S, exit=True)
    try:
        return pylibfranka.Robot(sim.ip, pylibfranka.RealtimeConfig.kIgnore)
    finally:
        faulthandler.cancel_dump_traceback_later()


def _wait_no_clients(sim: FrankaSim, timeout_s: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while sim.clients():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def franka_robot(franka_sim):
    """pylibfranka.Robot on `franka_sim`; errors recovered before and after the test."""
    pylibfranka = pytest.importorskip(
        "pylibfranka", reason="pylibfranka is not installed in this venv (requirements.txt pins it)"
    )
    robot = _connect(pylibfranka, franka_sim)
    if robot.read_once().robot_mode == pylibfranka.RobotMode.Reflex:
        robot.automatic_error_recovery()
    yield robot
    robot.automatic_error_recovery()
    mode = robot.read_once().robot_mode
    assert mode == pylibfranka.RobotMode.Idle, f"robot left in {mode} after automatic_error_recovery"
    # The connection closes when pytest drops the fixture's value (after this teardown); the next
    # test's `franka_sim` waits for that, and restarts the server if something still holds it.


# Below this share of its 1 kHz cycle (states sent per millisecond of this machine's clock, lost ones
# included) franka-sim was not running in real time: on a quiet machine it sends 0.95–0.98 per ms; on a
# machine whose CPU is taken away (another VM, a build) it fell to 0.6, its cycles stretched, and
# timing-sensitive checks of the harness and of jtac failed with it. A robot's cycle never stretches.
MIN_PUBLICATION_RATIO = 0.9


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    dedicated = getattr(item, "franka_sim_dedicated", None)
    if report.failed and call.when == "call" and dedicated is not None and dedicated.probe_path is not None:
        # A failure while franka-sim itself fell behind real time is inconclusive: reported as skipped
        # with the figure (and the failure's text), never as a pass.
        ratio = publication_ratio(dedicated.probe_events())
        if ratio is not None and ratio < MIN_PUBLICATION_RATIO:
            reason = (
                f"inconclusive: franka-sim sent {ratio:.2f} states per ms during the test (below "
                f"{MIN_PUBLICATION_RATIO}: this machine did not run it in real time); the failure was: "
                f"{call.excinfo.exconly()[:300] if call.excinfo else report.longreprtext[:300]}"
            )
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, reason)
            return report
    if report.failed:
        pool = getattr(item, "funcargs", {}).get("franka_sim_pool")
        servers = list(pool.servers.values()) if pool else []
        dedicated = getattr(item, "franka_sim_dedicated", None)
        for sim in [*servers, *([dedicated] if dedicated else [])]:
            report.sections.append(
                (f"franka-sim {sim.ip} log tail ({sim.log_path})", sim.log_tail()),
            )
    return report
