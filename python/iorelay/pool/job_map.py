"""A job's map file: which of the pool's daemons (by index in IORELAY_SERVERS, which lists them
all) the job uses now, under an epoch that grows with every change. The controller rewrites it
atomically; the job's clients re-read it (IORELAY_MAP_FILE, docs/arbitration.md)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path


def write_map(path: Path, epoch: int, active: Sequence[int], locks: int | None = None) -> None:
    """Replaces path with {"epoch": epoch, "active": [indices], "locks": locks} (rename:
    readers see the old map or the new one, never a part). locks: the job's lock daemon, the
    same in every map of the job (its first I/O node), so that all its processes agree."""
    doc: dict[str, object] = {"epoch": epoch, "active": sorted(active)}
    if locks is not None:
        doc["locks"] = locks
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc) + "\n")
    os.replace(tmp, path)


def read_map(path: Path) -> tuple[int, list[int]]:
    data = json.loads(path.read_text())
    return int(data["epoch"]), [int(i) for i in data["active"]]
