"""Start, watch and stop franka-sim servers on loopback addresses: the one harness of test/franka and bench/.

franka-sim runs in its own venv, `.venv-sim` (scripts/setup_franka_sim.sh), through the launcher
`sim_server.py` beside this file; the caller (pytest or a benchmark, in `.venv`) talks to it over TCP
1337 + UDP through pylibfranka like to a real FR3. This module is standard library only, so that every
venv imports it (`bench_franka_sim.py`'s aiofranka worker runs in `.venv-aiofranka`, which has no jtac).
It is imported by path: `sys.path.insert(0, "<repo>/tools/franka_sim")`, then
`import franka_sim_harness` (and `import sim_server` for the probe's readers and the fault language).

- Addresses: libfranka's port is fixed at 1337, so servers are kept apart by address. A caller picks a
  second octet of its own (test/franka 10-21, bench_franka_sim.py 40, bench_franka_faults.py 72) and
  `candidate_ips` derives the rest from the process id; never 127.0.0.1, where a developer's own
  franka-sim or robot stand-in listens.
- `start_server` test-binds TCP 1337 (and 1338 with `gripper=True`) on each candidate, starts the
  launcher there (SCHED_FIFO `fifo_priority` where allowed, its own session, exiting with its parent),
  waits for its `READY` line and moves to the next candidate when it loses a race for the address.
- Gripper: `start_server(..., gripper=True)` serves franka-sim's Franka Hand on 1338 of the same
  address (`gripper_physics=True`: the MuJoCo hand, fingers moved by franka-sim's servo; else its
  kinematic hand, every command instant; `gripper_object_width`: its virtual object between the
  fingers [m]). franka-sim's gripper server takes one client at a time and runs each command to its
  end before it reads the next.
- `FrankaSim`: the running server (`clients()`, `gripper_clients()`, `wait_no_clients()`, `probe_events()`,
  `restore_link()`, `log_tail()`, `stop()`).
- Recovery: `connect` (a Robot under a watchdog: libfranka waits for ever on a busy server) and
  `clear_reflex`.
"""

from __future__ import annotations

import contextlib
import faulthandler
import ipaddress
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim_server import PROBE_FLUSH_S, ProbeEvent, read_probe

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
VENV_SIM = Path(os.environ.get("JTAC_VENV_SIM", ROOT / ".venv-sim"))
SIM_PYTHON = VENV_SIM / "bin" / "python"
SIM_SERVER = HERE / "sim_server.py"
MODEL = ROOT / "test" / "franka" / "fr3_nomesh.xml"
FCI_PORT = 1337  # libfranka connects to this port, always
GRIPPER_PORT = 1338  # libfranka's gripper client connects to this port, always
READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
# franka-sim stands for the robot's controller, which never shares a CPU with the client: SCHED_FIFO 50
# where that is allowed, below jtac's hardware and controller threads (80 / 70), so that a client's own
# load (a GIL-holding thread) cannot starve its command receiver into
# communication_constraints_violation.
SERVER_FIFO_PRIORITY = 50
# pylibfranka holds the GIL and libfranka waits without a timeout when the server is busy with another
# client: a connect that hangs this long dumps every thread's stack and ends the process. Normal
# connects take a few ms.
CONNECT_WATCHDOG_S = 60.0
LOG_TAIL_LINES = 60
_READY_POLL_S = 0.02
_CLIENT_POLL_S = 0.01


class FrankaSimError(RuntimeError):
    """franka-sim did not start (exited, not READY in time, no free address); the message has its log."""


def established_to(ip: str, port: int = FCI_PORT) -> int:
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


def wait_no_clients(ip: str, timeout_s: float, port: int = FCI_PORT) -> bool:
    """True once no client is connected to ip:port; False if one still is after timeout_s [s]."""
    deadline = time.monotonic() + timeout_s
    while established_to(ip, port):
        if time.monotonic() > deadline:
            return False
        time.sleep(_CLIENT_POLL_S)
    return True


