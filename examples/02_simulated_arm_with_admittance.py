"""Example 02 (`make demo`): the simulated FR3 executes a trajectory with admittance while it is pushed.

The job itself is jtac_py/demo.py (`jtac demo` runs the same from an installed wheel): the MuJoCo FR3
with a 0.5 kg tool executes a 7-joint out-and-back trajectory, compliant in x/y/z at the end effector
(K = 400 N/m), while a 15 N push hits the tool for 1.5 s; it prints the result code, the tracking error,
the peak deflection and force and the loop timing, and writes the plots and the recording (.npz, .mcap).

Run: .venv/bin/python examples/02_simulated_arm_with_admittance.py [--lockstep] [--out DIR] [--no-plots]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jtac_py import demo

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockstep", action="store_true", help="virtual clock: deterministic, faster")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "demo", help="plots and recording")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)
    result = demo.run(args.out, lockstep=args.lockstep, plots=not args.no_plots)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
