"""Reading the small /proc and /sys files the checks are made of."""

from __future__ import annotations

from pathlib import Path


def read_small_file(path: Path | str) -> str | None:
    """A small /proc or /sys file, stripped; None when it is absent or unreadable."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None
