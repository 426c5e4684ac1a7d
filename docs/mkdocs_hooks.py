"""mkdocs hook (mkdocs.yml ``hooks``): links from a guide to a repository file outside docs/.

The guides link a few files that are in the repository but not on the site (``../ARCHITECTURE.md``,
``../bench/README.md``). On the site each such link becomes its text with the repository path beside
it; one whose file does not exist is a warning, which fails the strict build like a broken link
inside docs/ does (mkdocs' own ``validation.links.not_found``).
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOG = logging.getLogger("mkdocs.plugins.jtac_outside_links")
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Rewrites the page's links that leave docs/ and warns about those whose file is missing."""
    docs = Path(config["docs_dir"]).resolve()
    here = (docs / page.file.src_path).parent

    def rewrite(match: re.Match[str]) -> str:
        text, target = match.group(1), match.group(2)
        if "://" in target or target.startswith(("mailto:", "/")):
            return match.group(0)
        path = (here / target).resolve()
        if path.is_relative_to(docs):
            return match.group(0)  # mkdocs validates links inside docs/
        # the same place from the repository's docs/ (the pages may be built from a copy)
        path = (ROOT / "docs" / os.path.relpath(path, docs)).resolve()
        if not path.exists():
            LOG.warning("%s: the link %r names %s, which does not exist", page.file.src_path, target, path)
            return match.group(0)
        where = os.path.relpath(path, ROOT)
        if text.strip("`") in (where, path.name):
            return f"`{where}` (in the repository)"
        return f"{text} (`{where}` in the repository)"

    return LINK.sub(rewrite, markdown)
