"""``jtac run``: start the controller node in this process (ROS arguments built from the options)."""

from __future__ import annotations

import argparse
from pathlib import Path

from jtac_py.cli.common import EXIT_USAGE, CliError
from jtac_ros.cli.options import node_option

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``run`` sub-parser."""
    p = sub.add_parser(
        "run",
        parents=[node_option()],
        help="start the controller node (simulated arm, or as a parameters file configures it)",
        description="Start the controller node; it configures and activates itself and runs until "
        "Ctrl-C. Arguments after -- go to the node unchanged.",
    )
    p.add_argument("--params-file", metavar="F", help="ROS parameters file (YAML) for the node")
    p.add_argument("node_args", nargs=argparse.REMAINDER, metavar="-- NODE_ARGS", help="passed to the node")
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Runs the node in this process until Ctrl-C; the node's exit status."""
    if args.params_file is not None and not Path(args.params_file).is_file():
        raise CliError(EXIT_USAGE, f"{args.params_file}: no such parameters file")
    try:
        from jtac_ros import node as node_module
    except ModuleNotFoundError as exc:
        if exc.name != "jtac_ros.node":
            raise
        raise CliError(
            EXIT_USAGE, "the controller node (jtac_ros.node) is not installed in this environment"
        ) from None
    namespace, _, base = args.node.rpartition("/")
    extra = list(args.node_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    ros_args = ["--ros-args", "-r", f"__node:={base}"]
    if namespace:
        ros_args += ["-r", f"__ns:={namespace}"]
    if args.params_file is not None:
        ros_args += ["--params-file", str(args.params_file)]
    return int(node_module.main([*extra, *ros_args]) or 0)
