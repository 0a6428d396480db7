"""The pattern a Darshan log records, from the summary darshan_child prints: pure functions over
its counters. Read from the POSIX module (the calls that reach the file system, as they would
reach the I/O nodes): the operation with more bytes, shared or per-process files by the bytes in
shared records (rank -1), contiguous or strided by the share of consecutive accesses, the
request size from the access-size histogram and the most common access sizes. Darshan does not
record O_DIRECT nor the node count; the share of the job's time spent in I/O and the file
system of the busiest file come with the pattern."""

from __future__ import annotations

from typing import Any

from iorelay.advise.observed import Observed, ObservedError, majority

# The POSIX access-size histogram's bins, (suffix, low, high) in bytes (high inclusive).
BINS = (
    ("0_100", 0, 100), ("100_1K", 101, 1024), ("1K_10K", 1025, 10240),
    ("10K_100K", 10241, 102400), ("100K_1M", 102401, 1 << 20), ("1M_4M", (1 << 20) + 1, 4 << 20),
    ("4M_10M", (4 << 20) + 1, 10 << 20), ("10M_100M", (10 << 20) + 1, 100 << 20),
    ("100M_1G", (100 << 20) + 1, 1 << 30), ("1G_PLUS", (1 << 30) + 1, 1 << 40),
)  # fmt: skip


def _sum(rows: list[dict[str, Any]], counter: str) -> float:
    return float(sum(max(0, r.get(counter, 0)) for r in rows))


def request_size(rows: list[dict[str, Any]], op: str) -> tuple[int, str]:
    """The typical request of `op` (READ or WRITE): the histogram bin holding the median
    access, then the most common recorded access size inside that bin (else the mean size of
    the op's accesses when inside it, else the bin's geometric middle); with how it was found."""
    counts = [_sum(rows, f"POSIX_SIZE_{op}_{suffix}") for suffix, _, _ in BINS]
    total = sum(counts)
    running, chosen = 0.0, BINS[0]
    for bin_, c in zip(BINS, counts, strict=True):
        running += c
        if running >= total / 2:
            chosen = bin_
            break
    _, low, high = chosen
    common: dict[int, float] = {}
    for r in rows:
        for i in range(1, 5):
            size, n = r.get(f"POSIX_ACCESS{i}_ACCESS", 0), r.get(f"POSIX_ACCESS{i}_COUNT", 0)
            if n > 0 and low <= size <= high:
                common[size] = common.get(size, 0) + n
    where = f"median access in the {chosen[0].replace('_', '-')} bytes bin"
    if common:
        size = max(common, key=lambda s: (common[s], -s))
        return size, f"{where}, most common recorded access size there"
    ops = _sum(rows, f"POSIX_{op}S")
    mean = _sum(rows, f"POSIX_BYTES_{'READ' if op == 'READ' else 'WRITTEN'}") / max(ops, 1.0)
    if low <= mean <= high:
        return max(1, round(mean)), f"{where}, mean access size"
    return max(1, round((max(low, 1) * high) ** 0.5)), f"{where}, its geometric middle"


def file_system(summary: dict[str, Any], rows: list[dict[str, Any]]) -> str | None:
    """The mount table's file-system type of the file with the most bytes (longest mount
    point that prefixes its name)."""
    if not rows:
        return None
    busiest = max(
        rows, key=lambda r: r.get("POSIX_BYTES_READ", 0) + r.get("POSIX_BYTES_WRITTEN", 0)
    )
    name = str(busiest.get("name", ""))
    mounts = [(str(m[0]), str(m[1])) for m in summary.get("mounts", []) if len(m) >= 2]
    matches = [m for m in mounts if name.startswith(m[0].rstrip("/") + "/") or name == m[0]]
    return max(matches, key=lambda m: len(m[0]))[1] if matches else None


