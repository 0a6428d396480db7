"""The client's environment table (src/client/env_table.cc) against what depends on it: the run
file's allowlist, and every IORELAY_ variable the client and the interposer name in their code."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, require_built

from iorelay.run_file import RUN_FILE_KEYS

REPO_ROOT = Path(__file__).resolve().parents[2]
CARRIED_BY_RUN = "`iorelay run` sets it on every rank"


def env_table() -> dict[str, bool]:
    """Each variable of `iorelay-ctl env`, and whether `iorelay run` carries it."""
    ctl = require_built("iorelay-ctl")["iorelay-ctl"]
    listing = subprocess.run(
        [str(ctl), "env"], check=True, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S
    ).stdout
    table: dict[str, bool] = {}
    name = ""
    for line in listing.splitlines():
        if line.startswith("IORELAY_"):
            name = line.split()[0]
            table[name] = False
        elif line.strip() == CARRIED_BY_RUN:
            table[name] = True
    return table


@pytest.mark.needs_build("iorelay-ctl")
def test_the_run_file_carries_exactly_the_rows_marked_for_it() -> None:
    table = env_table()
    assert len(table) >= 19
    assert {name for name, carried in table.items() if carried} == set(RUN_FILE_KEYS)


@pytest.mark.needs_build("iorelay-ctl")
def test_every_variable_the_client_and_interposer_name_is_a_row() -> None:
    table = env_table()
    named: dict[str, str] = {}
    for directory in ("src/client", "src/preload"):
        for path in sorted((REPO_ROOT / directory).glob("*.[ch]*")):
            if path.stem.endswith("_test"):
                continue
            for literal in re.findall(r'"(?:[^"\\\n]|\\.)*"', path.read_text()):
                for name in re.findall(r"IORELAY_[A-Z_]*[A-Z]", literal):
                    named.setdefault(name, str(path.relative_to(REPO_ROOT)))
    assert "IORELAY_CWD" in named  # the scan sees the interposer's own names
    missing = {name: where for name, where in named.items() if name not in table}
    assert missing == {}
