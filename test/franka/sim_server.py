"""Run franka-sim's FR3 server on one loopback address until SIGTERM (or SIGINT).

Runs in franka-sim's own venv, never in .venv:

    FR3_MJCF=test/franka/fr3_nomesh.xml .venv-sim/bin/python test/franka/sim_server.py --host 127.0.0.2

Prints ``READY <host>:<port> ...`` on stdout once the command port listens and the physics loop steps.
The stock ``franka-sim`` command binds 0.0.0.0; this launcher binds the one address it is given, which
must lie in 127.0.0.0/8. Motion-limit and communication-constraint enforcement are ON unless switched
off, so the server aborts a motion the way the real robot's controller does.

Network: loopback only, and checked. An audit hook refuses (with an exception, at once, instead of a
hang on a machine without internet) every socket address outside the loopback range, every name
lookup of a non-loopback host, any subprocess (robot_descriptions clones models with git) and the
import of robot_descriptions itself: franka-sim must take its model from FR3_MJCF.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path

T_START = time.monotonic()
DEFAULT_MODEL = Path(__file__).resolve().parent / "fr3_nomesh.xml"
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
    args = p.parse_args(argv)
    try:
        host = ipaddress.ip_address(args.host)
    except ValueError:
        p.error(f"--host {args.host!r}: give a literal IPv4 address in {LOOPBACK}")
    if host not in LOOPBACK:  # not an `assert`: this check must survive python -O
        p.error(f"--host {args.host} is not in {LOOPBACK}: the server binds loopback only")
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
        f"enforce_motion_limits={args.enforce_motion_limits}",
        flush=True,
    )

    from franka_sim import FrankaSimServer

    server = FrankaSimServer(
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
    print("sim_server: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
