"""``jtac lifecycle get | set``: the node's lifecycle state and transitions (also used by
list-controllers and switch)."""

from __future__ import annotations

import argparse

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK, CliError
from jtac_ros.cli.options import NO_NODE_HINT, node_option, wait_option
from jtac_ros.cli.session import RosSession

__all__ = ["add_parser", "handle", "lifecycle_state", "lifecycle_transition"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``lifecycle`` sub-parser."""
    p = sub.add_parser(
        "lifecycle",
        help="show the node's lifecycle state, or trigger a transition",
        description="get: print the lifecycle state (unconfigured, inactive, active, finalized). set "
        "TRANSITION: configure, activate, deactivate, cleanup or shutdown, then print the new state.",
    )
    lifecycle_sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    lifecycle_sub.add_parser("get", parents=[node_option(), wait_option()], help="print the current state")
    q = lifecycle_sub.add_parser("set", parents=[node_option(), wait_option()], help="trigger a transition")
    q.add_argument(
        "transition",
        choices=["configure", "activate", "deactivate", "cleanup", "shutdown"],
        metavar="TRANSITION",
    )
    p.set_defaults(func=handle)
    return p


def lifecycle_state(ros: RosSession, node: str, wait_s: float) -> tuple[int, str]:
    """The node's lifecycle state: (id, label)."""
    from lifecycle_msgs.srv import GetState

    response = ros.call(
        GetState,
        f"{node}/get_state",
        GetState.Request(),
        wait_s,
        f"no lifecycle services on {node} — {NO_NODE_HINT}",
    )
    return response.current_state.id, response.current_state.label


def lifecycle_transition(ros: RosSession, node: str, label: str, wait_s: float) -> None:
    """Triggers transition `label` (configure, activate, deactivate, cleanup, shutdown); CliError
    naming the transitions available from the current state when it is not one of them."""
    from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions

    missing = f"no lifecycle services on {node} — {NO_NODE_HINT}"
    available = ros.call(
        GetAvailableTransitions,
        f"{node}/get_available_transitions",
        GetAvailableTransitions.Request(),
        wait_s,
        missing,
    ).available_transitions
    matches = [t.transition for t in available if t.transition.label == label]
    if not matches:
        _, state = lifecycle_state(ros, node, wait_s)
        labels = ", ".join(sorted({t.transition.label for t in available})) or "none"
        raise CliError(
            EXIT_FAILED, f"{node} is {state}: no transition '{label}' from there (available: {labels})"
        )
    response = ros.call(
        ChangeState, f"{node}/change_state", ChangeState.Request(transition=matches[0]), wait_s, missing
    )
    if not response.success:
        _, state = lifecycle_state(ros, node, wait_s)
        raise CliError(
            EXIT_FAILED, f"{node}: transition '{label}' failed; now {state} (the node's log says why)"
        )


def handle(args: argparse.Namespace) -> int:
    """Prints the lifecycle state, after triggering TRANSITION for ``set``."""
    with RosSession("lifecycle") as ros:
        if args.action == "set":
            lifecycle_transition(ros, args.node, args.transition, args.wait)
        state_id, label = lifecycle_state(ros, args.node, args.wait)
    print(f"{label} [{state_id}]")
    return EXIT_OK
