"""``jtac why``: a reflex explained offline, from a saved flight-recorder trace or a recording (.npz)."""

from __future__ import annotations

import argparse
import zipfile
from pathlib import Path

from jtac_py.cli.common import EXIT_OK, EXIT_USAGE, CliError

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``why`` sub-parser."""
    p = sub.add_parser(
        "why",
        help="explain a reflex from a saved fault trace or a recording (.npz)",
        description="Print which joint and quantity of the command went past which limit, when, what "
        "preceded it and what to change (jtac_py.reflexes). FILE: a trace the controller saved on a fault "
        "(its path is in the fault's message) or a controller recording with time and q_cmd.",
    )
    p.add_argument("file", metavar="FILE.npz", help="fault trace or recording")
    p.add_argument("--message", default=None, help="libfranka's message, for a recording (a trace has it)")
    p.add_argument("--robot", default=None, help="fr3 or panda (default: the trace's, else fr3)")
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Prints the explanation; exit 2 on a missing or malformed file."""
    from jtac_py import reflexes

    path = Path(args.file)
    if not path.is_file():
        raise CliError(EXIT_USAGE, f"{path}: no such file")
    try:
        columns, meta = reflexes.load_trace(path)
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise CliError(EXIT_USAGE, f"{path}: not an .npz trace or recording ({error})") from None
    if "q_cmd" not in columns or not ({"tick", "flags"} <= set(columns) or "time" in columns):
        raise CliError(
            EXIT_USAGE, f"{path}: neither a fault trace (tick, flags, q_cmd) nor a recording (time, q_cmd)"
        )
    message = args.message if args.message is not None else meta.get("message", "")
    robot = args.robot or meta.get("robot", "fr3")
    explanation = reflexes.explain(message, columns, robot, detected_ns=meta.get("detected_ns"))
    if message:
        print(f"fault: {message}")
    print(explanation.text())
    return EXIT_OK
