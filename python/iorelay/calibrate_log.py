"""The evaluation log of `iorelay calibrate --method global`: one JSON line per simulation of
all cells, so that a search stopped by its minutes, its evaluations, a crash or Ctrl-C resumes
where it stopped (`--resume`).

Resuming is exact, not approximate: differential evolution with the same seed proposes the same
points as long as each point gets the same objective, so a resumed search answers the logged
points from the log (no simulation) and simulates from the first point the log lacks on. The
log therefore starts with what fixes the search — the parameters, objective, seed, budgeted
population, a fingerprint of the cells and of the starting platform — and a resume under other
settings is refused, naming what differs.

Lines: `{"kind": "access_times", ...}` (the device's access-time stage, when it ran: its
platform, error and simulations, so a resume does not redo it), `{"kind": "search", ...}` (the
settings above), then `{"kind": "evaluation", "x": [...], "objective": v, "simulated": [...]}`.
A last line cut short by a crash is ignored; a malformed line before it is an error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from iorelay.calibrate import CalibrateError


def fingerprint(value: Any) -> str:
    """A short SHA-256 of a JSON document or of cells (pattern, option, median, request)."""
    if isinstance(value, pd.DataFrame):
        text = value.to_csv(index=False)
    else:
        text = json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read(path: Path) -> list[dict[str, Any]]:
    """The log's entries; [] when there is no log. A cut last line is dropped."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    entries = []
    for n, line in enumerate(lines, 1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines):  # a write cut by a crash
                break
            raise CalibrateError(f"{path}:{n}: not a calibration log line") from None
        if not isinstance(entry, dict) or entry.get("kind") not in KINDS:
            raise CalibrateError(f"{path}:{n}: not a calibration log line")
        entries.append(entry)
    return entries


KINDS = ("access_times", "search", "evaluation")


def of_kind(entries: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in entries if e["kind"] == kind]


def check_same_search(path: Path, logged: Mapping[str, Any], wanted: Mapping[str, Any]) -> None:
    """Refuses a resume whose settings differ from the logged search's."""
    differ = sorted(k for k in set(logged) | set(wanted) if logged.get(k) != wanted.get(k))
    if differ:
        raise CalibrateError(
            f"{path} logs another search (differs in {', '.join(differ)}): resume with the "
            "same measured cells, platform, parameters, objective, seed and evaluations, or "
            "give another --log"
        )


class Writer:
    """Appends entries, one line each, flushed at once (a crash loses at most the line being
    written). `fresh` empties the file first; otherwise a last line cut by a crash is cut off,
    so that the next entry starts a line of its own."""

    def __init__(self, path: Path, *, fresh: bool) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        text = "" if fresh or not path.exists() else path.read_text()
        if fresh or not text.endswith("\n"):
            path.write_text(text[: text.rfind("\n") + 1])

    def add(self, entry: Mapping[str, Any]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(entry) + "\n")
