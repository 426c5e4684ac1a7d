"""The options every ROS verb shares: which node (``--node``) and how long to wait for it (``--wait``)."""

from __future__ import annotations

import argparse
import re

from jtac_py.cli.common import seconds

__all__ = [
    "DEFAULT_NODE",
    "DEFAULT_WAIT_S",
    "NODE_HELP",
    "NO_NODE_HINT",
    "node_name",
    "node_option",
    "wait_option",
]

DEFAULT_NODE = "joint_trajectory_admittance_controller"
DEFAULT_WAIT_S = 5.0  # discovery time of a node on localhost, with margin [s]
NODE_HELP = f"controller node name, optionally /namespace/name (default: {DEFAULT_NODE})"
NO_NODE_HINT = "is the node running? (jtac run)"
_NAME_RE = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")


def node_name(text: str) -> str:
    """A ROS node name, optionally with a namespace; returned fully qualified (``/ns/name``)."""
    if not _NAME_RE.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a ROS node name (letters, digits and _, not starting with a digit; "
            "an optional /namespace/ prefix)"
        )
    return text if text.startswith("/") else f"/{text}"


def node_option() -> argparse.ArgumentParser:
    """A parent parser with ``--node``: a verb's copy only sets it when given (the top level defaults it)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--node", type=node_name, default=argparse.SUPPRESS, metavar="NAME", help=NODE_HELP)
    return parent


def wait_option() -> argparse.ArgumentParser:
    """A parent parser with ``--wait``: how long to wait for the node's action, service or topic."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--wait",
        type=seconds,
        default=DEFAULT_WAIT_S,
        metavar="S",
        help=f"how long to wait for the node to be discovered [s] (default: {DEFAULT_WAIT_S:g})",
    )
    return parent
