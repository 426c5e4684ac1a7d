"""clang-tidy over the C++ libraries' own sources, in parallel (`make lint`; docs/lint.md).

    python scripts/run_clang_tidy.py [BUILD_DIR] [-j JOBS]     exit 0: no finding; 1: findings listed

The sources are those of the build's compile_commands.json (written by CMake in `make setup`) that lie
in a library folder and not in a test folder: the flags are the build's own, and a device library that
this machine does not build (libfranka) is not analysed without its headers. The checks and the header
filter are in .clang-tidy; every finding is an error there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The real-time libraries (their sources and headers; the bindings are pybind11 conversion code whose
# template instantiations cost minutes per file, outside the budget of docs/lint.md).
LIBRARY_FOLDERS = ("jtac_rt", "jtac_core", "franka_hw", "jtac_loop")
_TEST_DIRS = {"test", "tests"}


def library_sources(build: Path) -> list[Path]:
    """The library .cpp files that the build compiles, relative to the root."""
    database = build / "compile_commands.json"
    if not database.exists():
        sys.exit(f"run_clang_tidy: {database} is missing: run `make setup` first")
    sources = set()
    for entry in json.loads(database.read_text()):
        path = (Path(entry["directory"]) / entry["file"]).resolve()
        if not path.is_relative_to(ROOT) or not path.exists():
            continue
        rel = path.relative_to(ROOT)
        if rel.parts[0] in LIBRARY_FOLDERS and not _TEST_DIRS & set(rel.parts[:-1]):
            sources.add(rel)
    return sorted(sources)


def _tidy(clang_tidy: str, build: Path, source: Path) -> tuple[Path, int, str, float]:
    start = time.monotonic()
    run = subprocess.run(
        [clang_tidy, "-p", str(build), "--quiet", str(source)], cwd=ROOT, capture_output=True, text=True
    )
    # clang-tidy prints "N warnings generated." for system headers it filtered: noise on success.
    output = run.stdout + "".join(
        line + "\n" for line in run.stderr.splitlines() if not line.endswith("generated.")
    )
    return source, run.returncode, output, time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="build/py", help="build tree with compile_commands.json")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2, help="files analysed at once")
    args = parser.parse_args(argv)
    build = (ROOT / args.build).resolve()
    clang_tidy = str(Path(sys.executable).parent / "clang-tidy")
    sources = library_sources(build)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda s: _tidy(clang_tidy, build, s), sources))
    failed = [(source, output) for source, code, output, _ in results if code != 0]
    for source, output in failed:
        print(f"--- {source}\n{output}", file=sys.stderr)
    slowest = max(results, key=lambda r: r[3], default=None)
    elapsed_s = time.monotonic() - start
    summary = f"clang-tidy: {len(sources)} files, {len(failed)} with findings, {elapsed_s:.0f} s"
    if slowest:
        summary += f" (slowest {slowest[0]}: {slowest[3]:.0f} s)"
    print(summary, file=sys.stderr if failed else sys.stdout)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
