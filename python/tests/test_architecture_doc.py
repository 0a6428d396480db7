"""docs/architecture.md stays true: every folder under src/ has a row in its layout table, and
every function, type and file it names in backticks exists in the tree (a renamed function or
a moved file fails here, not in a newcomer's reading)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DOC = REPO_ROOT / "docs/architecture.md"
CODE_DIRS = ("src", "tools", "include", "tests", "bench", "python/iorelay")
# A C++ name in backticks: CamelCase, or qualified (Client::Call), or the C API's iorelay_*.
CXX_NAME = re.compile(
    r"`((?:[A-Z][A-Za-z0-9]*::)*[A-Z][a-z][A-Za-z0-9_]*|iorelay_[a-z_]+)(?:\(\))?`"
)
PATH = re.compile(r"`((?:src|tools|include|tests|bench|python|docs|platforms|examples)/[^`\s*]+)`")


def layout_table_folders(text: str) -> set[str]:
    table = text.split("| layer | folder |", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"`(src/[a-z_]+)`", table))


@cache
def code_words() -> frozenset[str]:
    words: set[str] = set()
    for top in CODE_DIRS:
        for path in (REPO_ROOT / top).rglob("*"):
            if (
                path.suffix in {".h", ".cc", ".c", ".py"} or path.name == "CMakeLists.txt"
            ) and path.is_file():
                words.update(
                    re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text(errors="replace"))
                )
    return frozenset(words)


def test_every_source_folder_has_a_row_in_the_layout_table() -> None:
    folders = {f"src/{p.name}" for p in (REPO_ROOT / "src").iterdir() if p.is_dir()}
    assert folders - layout_table_folders(DOC.read_text()) == set()


def test_every_name_the_document_gives_exists_in_the_code() -> None:
    names = set(CXX_NAME.findall(DOC.read_text()))
    assert len(names) > 30  # the scan finds what the walk-through names
    missing = {n for n in names if not set(n.split("::")) <= code_words()}
    assert missing == set()


def test_every_path_the_document_gives_exists() -> None:
    # NAME_scheduler.cc and foo.{h,cc} are patterns for new files, not paths.
    paths = {
        p.rstrip(".,;:)") for p in PATH.findall(DOC.read_text()) if "NAME" not in p and "{" not in p
    }
    assert len(paths) > 20
    assert {p for p in paths if not (REPO_ROOT / p).exists()} == set()
