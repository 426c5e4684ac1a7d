"""The ``jtac`` parser, collected from one module per verb, and the entry point."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import jtac_py.cli
from jtac_py.cli.common import EXIT_USAGE, run_verb
from jtac_ros.cli import (
    cancel,
    echo,
    gripper,
    lifecycle,
    list_controllers,
    param,
    record,
    run,
    send_goal,
    state,
    switch,
    tare,
    time_scale,
)
from jtac_ros.cli.needs_ros import is_ros_module, needs_ros_message, ros_available
from jtac_ros.cli.options import DEFAULT_NODE, NODE_HELP, node_name

__all__ = ["ROS_VERBS", "build_parser", "main"]

# In the order `jtac --help` lists them; the ROS-free verbs (jtac_py.cli.VERBS) follow.
ROS_VERBS = (
    run,
    send_goal,
    cancel,
    tare,
    time_scale,
    gripper,
    record,
    state,
    echo,
    param,
    lifecycle,
    list_controllers,
    switch,
)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``jtac`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog="jtac",
        description="Command line of the jtac joint trajectory admittance controller (ROS 2 node).",
        epilog="Exit status: 0 ok; 1 goal failed, request refused or a doctor line failed; 2 bad usage, "
        "file or value, or no node; 130 interrupted.",
    )
    # Accepted before and after the command; the verb's copy (options.node_option) only sets it when given.
    parser.add_argument("--version", action="version", version=f"jtac {jtac_py.__version__}")
    parser.add_argument("--node", type=node_name, default=f"/{DEFAULT_NODE}", metavar="NAME", help=NODE_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for verb in ROS_VERBS:
        verb.add_parser(sub).set_defaults(needs_ros=True)
    for verb in jtac_py.cli.VERBS:
        verb.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``jtac``; returns the exit status."""
    args = build_parser().parse_args(argv)
    needs_ros = getattr(args, "needs_ros", False)
    if needs_ros and not ros_available():
        print(f"jtac {args.command}: {needs_ros_message()}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return run_verb(args)
    except ModuleNotFoundError as exc:
        if not (needs_ros and is_ros_module(exc.name)):
            raise
        print(f"jtac {args.command}: {needs_ros_message(exc.name or 'a ROS package')}", file=sys.stderr)
        return EXIT_USAGE
