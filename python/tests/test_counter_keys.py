"""Every connection counter the docs, the Python tooling and the benchmarks name is one the daemon
reports: docs/daemon.md's counters table, which daemon_stats_test keeps equal to
src/daemon/conn_counters.h, is the list."""

from __future__ import annotations

import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
COUNTER = re.compile(r"\b(?:connections_[a-z_]*[a-z]|fenced_writes)\b")


def documented_counters() -> set[str]:
    text = (REPO_ROOT / "docs/daemon.md").read_text()
    table = text.split("<!-- connection-counters:begin", 1)[1].split(
        "<!-- connection-counters:end"
    )[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.MULTILINE))


def test_the_table_lists_every_counter_once() -> None:
    keys = documented_counters()
    assert len(keys) == 26  # 24 counters, and the gauge's now and peak
    assert {"connections_accepted", "connections_receiving_bytes_peak", "fenced_writes"} <= keys


def test_every_counter_named_in_docs_tooling_and_benchmarks_exists() -> None:
    keys = documented_counters()
    sources = [*REPO_ROOT.glob("docs/**/*.md"), REPO_ROOT / "README.md"]
    sources += [*REPO_ROOT.glob("python/iorelay/**/*.py"), *REPO_ROOT.glob("bench/*.py")]
    named = {
        name: str(path.relative_to(REPO_ROOT))
        for path in sources
        for name in COUNTER.findall(path.read_text())
    }
    assert "connections_shm_attached" in named  # the scan reads what the tooling reads
    assert {name: where for name, where in named.items() if name not in keys} == {}
