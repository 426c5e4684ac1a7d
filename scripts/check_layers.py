"""The layers' dependency rules, checked on every include and import (`make lint`).

Each layer may use only the layers listed for it. A C++ file belongs to the layer of the top-level
folder it lives in, and uses a layer when it includes `"<layer>/..."`; a Python file belongs to its
package and uses a package when it imports it. Tests, benchmarks and bindings sit above the layer
they test, bind or measure, and are not checked here.

    python scripts/check_layers.py [ROOT]     exit 0: every edge allowed; 1: each violation listed
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# C++: layer -> the layers its library sources and headers may include (itself always).
CPP_LAYERS: dict[str, set[str]] = {
    "jtac_rt": set(),
    "jtac_core": {"jtac_rt"},
    "franka_hw": {"jtac_rt"},
    "jtac_loop": {"jtac_rt", "jtac_core", "franka_hw"},
}
# Where a C++ layer's library code lives (its tests and bindings are not library code).
CPP_LIBRARY_DIRS = ("include", "src")

# Python: package -> the project packages it may import (itself always).
PY_PACKAGES: dict[str, set[str]] = {
    "jtac_py": set(),
    "jtac_ros": {"jtac_py"},
}

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include\s*"([A-Za-z0-9_]+)/', re.MULTILINE)


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    used: str
    layer: str

    def __str__(self) -> str:
        allowed = sorted(CPP_LAYERS.get(self.layer, PY_PACKAGES.get(self.layer, set())))
        return (
            f"{self.path}:{self.line}: {self.layer} uses {self.used}, which it may not "
            f"(allowed: {', '.join(allowed) or 'nothing else'})"
        )


def cpp_violations(root: Path) -> list[Violation]:
    found = []
    known = set(CPP_LAYERS)
    for layer, allowed in CPP_LAYERS.items():
        for sub in CPP_LIBRARY_DIRS:
            for path in sorted((root / layer / sub).rglob("*")):
                if path.suffix not in (".hpp", ".h", ".cpp"):
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
                for match in _INCLUDE.finditer(text):
                    used = match.group(1)
                    if used in known and used != layer and used not in allowed:
                        line = text.count("\n", 0, match.start()) + 1
                        found.append(Violation(path.relative_to(root), line, used, layer))
    return found


def _imported_packages(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def python_violations(root: Path) -> list[Violation]:
    found = []
    known = set(PY_PACKAGES)
    for package, allowed in PY_PACKAGES.items():
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, used in _imported_packages(tree):
                if used in known and used != package and used not in allowed:
                    found.append(Violation(path.relative_to(root), line, used, package))
    return found


def violations(root: Path) -> list[Violation]:
    return cpp_violations(root) + python_violations(root)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    found = violations(root)
    for v in found:
        print(v, file=sys.stderr)
    if found:
        print(f"check_layers: {len(found)} forbidden edge(s); the rules: {__file__}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
