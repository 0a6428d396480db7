"""The pattern a run showed its I/O nodes: read from the daemons' request traces (format
version 2, iorelay.trace), one per I/O node of that run. Pure functions over the traces' tables.

A trace does not hold the node count, so the caller gives it. Ranks are the client sessions
that made data requests, summed over the traces: under block placement each rank reaches one I/O
node, so each appears in one trace (`--ranks` overrides it for other placements)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from iorelay.advise.observed import Observed, ObservedError, majority

WRITE_OPS = ("pwrite", "write", "pwrite_piped", "pwrite_ranges")
READ_OPS = ("pread", "read", "pread_piped")


def data_requests(traces: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The answered data requests of all traces, with `trace` (its index) and `rank` (trace and
    session) columns."""
    parts = []
    for i, t in enumerate(traces):
        rows = t[t["op"].isin(WRITE_OPS + READ_OPS) & (t["result"].astype("int64") > 0)].copy()
        rows["trace"] = i
        parts.append(rows)
    data = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if data.empty:
        raise ObservedError("the traces hold no answered read or write request")
    data["rank"] = data["trace"].astype(str) + ":" + data["session"].astype(str)
    data["file"] = data["dev"].astype(str) + ":" + data["ino"].astype(str)
    return data


def consecutive_share(requests: pd.DataFrame) -> float:
    """The share of requests that start where the same rank's previous request on the same file
    ended (by arrival), over the requests that have a previous one."""
    ordered = requests.sort_values(["rank", "file", "arrival_ns"])
    end = ordered["offset"].astype("int64") + ordered["size"].astype("int64")
    same = (ordered["rank"] == ordered["rank"].shift()) & (
        ordered["file"] == ordered["file"].shift()
    )
    follows = ordered["offset"].astype("int64") == end.shift()
    n = int(same.sum())
    return float((same & follows).sum() / n) if n else 1.0


def trace_pattern(traces: Sequence[pd.DataFrame]) -> Observed:
    """Layout, spatiality, request size, ranks, operation and O_DIRECT of the traced run, each
    by the majority of its bytes or requests, with the evidence."""
    data = data_requests(traces)
    written = int(data.loc[data["op"].isin(WRITE_OPS), "result"].astype("int64").sum())
    read = int(data.loc[data["op"].isin(READ_OPS), "result"].astype("int64").sum())
    operation = "write" if written >= read else "read"
    mine = data[data["op"].isin(WRITE_OPS if operation == "write" else READ_OPS)]
    sharers = mine.groupby("file")["rank"].nunique()
    bytes_per_file = mine.groupby("file")["result"].sum().astype(float)
    shared_share = float(bytes_per_file[sharers > 1].sum() / bytes_per_file.sum())
    layout = "shared" if majority(shared_share) else "fpp"
    consecutive = consecutive_share(mine)
    spatiality = "contiguous" if majority(consecutive) else "strided"
    request = int(np.median(mine["size"].astype("int64")))
    ranks = int(data["rank"].nunique())
    direct_share = float(mine["flags"].astype(str).str.contains("D").mean())
    odirect = "yes" if majority(direct_share) else "no"
    evidence = [
        f"{len(traces)} trace(s), {len(data)} data requests: {written} bytes written, "
        f"{read} read -> operation={operation}",
        f"{shared_share:.0%} of the {operation} bytes went to files of several ranks "
        f"-> layout={layout}",
        f"{consecutive:.0%} of the {operation} requests followed the same rank's previous one "
        f"on the file -> spatiality={spatiality}",
        f"median {operation} request {request} bytes -> request={request}",
        f"{ranks} client sessions with data requests -> ranks={ranks}",
        f"{direct_share:.0%} of the {operation} requests on O_DIRECT files -> odirect={odirect}",
    ]
    keys = {
        "layout": layout,
        "spatiality": spatiality,
        "request": str(request),
        "ranks": str(ranks),
        "operation": operation,
        "odirect": odirect,
    }
    return Observed(keys, evidence)