def darshan_pattern(summary: dict[str, Any]) -> Observed:
    """The Observed pattern of a darshan_child summary; ObservedError when the log holds no
    POSIX or MPI-IO records, or none that moved data."""
    modules = summary.get("modules", {})
    if "POSIX" not in modules and "MPI-IO" not in modules:
        names = ", ".join(sorted(modules)) or "none"
        raise ObservedError(f"the log holds no POSIX or MPI-IO records (its modules: {names})")
    rows = summary.get("records", {}).get("POSIX", [])
    mpiio = summary.get("records", {}).get("MPI-IO", [])
    if not rows and not mpiio:
        raise ObservedError(
            "the log's POSIX and MPI-IO modules hold zero records (a truncated log reads so)"
        )
    written, read = _sum(rows, "POSIX_BYTES_WRITTEN"), _sum(rows, "POSIX_BYTES_READ")
    if written + read == 0:
        moved = _sum(mpiio, "MPIIO_BYTES_WRITTEN") + _sum(mpiio, "MPIIO_BYTES_READ")
        raise ObservedError(
            "its POSIX records move no data"
            + (" (its MPI-IO records do, but MPI-IO does not record spatiality)" if moved else "")
        )
    operation = "write" if written >= read else "read"
    ranks = int(summary["nprocs"])
    keys, lines = access_keys(rows, operation)
    io_time = sum(r.get(f"POSIX_F_{t}_TIME", 0.0) for r in rows for t in ("READ", "WRITE", "META"))
    wall = ranks * float(summary.get("run_time_s") or 0.0)
    share = min(1.0, io_time / wall) if wall > 0 else None
    fs = file_system(summary, rows)
    evidence = [
        f"Darshan log version {summary.get('log_version')}, {ranks} processes, run time "
        f"{summary.get('run_time_s', 0):g} s, {len(rows)} POSIX records",
        f"{int(written)} bytes written, {int(read)} read -> operation={operation}",
        *lines,
        f"{ranks} processes -> ranks={ranks}",
        "O_DIRECT: not recorded by Darshan -> odirect=no (buffered)",
        "share of the job's time in I/O (POSIX read, write and metadata time / processes x "
        "run time): " + (f"{share:.1%}" if share is not None else "unknown (no run time)"),
        f"file system of the busiest file: {fs or 'not in the mount table'}",
    ]
    keys = {**keys, "ranks": str(ranks), "operation": operation, "odirect": "no"}
    notes: dict[str, Any] = {"io_time_share": share, "file_system": fs}
    found = phases(rows, ranks)
    if len({tuple(sorted(p["keys"].items())) for p in found}) > 1:
        notes["phases"] = found
    return Observed(keys, evidence, notes)


def access_keys(rows: list[dict[str, Any]], operation: str) -> tuple[dict[str, str], list[str]]:
    """Layout, spatiality and request size of `operation` in the POSIX records `rows`, with an
    evidence line for each."""
    op = "WRITE" if operation == "write" else "READ"
    moved_counter = "POSIX_BYTES_WRITTEN" if op == "WRITE" else "POSIX_BYTES_READ"
    moved = _sum(rows, moved_counter)
    shared = _sum([r for r in rows if r["rank"] == -1], moved_counter) / max(moved, 1.0)
    layout = "shared" if majority(shared) else "fpp"
    accesses = _sum(rows, f"POSIX_{op}S")
    consecutive = _sum(rows, f"POSIX_CONSEC_{op}S") / max(accesses, 1.0)
    spatiality = "contiguous" if majority(consecutive) else "strided"
    request, how = request_size(rows, op)
    lines = [
        f"{shared:.0%} of the bytes {'written' if op == 'WRITE' else 'read'} in files shared by "
        f"all ranks -> layout={layout}",
        f"{consecutive:.0%} of the {int(accesses)} {operation}s consecutive -> "
        f"spatiality={spatiality}",
        f"{how} -> request={request}",
    ]
    return {"layout": layout, "spatiality": spatiality, "request": str(request)}, lines


def _moved(row: dict[str, Any]) -> tuple[str, float, float, float]:
    """A record's main operation (more bytes), its bytes and the window of that operation's
    accesses (seconds since the job's start)."""
    written, read = row.get("POSIX_BYTES_WRITTEN", 0), row.get("POSIX_BYTES_READ", 0)
    op = "WRITE" if written >= read else "READ"
    start = float(row.get(f"POSIX_F_{op}_START_TIMESTAMP", 0.0))
    end = float(row.get(f"POSIX_F_{op}_END_TIMESTAMP", start))
    return ("write" if op == "WRITE" else "read"), float(max(written, read)), start, end


def phases(rows: list[dict[str, Any]], nprocs: int) -> list[dict[str, Any]]:
    """The job's I/O phases by its per-file POSIX records: each record that moved data stands at
    the first access of its main operation; in that order, a new phase starts where the main
    operation changes. Per phase: its operation, window, records, bytes, ranks (all processes
    when a shared record is in it, else the distinct ranks) and pattern keys."""
    timed = sorted(
        ((_moved(r), r) for r in rows if _moved(r)[1] > 0), key=lambda t: (t[0][2], t[0][3])
    )
    groups: list[tuple[str, list[tuple[tuple[str, float, float, float], dict[str, Any]]]]] = []
    for moved, row in timed:
        if not groups or groups[-1][0] != moved[0]:
            groups.append((moved[0], []))
        groups[-1][1].append((moved, row))
    out = []
    for operation, members in groups:
        mine = [r for _, r in members]
        ranks = nprocs if any(r["rank"] == -1 for r in mine) else len({r["rank"] for r in mine})
        keys, lines = access_keys(mine, operation)
        out.append(
            {
                "operation": operation,
                "window_s": [min(m[2] for m, _ in members), max(m[3] for m, _ in members)],
                "records": len(mine),
                "bytes": int(sum(m[1] for m, _ in members)),
                "keys": {**keys, "ranks": str(ranks), "operation": operation, "odirect": "no"},
                "evidence": lines,
            }
        )
    return out
