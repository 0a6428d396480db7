"""Reads iorelayd's request trace (`iorelayd --trace FILE`), format version 2.

The file is a line `# iorelay-trace 2`, a header row, then one tab-separated row per answered
request (columns in docs/daemon.md, "Trace"). `read_trace` returns them as a DataFrame, one row
per request, with integer columns typed as integers.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

FORMAT_VERSION = 2
COLUMNS = (
    "arrival_ns", "completion_ns", "session", "app", "dev", "ino", "op", "handle", "offset",
    "size", "flags", "dispatch", "queue_ns", "result",
)  # fmt: skip
_TEXT_COLUMNS = {"app", "op", "flags"}


class TraceError(ValueError):
    """Not an iorelay trace of a version this code reads."""


def read_trace(path: str | Path) -> pd.DataFrame:
    """The trace's requests; TraceError when the version line or the header is not right."""
    path = Path(path)
    with path.open() as f:
        first = f.readline().rstrip("\n")
        header = f.readline().rstrip("\n")
    expected = f"# iorelay-trace {FORMAT_VERSION}"
    if first != expected:
        raise TraceError(f"{path}: starts with {first!r}, expected {expected!r}")
    if tuple(header.split("\t")) != COLUMNS:
        raise TraceError(f"{path}: header {header!r} is not the version {FORMAT_VERSION} header")
    dtypes = {c: (str if c in _TEXT_COLUMNS else "int64") for c in COLUMNS}
    dtypes["dev"] = dtypes["ino"] = dtypes["session"] = dtypes["handle"] = "uint64"
    dtypes["offset"] = dtypes["size"] = dtypes["dispatch"] = "uint64"
    return pd.read_csv(path, sep="\t", skiprows=1, dtype=dtypes, keep_default_na=False)
