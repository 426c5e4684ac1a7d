"""jtac's version is written once, in jtac_py/__init__.py; check that everything else agrees (`make lint`).

    python scripts/check_version.py [WHEEL...]    exit 0: all agree; 1: each disagreement listed

Read from jtac_py/__init__.py (``__version__``): the wheel's metadata (pyproject.toml's regex provider)
and CMake's project version (CMakeLists.txt). Repeated, and checked here: package.xml's <version> (ament
reads it there) and pyproject.toml still taking the version from jtac_py/__init__.py. Given wheel files,
also their names' versions (scripts/test_wheel.sh passes the one it built).
"""

from __future__ import annotations

import re
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_version(root: Path = ROOT) -> str:
    """``__version__`` of jtac_py/__init__.py."""
    text = (root / "jtac_py" / "__init__.py").read_text()
    match = re.search(r'^__version__ = "([^"]+)"$', text, flags=re.MULTILINE)
    if match is None:
        raise SystemExit('check_version: no line __version__ = "X.Y.Z" in jtac_py/__init__.py')
    return match.group(1)


def problems(root: Path = ROOT, wheels: list[Path] | None = None) -> list[str]:
    """Every place whose version disagrees with jtac_py/__init__.py's, one line each."""
    version = python_version(root)
    found: list[str] = []
    xml_version = ET.parse(root / "package.xml").getroot().findtext("version")
    if xml_version != version:
        found.append(f"package.xml: <version> is {xml_version!r}, jtac_py/__init__.py has {version!r}")
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    project = pyproject["project"]
    if "version" in project or "version" not in project.get("dynamic", []):
        found.append(
            f"pyproject.toml: [project] must list version in dynamic and set none (version = "
            f"{project.get('version')!r}, dynamic = {project.get('dynamic')!r})"
        )
    sources = [
        entry.get("input")
        for entry in pyproject.get("tool", {}).get("dynamic-metadata", [])
        if entry.get("field") == "version"
    ]
    if sources != ["jtac_py/__init__.py"]:
        found.append(
            f"pyproject.toml: [[tool.dynamic-metadata]] takes the version from {sources}, "
            "not from jtac_py/__init__.py alone"
        )
    for wheel in wheels or []:
        # {distribution}-{version}-{python tag}-{abi tag}-{platform tag}.whl
        wheel_version = Path(wheel).name.split("-")[1]
        if wheel_version != version:
            found.append(
                f"{wheel}: the wheel's version is {wheel_version!r}, jtac_py/__init__.py has {version!r}"
            )
    return found


def main(argv: list[str]) -> int:
    found = problems(ROOT, [Path(a) for a in argv])
    for line in found:
        print(f"check_version: {line}", file=sys.stderr)
    if not found:
        print(f"check_version: {python_version()} everywhere")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