def port_free(ip: str, port: int = FCI_PORT) -> bool:
    """Whether a TCP socket can bind ip:port right now."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind((ip, port))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def candidate_ips(second_octet: int, pid: int | None = None, attempts: int = 8) -> Iterator[str]:
    """Loopback addresses 127.<second_octet + 16k>.<hi>.<lo>, hi and lo from the process id.

    The first is this process's own; the next ones are fallbacks for a pid-derived address that another
    process already uses (k = 1, 2, …; 7919 is a prime, so the low octets move too).
    """
    pid = os.getpid() if pid is None else pid
    for attempt in range(attempts):
        n = pid + attempt * 7919
        yield f"127.{second_octet + 16 * attempt}.{(n // 254) % 256}.{n % 254 + 1}"


@dataclass
class FrankaSim:
    """One running franka-sim server."""

    ip: str
    port: int
    enforce_comm_constraints: bool
    enforce_motion_limits: bool
    log_path: Path
    process: subprocess.Popen = field(repr=False)
    startup_s: float = 0.0  # launcher start -> READY [s]
    restarts: int = 0
    probe_path: Path | None = None  # the robot-side probe's JSON lines (probe on)
    faults: str = ""  # the fault spec on the server's UDP link (sim_server.parse_faults)
    fifo_priority: int = 0  # the server's SCHED_FIFO priority; 0: normal priority
    log_offset: int = field(default=0, repr=False)  # where this process's lines start in log_path [bytes]
    gripper: bool = False  # franka-sim's gripper server listens on GRIPPER_PORT of `ip`
    gripper_physics: bool = False  # the hand is in the MuJoCo model (else franka-sim's kinematic hand)
    gripper_object_width: float | None = None  # franka-sim's virtual object between the fingers [m]

    def probe_events(self) -> list[ProbeEvent]:
        """The probe's events so far, in time order (after the writer's next flush)."""
        if self.probe_path is None:
            raise RuntimeError(f"franka-sim {self.ip} runs without the probe: start it with a probe_path")
        time.sleep(3 * PROBE_FLUSH_S)
        return read_probe(self.probe_path)

    def restore_link(self) -> None:
        """Repair a dead@ link (SIGUSR1 to the launcher): datagrams pass again, on every session."""
        self.process.send_signal(signal.SIGUSR1)

    def log_text(self) -> str:
        """This server's part of its log."""
        with open(self.log_path, "rb") as log:
            log.seek(self.log_offset)
            return log.read().decode(errors="replace")

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log_text()
        except OSError as exc:
            return f"(no log: {exc})"
        return "\n".join(text.splitlines()[-lines:])

    def clients(self) -> int:
        """How many TCP clients are connected to the server right now."""
        return established_to(self.ip, self.port)

    def wait_no_clients(self, timeout_s: float) -> bool:
        """True once no client is connected; False if one still is after timeout_s [s]."""
        return wait_no_clients(self.ip, timeout_s, self.port)

    def gripper_clients(self) -> int:
        """How many TCP clients are connected to the gripper server right now (it serves one)."""
        return established_to(self.ip, GRIPPER_PORT) if self.gripper else 0

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after STOP_TIMEOUT_S."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _to_fifo(priority: int):
    """In the server's child process before exec: SCHED_FIFO, inherited by every thread it starts."""

    def set_policy() -> None:
        with contextlib.suppress(OSError):  # no rtprio: the parent sees the policy
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))

    return set_policy


def _server_env() -> dict[str, str]:
    env = dict(os.environ, FR3_MJCF=str(MODEL), PYTHONUNBUFFERED="1")
    # The launcher takes enforcement from its flags; franka-sim's own switches must not override them,
    # and .venv's PYTHONPATH must not leak into .venv-sim.
    for name in ("FRANKA_SIM_ENFORCE_COMM_CONSTRAINTS", "FRANKA_SIM_ENFORCE_MOTION_LIMITS", "PYTHONPATH"):
        env.pop(name, None)
    return env


