"""The documentation names only what exists: every relative link and every repository path in backticks
in the front-door pages, so that a file moved without its docs fails here instead of misleading a reader.

A backticked repository path is a token without spaces whose first part is a top-level entry of the
repository (`jtac_py/arms.py`, `franka_hw/test/`). It exists when it names a file or folder from the
repository root or from the page's own folder, or when it is an include path (`jtac_loop/control_law.hpp`
under some `*/include/`); `*` matches as in a shell glob. Paths under build outputs (`build/`, the venvs)
and placeholders (`<name>`, `a/.../b`) are not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "ARCHITECTURE.md",
        ROOT / "bench" / "README.md",
        ROOT / "franka_hw" / "README.md",
        ROOT / "jtac_loop" / "README.md",
        *(ROOT / "docs").glob("*.md"),
    ]
)
GENERATED_ROOTS = ("build", ".venv", ".venv-sim")
# Top-level entries that are checked, not the names of ROS packages or topics that look like paths
# (`jtac/action/...`, `control_msgs/msg/...`): those are no entries of the repository root.
TOP_LEVEL = {p.name for p in ROOT.iterdir() if not p.name.startswith(".") or p.name == ".ci"}

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_PATH = re.compile(r"[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-*]+)*/?")


def _prose(page: Path) -> str:
    """The page without its fenced code blocks (commands and listings, not references)."""
    return _FENCE.sub("", page.read_text(encoding="utf-8"))


def _exists(path: str, page: Path) -> bool:
    path = path.rstrip("/")
    bases = [ROOT, page.parent, *ROOT.glob("*/include"), *ROOT.glob("*/*/include")]
    return any(next(iter(base.glob(path)), None) is not None for base in bases)


def _backticked_paths(page: Path) -> list[str]:
    found = []
    for token in _INLINE_CODE.findall(_prose(page)):
        token = token.strip()
        if "/" not in token or not _PATH.fullmatch(token):
            continue
        if token.split("/", 1)[0] not in TOP_LEVEL or token.startswith(GENERATED_ROOTS):
            continue
        if "..." in token:
            continue  # an elided path (`franka_hw/.../robot_limits.hpp`), a placeholder
        found.append(token)
    return found


def _relative_links(page: Path) -> list[str]:
    links = []
    for target in _LINK.findall(_prose(page)):
        if re.match(r"[a-z][a-z0-9+.\-]*:", target) or target.startswith("#"):
            continue  # a URL (http:, mailto:) or an anchor on the same page
        links.append(target.split("#", 1)[0])
    return links


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_the_pages_exist():
    for name in ("README.md", "ARCHITECTURE.md", "bench/README.md", "docs/extending.md"):
        assert (ROOT / name).is_file(), name


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_relative_links_point_at_files(page: Path):
    missing = [link for link in _relative_links(page) if not (page.parent / link).exists()]
    assert not missing, f"{_page_id(page)} links to paths that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_backticked_repository_paths_exist(page: Path):
    missing = sorted({path for path in _backticked_paths(page) if not _exists(path, page)})
    assert not missing, f"{_page_id(page)} names repository paths that do not exist: {missing}"


def test_the_checker_sees_a_missing_path(tmp_path: Path):
    """A planted page with one good and one stale path and link: only the stale ones are reported."""
    page = tmp_path / "page.md"
    page.write_text(
        "See `jtac_py/controller.py`, `jtac_py/no_such_module.py`, `jtac/action/Foo` (a ROS name),\n"
        "`jtac_py/.../elided.py`,\n"
        "[the README](../README.md), [gone](gone.md), [web](https://example.org) and\n"
        "```\nmake demo   # `jtac_py/not_checked_in_a_fence.py`\n```\n",
        encoding="utf-8",
    )
    paths = _backticked_paths(page)
    assert paths == ["jtac_py/controller.py", "jtac_py/no_such_module.py"]
    assert [p for p in paths if not _exists(p, page)] == ["jtac_py/no_such_module.py"]
    assert _relative_links(page) == ["../README.md", "gone.md"]
