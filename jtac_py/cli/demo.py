"""``jtac demo``: the simulated FR3 follows a trajectory with admittance while pushed (no ROS)."""

from __future__ import annotations

import argparse
from pathlib import Path

from jtac_py.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError

__all__ = ["add_parser", "handle"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``demo`` sub-parser."""
    p = sub.add_parser(
        "demo",
        help="the simulated FR3 follows a trajectory with admittance while pushed; results and plots",
        description="The MuJoCo FR3 with a 0.5 kg tool executes a 7-joint out-and-back trajectory, compliant "
        "in x/y/z at the end effector (400 N/m), while a 15 N push hits the tool for 1.5 s. Prints the "
        "result, the tracking error, the peak deflection and force and the loop timing; writes "
        "demo_tracking.png, demo_wrench.png, demo_deflection.png, demo_timing.png (with matplotlib), "
        "demo_recording.npz and demo.mcap (with the mcap packages) into --out. Exit 0 when the goal "
        "succeeded, 1 otherwise.",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="folder for the plots and the recording (default: the current one; created when missing)",
    )
    p.add_argument(
        "--lockstep", action="store_true", help="on a virtual clock: deterministic, in about a second"
    )
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.set_defaults(func=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Runs the demo into args.out; exit 0 when the goal succeeded, 1 when it did not."""
    out: Path = args.out
    if out.exists() and not out.is_dir():
        raise CliError(EXIT_USAGE, f"--out {out}: exists and is not a folder")
    try:
        from jtac_py import demo
    except ImportError as exc:
        raise CliError(
            EXIT_USAGE, f"the demo needs the simulated arm ({exc}): pip install 'jtac-py[sim]'"
        ) from None
    result = demo.run(out, lockstep=args.lockstep, plots=not args.no_plots)
    return EXIT_OK if result.ok else EXIT_FAILED
