"""What every ``jtac`` verb shares: exit statuses, the one-line error, argument types and the dispatch.

A verb module defines ``add_parser(sub)`` (its sub-parser, ``func`` set to its handler) and a handler
``handle(args) -> int``; ``run_verb`` calls the handler and turns a ``CliError``, Ctrl-C or a closed pipe
into the exit status the docs promise.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CliError",
    "matplotlib_missing",
    "positive_int",
    "run_verb",
    "seconds",
]

# 0 done; 1 the goal failed or the request was refused (doctor: a line failed); 2 bad usage, file or
# value, no node, or no ROS; 130 interrupted (Ctrl-C).
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class CliError(Exception):
    """A failure to report as one line on stderr, with its exit status."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def seconds(text: str) -> float:
    """Argument type: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0.0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a finite number of seconds >= 0")
    return value


def positive_int(text: str) -> int:
    """Argument type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an integer >= 1")
    return value


def matplotlib_missing(exc: ImportError) -> CliError:
    """The error of a plotting verb without the optional "plot" extra."""
    return CliError(EXIT_USAGE, f"plotting needs matplotlib ({exc}): pip install 'jtac-py[plot]'")


def run_verb(args: argparse.Namespace) -> int:
    """Runs the parsed verb's handler; returns the exit status."""
    try:
        return args.func(args)
    except CliError as exc:
        print(f"jtac {args.command}: {exc.message}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `jtac state | head`: the reader left; exit quietly (and keep Python from complaining at exit).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
