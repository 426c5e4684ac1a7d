"""Regenerate the committed robot descriptions: `python -m jtac_py.robots.generate [--check]`.

Besides the URDF and MJCF of every robot it writes franka_hw's robot_limits.hpp (the joint limits
of the C++ limiters), so that tables.py is the one source of those numbers too.

With --check nothing is written and the exit status is 1 when a committed file differs from the
generator's output (for CI).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jtac_py.robots import ROBOTS, mjcf_path, mjcf_xml, robot_spec, urdf_path, urdf_xml
from jtac_py.robots._generator import robot_limits_hpp

# franka_hw's generated header, in the source tree beside jtac_py (absent from an installed wheel).
ROBOT_LIMITS_HPP = (
    Path(__file__).resolve().parents[2] / "franka_hw" / "include" / "franka_hw" / "robot_limits.hpp"
)


def expected_files() -> dict[Path, str]:
    """Committed path -> text the generator makes for it (descriptions with the default tool)."""
    files = {}
    for robot in ROBOTS:
        files[urdf_path(robot)] = urdf_xml(robot)
        files[mjcf_path(robot)] = mjcf_xml(robot)
    if ROBOT_LIMITS_HPP.parent.is_dir():
        files[ROBOT_LIMITS_HPP] = robot_limits_hpp([robot_spec(robot) for robot in ROBOTS])
    return files


def main(argv: list[str] | None = None) -> int:
    """Write (or with --check, compare) every committed description; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    stale = []
    for path, text in expected_files().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(path)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    for path in stale:
        print(f"stale: {path} (run python -m jtac_py.robots.generate)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
