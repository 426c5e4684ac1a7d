"""``jtac switch``: activate or deactivate the controller through the node's lifecycle."""

from __future__ import annotations

import argparse

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError
from jtac_ros.cli.lifecycle import lifecycle_state, lifecycle_transition
from jtac_ros.cli.options import node_option, wait_option
from jtac_ros.cli.session import RosSession

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``switch`` sub-parser."""
    p = sub.add_parser(
        "switch",
        parents=[node_option(), wait_option()],
        help="activate or deactivate the controller (its lifecycle)",
        description="Deactivate, then activate, the named controllers (this node's name) through the "
        "node's lifecycle. A goal running at deactivation ends INVALID_STATE (-9).",
    )
    p.add_argument("--activate", nargs="+", default=[], metavar="NAME", help="controllers to activate")
    p.add_argument("--deactivate", nargs="+", default=[], metavar="NAME", help="controllers to deactivate")
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Deactivates, then activates, the named controller (this node) through its lifecycle."""
    name = args.node.rpartition("/")[2]
    requested = [*args.deactivate, *args.activate]
    if not requested:
        raise CliError(EXIT_USAGE, "nothing to switch: give --activate NAME and/or --deactivate NAME")
    unknown = [n for n in requested if n.rpartition("/")[2] != name]
    if unknown:
        raise CliError(EXIT_FAILED, f"no controller {', '.join(unknown)} (this node runs '{name}')")
    with RosSession("switch") as ros:
        for target, label in (("inactive", "deactivate"), ("active", "activate")):
            if not (args.deactivate if label == "deactivate" else args.activate):
                continue
            _, state = lifecycle_state(ros, args.node, args.wait)
            if state == target:
                print(f"{name} is already {target}")
                continue
            if label == "activate" and state == "unconfigured":
                raise CliError(EXIT_FAILED, f"{name} is unconfigured: jtac lifecycle set configure first")
            lifecycle_transition(ros, args.node, label, args.wait)
            print(f"{name}: {state} -> {target}")
    return EXIT_OK
