"""Where `iorelay advise` keeps the sources' scores between calls: keyed by the hash of the
measured files' bytes (and the scoring's version), in the user's cache folder, never beside the
data (which may be read-only)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Raised whenever the scoring changes, so older records are not reused (the sources' and the
# candidates' names are part of the key too).
SCORING_VERSION = 4


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/iorelay/advise, else ~/.cache/iorelay/advise."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "iorelay" / "advise"


def data_hash(files: Sequence[Path], scoring: Sequence[str] = ()) -> str:
    """SHA-256 of the files' names and bytes, the SCORING_VERSION and the `scoring` names."""
    digest = hashlib.sha256(f"scoring {SCORING_VERSION}\n".encode())
    for name in scoring:
        digest.update(name.encode() + b"\n")
    for f in sorted(files, key=lambda p: p.name):
        digest.update(f.name.encode() + b"\0")
        digest.update(f.read_bytes())
    return digest.hexdigest()


def load(key: str) -> dict[str, Any] | None:
    path = cache_dir() / f"{key}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def store(key: str, record: dict[str, Any]) -> None:
    """Best effort: an unwritable cache only means scoring again next time."""
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{key}.json.tmp{os.getpid()}"
        tmp.write_text(json.dumps(record, indent=1))
        tmp.replace(folder / f"{key}.json")
    except OSError:
        pass
