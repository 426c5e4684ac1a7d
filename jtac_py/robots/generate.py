"""Regenerate the committed robot descriptions: `python -m jtac_py.robots.generate [--check]`.

With --check nothing is written and the exit status is 1 when a committed file differs from the
generator's output (for CI).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jtac_py.robots import ROBOTS, mjcf_path, mjcf_xml, urdf_path, urdf_xml


def expected_files() -> dict[Path, str]:
    """Committed path -> text the generator makes for it (default tool)."""
    files = {}
    for robot in ROBOTS:
        files[urdf_path(robot)] = urdf_xml(robot)
        files[mjcf_path(robot)] = mjcf_xml(robot)
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
