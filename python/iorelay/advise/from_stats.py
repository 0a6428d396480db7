"""The pattern a running job shows its I/O nodes: read from the daemons' counters (`iorelay
stats`, one document per daemon of the job). Pure functions over those documents.

The counters hold bytes and requests per operation family, per application and per file, and the
connections open now; they hold no offsets, so the spatiality cannot be read from them (the
caller gives it), nor O_DIRECT (left to the measured runs' value), nor the node count."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from iorelay.advise.observed import Observed, ObservedError


def job_counters(docs: Sequence[Mapping[str, Any]], app: str | None) -> list[Mapping[str, Any]]:
    """Each daemon's counters of the job: application `app`, or the one application that moved
    data on these daemons. ObservedError when there is none, or several and no `app`."""
    moved: set[str] = set()
    for doc in docs:
        for name, c in doc.get("apps", {}).items():
            if int(c.get("bytes_written", 0)) + int(c.get("bytes_read", 0)) > 0:
                moved.add(name)
    if app is None:
        if not moved:
            raise ObservedError("no application has moved data through these daemons yet")
        if len(moved) > 1:
            raise ObservedError(
                "several applications moved data through these daemons "
                f"({', '.join(sorted(moved))}): give --app NAME"
            )
        app = next(iter(moved))
    elif app not in moved:
        raise ObservedError(
            f"application {app!r} moved no data through these daemons"
            + (f" (those that did: {', '.join(sorted(moved))})" if moved else "")
        )
    return [doc["apps"][app] for doc in docs if app in doc.get("apps", {})]


def stats_pattern(
    docs: Sequence[Mapping[str, Any]], spatiality: str | None, app: str | None = None
) -> Observed:
    """Operation, request size, layout and ranks of the job from its daemons' counters, with
    the evidence; `spatiality` as given (ObservedError without it: the counters hold no
    offsets)."""
    if spatiality is None:
        raise ObservedError(
            "the daemons' counters hold no offsets, so no spatiality: give --spatiality "
            "contiguous|strided"
        )
    mine = job_counters(docs, app)
    written = sum(int(c.get("bytes_written", 0)) for c in mine)
    read = sum(int(c.get("bytes_read", 0)) for c in mine)
    operation = "write" if written >= read else "read"
    moved = written if operation == "write" else read
    requests = sum(int(c["by_family"][operation]["requests"]) for c in mine)
    if requests == 0 or moved == 0:
        raise ObservedError(f"the counters show no answered {operation} request")
    request = max(1, round(moved / requests))
    evidence = [
        f"{len(docs)} daemon(s): {written} bytes written, {read} read -> operation={operation}",
        f"{moved} {operation} bytes in {requests} requests: mean {request} bytes -> "
        f"request={request}",
    ]
    keys = {"spatiality": spatiality, "request": str(request), "operation": operation}
    layout, line = files_layout(docs)
    if layout is None:
        raise ObservedError(line)
    keys["layout"] = layout
    evidence.append(line)
    clients = sum(max(0, int(d.get("connections_open", 0)) - 1) for d in docs)
    if clients > 0:
        keys["ranks"] = str(clients)
        evidence.append(
            f"{clients} client connection(s) open besides this query's, summed over the daemons "
            f"(each rank reaches one I/O node under block placement) -> ranks={clients}"
        )
    evidence.append(f"spatiality={spatiality}: given (the counters hold no offsets)")
    evidence.append("O_DIRECT: not in the counters (the measured runs' value, else no)")
    return Observed(keys, evidence)


def files_layout(docs: Sequence[Mapping[str, Any]]) -> tuple[str | None, str]:
    """`shared` when one file (dev:ino, summed over the daemons) holds more than half the bytes
    the daemons moved, else `fpp`; (None, why) when the counters have no per-file view (a job
    admitted at run time sees its own application's counters only)."""
    if not any("files" in d for d in docs):
        return None, (
            "the daemons' counters have no per-file view (the credential is a job admitted at "
            "run time's): the layout cannot be read; give the pattern with --pattern"
        )
    per_file: dict[str, int] = {}
    for doc in docs:
        for name, f in doc.get("files", {}).items():
            per_file[name] = per_file.get(name, 0) + int(f.get("bytes", 0))
    total = sum(per_file.values())
    if total == 0:
        return None, "the daemons' per-file counters hold no bytes"
    largest = max(per_file.values())
    share = largest / total
    layout = "shared" if share > 0.5 else "fpp"
    return layout, (
        f"{len(per_file)} file(s); the largest holds {share:.0%} of the bytes -> layout={layout}"
    )
