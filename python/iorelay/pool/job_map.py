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


M64 = (1 << 64) - 1


def placed_daemon(path: str, daemons: int) -> int:
    """Which of `daemons` in use the client's file-hash placement puts `path` on
    (src/client/placement.cc: splitmix64's finaliser of FNV-1a 64 of the path, mod the daemons)."""
    h = 0xCBF29CE484222325
    for c in path.encode():
        h = ((h ^ c) * 0x100000001B3) & M64
    h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & M64
    h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & M64
    return (h ^ (h >> 31)) % daemons
