"""``jtac doctor``: can this machine hold the 1 kHz loop to a Franka robot, and what to fix (no ROS)."""

from __future__ import annotations

import argparse

from jtac_py.cli.common import seconds

__all__ = ["add_parser", "handle"]


def _robot_ip(text: str) -> str:
    from jtac_py.doctor import robot_address

    try:
        return robot_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``doctor`` sub-parser."""
    from jtac_py.doctor import DEFAULT_SECONDS  # standard library only: cheap

    p = sub.add_parser(
        "doctor",
        help="can this machine hold the 1 kHz loop to a Franka robot? what to fix (no ROS needed)",
        description="Check the kernel, SCHED_FIFO and memory-lock limits, CPU governor and isolation, "
        "C-states, RT throttling, the NMI watchdog, transparent huge pages, PCIe ASPM, a GPU driver, the "
        "NIC's interrupts and coalescing, the route to the robot and its protocol version, and measure "
        "wake-up lateness at 1 kHz; print one line per check with the fix of every line that is not ok "
        "(docs/doctor.md). Exit 0 when no line failed, 1 otherwise. With --robot-ip it connects to the "
        "robot only to read its version and its state stream: it never starts a motion.",
    )
    p.add_argument(
        "--robot-ip",
        type=_robot_ip,
        metavar="IP",
        help="the robot's address (a literal IP): check the route and link to it (ip route get, /sys), ask "
        "its protocol version (a Connect handshake) and read its state stream for S seconds (read_once only, "
        "no motion)",
    )
    p.add_argument(
        "--seconds",
        type=seconds,
        default=DEFAULT_SECONDS,
        metavar="S",
        help=f"duration of each timing measurement [s]: the two on this machine and, with --robot-ip, the "
        f"robot's state stream (default: {DEFAULT_SECONDS:g}; 0 skips them)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Runs every check; prints the table (or JSON); exit 0 when no line failed, 1 otherwise."""
    from jtac_py import doctor

    report = doctor.run(args.robot_ip, args.seconds)
    print(report.to_json() if args.json else report.format_table(), flush=True)
    return report.exit_code
