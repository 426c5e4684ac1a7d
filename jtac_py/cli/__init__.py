"""The ``jtac`` verbs that need no ROS: ``demo``, ``plot``, ``convert``, ``plot-admittance``, ``doctor``,
``why``.

They live here, in the library, so that they run where no ROS 2 is installed (``make setup-demo``).
The ``jtac`` command (jtac_ros.cli) offers them beside the ROS verbs; ``python -m jtac_py.cli`` offers
them alone. Each verb is one module with ``add_parser(sub)`` and ``handle(args)`` (jtac_py/cli/common.py).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from jtac_py.cli import convert, demo, doctor, plot, plot_admittance, why
from jtac_py.cli.common import run_verb

__all__ = ["VERBS", "build_parser", "main"]

# In the order `jtac --help` lists them, after the ROS verbs.
VERBS = (demo, plot, convert, plot_admittance, doctor, why)


def build_parser() -> argparse.ArgumentParser:
    """A parser with the ROS-free verbs only."""
    parser = argparse.ArgumentParser(
        prog="jtac",
        description="The jtac verbs that need no ROS (the jtac command offers every verb).",
        epilog="Exit status: 0 ok; 1 a doctor line failed or goal intake would reject the admittance set; "
        "2 bad usage, file or value.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for verb in VERBS:
        verb.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m jtac_py.cli``: runs one ROS-free verb; returns the exit status."""
    return run_verb(build_parser().parse_args(argv))
