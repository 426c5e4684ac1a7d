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

Gripper (``--gripper``): franka-sim's Franka Hand server on port 1338 of the same address (libfranka's
gripper protocol; one client at a time, each command run to its end before the next is read, state
broadcast at 60 Hz). ``--gripper-physics`` grafts the hand onto the MuJoCo arm (the mesh-free
test/franka/fr3_nomesh_hand.xml through FRANKA_HAND_MJCF) and moves the fingers with franka-sim's servo;
without it the hand is franka-sim's kinematic one, whose every command ends at once.
``--gripper-object-width W`` puts franka-sim's virtual object of W m between the fingers. ``READY`` is
printed once 1338 listens too. With ``--probe`` the gripper's commands, answers, state datagrams and
the fingers' motion are recorded too (sim_gripper_probe.py).

Fault injection (``--faults SPEC``): seeded loss, delay, bursts, outages and a dead link on the UDP
datagrams between franka-sim and the client (TCP passes untouched), in a proxy around franka-sim's UDP
socket; ``parse_faults`` documents the language. SIGUSR1 repairs a dead link.

The program is split by concern, all standard library and loaded by this script: sim_guard.py (the
loopback guard), sim_probe.py (the fault language and the probe's readers, imported by both venvs and
re-exported here), sim_link.py (the probe's writer, the delay line and the fault decisions) and
sim_probed_server.py (the proxy around franka-sim's UDP socket and the server subclass that installs
it). This file is the launcher.
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

from sim_guard import LOOPBACK, NetworkRefusedError
from sim_guard import audit as _audit  # also installed by test_franka_sim_harness.py under this name
from sim_link import Link, Probe
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
    first_command_message_id,
    move_to_first_command_ms,
    parse_faults,
    publication_ratio,
    read_probe,
)
from sim_probed_server import probed_server_class

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
    "first_command_message_id",
    "main",
    "move_to_first_command_ms",
    "parse_faults",
    "publication_ratio",
    "read_probe",
]


T_START = time.monotonic()
DEFAULT_MODEL = Path(__file__).resolve().parents[2] / "test" / "franka" / "fr3_nomesh.xml"
# The physics hand grafted onto the arm's flange; without FRANKA_HAND_MJCF franka-sim would fetch the
# Menagerie hand through robot_descriptions (refused by the audit hook).
DEFAULT_HAND_MODEL = DEFAULT_MODEL.with_name("fr3_nomesh_hand.xml")
GRIPPER_PORT = 1338  # libfranka's gripper client connects to this port, always


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
    p.add_argument(
        "--gripper",
        action="store_true",
        help="serve the Franka Hand's gripper protocol on port 1338 of the same address",
    )
    p.add_argument(
        "--gripper-physics",
        action="store_true",
        help="the hand in the MuJoCo model (FRANKA_HAND_MJCF, default fr3_nomesh_hand.xml), fingers "
        "driven by franka-sim's servo; without it, franka-sim's kinematic hand (every command instant)",
    )
    p.add_argument(
        "--gripper-object-width",
        type=float,
        default=None,
        help="a virtual object of this width [m] between the fingers (franka-sim's option)",
    )
    args = p.parse_args(argv)
    if (args.gripper_physics or args.gripper_object_width is not None) and not args.gripper:
        p.error("--gripper-physics and --gripper-object-width need --gripper")
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
    if args.gripper_physics:
        hand = Path(os.environ.setdefault("FRANKA_HAND_MJCF", str(DEFAULT_HAND_MODEL)))
        if not hand.is_file():
            print(f"sim_server: FRANKA_HAND_MJCF={hand} is not a file", file=sys.stderr, flush=True)
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
        f"probe={args.probe} faults={args.faults.strip()!r} gripper={args.gripper} "
        f"gripper_physics={args.gripper_physics} gripper_object_width={args.gripper_object_width}",
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
        enable_gripper=args.gripper,
        gripper_physics=args.gripper_physics,
        gripper_object_width=args.gripper_object_width,
        physics="mujoco",
        enforce_comm_constraints=args.enforce_comm_constraints,
        enforce_motion_limits=args.enforce_motion_limits,
    )

    if link is not None and server.gripper_server is not None:
        import sim_gripper_probe

        sim_gripper_probe.install(server, link)

    stop = threading.Event()
    failed = threading.Event()

    def announce_ready() -> None:
        # start() binds the command port, compiles the model, starts the accept thread and then runs
        # the physics loop in this process's main thread; once that loop runs, clients can connect.
        # The gripper server binds 1338 in a thread of its own, started before the physics loop.
        gripper = server.gripper_server
        while not stop.is_set():
            sim = server.physics_sim
            thread = server.gripper_thread
            # Only once the physics loop runs: start() sets its flag, which would undo ours before.
            sim_running = getattr(sim, "running", False)
            if sim_running and gripper is not None and thread is not None and not thread.is_alive():
                # Its bind failed (franka-sim logged "already in use"): exit, so that the harness
                # moves to the next address as it does when 1337 is taken.
                print(f"sim_server: gripper port {args.host}:{GRIPPER_PORT} not served", flush=True)
                failed.set()
                stop.set()
                sim.running = False
                return
            gripper_up = gripper is None or (gripper.running and gripper.server_socket is not None)
            if sim_running and server.server_socket is not None and gripper_up:
                hand = f", gripper on {args.host}:{GRIPPER_PORT}" if gripper is not None else ""
                print(
                    f"READY {args.host}:{args.port} after {time.monotonic() - T_START:.2f} s "
                    f"(mujoco {sim.model.nv} dofs{hand})",
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
    return 3 if failed.is_set() else 0


if __name__ == "__main__":
    sys.exit(main())
