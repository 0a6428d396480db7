#!/usr/bin/env python3
"""Writes bench/results/README.md: one row per result (a Markdown file, or a folder of them),
with its title, the date of the commit that last changed it, and the command that made it
where the result names one. Run it after adding a result:

    .venv/bin/python bench/results_index.py
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
INDEX = RESULTS / "README.md"
COMMAND = re.compile(r"`((?:\.venv/bin/)?python[3]? bench/[^`]+|bash bench/[^`]+)`")


def last_commit_date(path: Path) -> str:
    out = subprocess.run(
        ["git", "log", "-1", "--format=%as", "--", str(path)],
        cwd=RESULTS, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return out.stdout.strip() or "not committed"


def describe(path: Path) -> tuple[str, str]:
    """(title, command) of a result file, or of a folder's first Markdown file."""
    md = path if path.is_file() else next(iter(sorted(path.glob("*.md"))), None)
    if md is None:
        return "(no Markdown summary)", ""
    text = md.read_text(errors="replace")
    title = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.strip()), "")
    command = COMMAND.search(text)
    return title[:120], command.group(1) if command else ""


def main() -> int:
    entries = [p for p in sorted(RESULTS.iterdir()) if p.name != INDEX.name]
    entries = [p for p in entries if p.is_dir() or p.suffix == ".md"]
    lines = [
        "# Benchmark results",
        "",
        "Every result the benchmarks in `bench/` wrote, one row each (JSON files beside a",
        "Markdown file hold its raw series). The figures are discussed in `docs/results.md`.",
        "This file is written by `.venv/bin/python bench/results_index.py`.",
        "",
        "| result | title | last changed | command |",
        "|---|---|---|---|",
    ]
    for p in entries:
        title, command = describe(p)
        name = p.name + ("/" if p.is_dir() else "")
        cmd = f"`{command}`" if command else ""
        title = title.replace("|", "\\|")
        lines.append(f"| [`{name}`]({p.name}) | {title} | {last_commit_date(p)} | {cmd} |")
    INDEX.write_text("\n".join(lines) + "\n")
    print(f"{INDEX}: {len(entries)} results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
