"""Every relative Markdown link in README.md, docs/ and bench/results/ names a file that exists,
so moving a page (docs/collective.md's history to docs/results-collective.md) cannot leave a
reader at a dead link."""

from __future__ import annotations

import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def markdown_files() -> list[Path]:
    return [
        REPO_ROOT / "README.md",
        *sorted((REPO_ROOT / "docs").rglob("*.md")),
        *sorted((REPO_ROOT / "bench" / "results").rglob("*.md")),
    ]


def test_relative_links_name_existing_files() -> None:
    dead = []
    for page in markdown_files():
        for target in LINK.findall(page.read_text(errors="replace")):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            path = target.split("#", 1)[0]
            if not (page.parent / path).exists():
                dead.append(f"{page.relative_to(REPO_ROOT)}: {target}")
    assert not dead, dead
    assert len(markdown_files()) > 10