def start_server(
    log_path: Path | Callable[[str], Path],
    second_octet: int,
    *,
    enforce_comm_constraints: bool = True,
    enforce_motion_limits: bool = True,
    probe_path: Path | None = None,
    faults: str = "",
    fifo_priority: int = SERVER_FIFO_PRIORITY,
    gripper: bool = False,
    gripper_physics: bool = False,
    gripper_object_width: float | None = None,
) -> FrankaSim:
    """Start franka-sim on the first free candidate address and return it once it is READY.

    `log_path`: the file the launcher's output is appended to, or a function of the address that
    names it. `fifo_priority` 0 runs it at normal priority; a refused SCHED_FIFO also leaves it at
    normal priority (`FrankaSim.fifo_priority` says which). `gripper`: franka-sim's gripper server on
    GRIPPER_PORT of the same address (`gripper_physics`, `gripper_object_width` [m]: see the module's
    doc). Raises FrankaSimError.
    """
    if (gripper_physics or gripper_object_width is not None) and not gripper:
        raise ValueError("gripper_physics and gripper_object_width need gripper=True")
    flags = [] if enforce_comm_constraints else ["--no-enforce-comm-constraints"]
    flags += [] if enforce_motion_limits else ["--no-enforce-motion-limits"]
    flags += ["--probe", str(probe_path)] if probe_path is not None else []
    flags += ["--faults", faults] if faults else []
    flags += ["--gripper"] if gripper else []
    flags += ["--gripper-physics"] if gripper_physics else []
    if gripper_object_width is not None:
        flags += ["--gripper-object-width", repr(float(gripper_object_width))]
    ports = (FCI_PORT, GRIPPER_PORT) if gripper else (FCI_PORT,)
    env = _server_env()
    failures = []
    for ip in candidate_ips(second_octet):
        taken = [port for port in ports if not port_free(ip, port)]
        if taken:
            failures.append(f"{ip}:{'/'.join(map(str, taken))} in use")
            continue
        log = Path(log_path(ip) if callable(log_path) else log_path)
        offset = log.stat().st_size if log.exists() else 0
        cmd = [str(SIM_PYTHON), str(SIM_SERVER), "--host", ip, "--parent-pid", str(os.getpid()), *flags]
        t0 = time.monotonic()
        with open(log, "ab") as out:
            # Own session: a Ctrl-C aimed at the caller reaches the server only through stop()'s
            # SIGTERM; --parent-pid makes it exit with the caller even if the caller is killed.
            process = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                start_new_session=True, preexec_fn=_to_fifo(fifo_priority) if fifo_priority else None,
            )  # fmt: skip
        fifo = os.sched_getscheduler(process.pid) == os.SCHED_FIFO
        sim = FrankaSim(
            ip, FCI_PORT, enforce_comm_constraints, enforce_motion_limits, log, process,
            probe_path=probe_path, faults=faults, fifo_priority=fifo_priority if fifo else 0,
            log_offset=offset, gripper=gripper, gripper_physics=gripper_physics,
            gripper_object_width=gripper_object_width,
        )  # fmt: skip
        while True:
            text = sim.log_text()
            if any(line.startswith(f"READY {ip}:") for line in text.splitlines()):
                sim.startup_s = time.monotonic() - t0
                return sim
            if process.poll() is not None:
                if "already in use" in text:  # lost a race for the address: take the next one
                    failures.append(f"{ip}:{'/'.join(map(str, ports))} taken while starting")
                    break
                raise FrankaSimError(
                    f"franka-sim on {ip} exited with {process.returncode} before READY; "
                    f"log {log}:\n{sim.log_tail()}"
                )
            if time.monotonic() - t0 > READY_TIMEOUT_S:
                sim.stop()
                raise FrankaSimError(
                    f"franka-sim on {ip} not READY within {READY_TIMEOUT_S:.0f} s; "
                    f"log {log}:\n{sim.log_tail()}"
                )
            time.sleep(_READY_POLL_S)
    raise FrankaSimError(f"no free loopback address for franka-sim: {'; '.join(failures)}")


def connect(pylibfranka: Any, ip: str, watchdog_s: float = CONNECT_WATCHDOG_S) -> Any:
    """pylibfranka.Robot(ip, RealtimeConfig.kIgnore) under a watchdog that ends the process after
    watchdog_s [s] with every thread's stack (libfranka waits for ever on a server busy with another
    client). Replaces any faulthandler timer of the caller and cancels it after the connect."""
    faulthandler.dump_traceback_later(watchdog_s, exit=True)
    try:
        return pylibfranka.Robot(ip, pylibfranka.RealtimeConfig.kIgnore)
    finally:
        faulthandler.cancel_dump_traceback_later()


def clear_reflex(pylibfranka: Any, robot: Any) -> bool:
    """automatic_error_recovery() if the robot is in Reflex; True if it was."""
    if robot.read_once().robot_mode == pylibfranka.RobotMode.Reflex:
        robot.automatic_error_recovery()
        return True
    return False
