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
        description="Check the kernel, SCHED_FIFO and memory-lock limits, CPU governor and isolation, the "
        "route to the robot, and measure wake-up lateness at 1 kHz; print one line per check with the "
        "fix of every line that is not ok (docs/doctor.md). Exit 0 when no line failed, 1 otherwise. "
        "Sends nothing to the robot.",
    )
    p.add_argument(
        "--robot-ip",
        type=_robot_ip,
        metavar="IP",
        help="the robot's address (a literal IP): check the route and link to it (ip route get, /sys)",
    )
    p.add_argument(
        "--seconds",
        type=seconds,
        default=DEFAULT_SECONDS,
        metavar="S",
        help=f"duration of each of the two timing measurements [s] (default: {DEFAULT_SECONDS:g}; 0 skips "
        "them)",
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
