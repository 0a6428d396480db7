"""What one run of the exploration is, wherever it runs (local daemons, `iorelay explore`; the
testbed, iorelay.testbed.explore): the benchmark's command line, the run's outcome, and the daemons'
counters as result columns. Both runners import it; neither imports the other's module.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iorelay import mpi, paths


def bench_argv(config: Mapping[str, Any], operations: tuple[str, ...], root: Path) -> list[str]:
    argv = [
        str(paths.find(mpi.launcher().bench)),
        "--layout", config["layout"],
        "--spatiality", config["spatiality"],
        "--request", str(config["request_bytes"]),
        "--total", str(config["total_bytes"]),
        "--stonewall", str(config["stonewall_s"]),
        "--ranks-per-node", str(config["ranks_per_node"]),
        "--seed", str(config["repetition"] + 1),
        "--dir", str(root),
        "--output", str(root.parent / "bench.json"),
    ]  # fmt: skip
    argv += [f"--{op}" for op in operations]
    argv += [f"--{flag}" for flag in ("wearout", "odirect", "fsync") if config[flag]]
    if config.get("api", "posix") == "mpiio":
        argv += ["--api", "mpiio", *(["--collective"] if config["collective"] else [])]
        argv += [a for h in mpiio_hints(config) for a in ("--hint", h)]
    return argv


def mpiio_hints(config: Mapping[str, Any]) -> list[str]:
    """The MPI-IO hints of a run: its aggregator count as ROMIO asks for it (cb_nodes, at most
    that many per node, two-phase I/O on), then the sweep's own hints, which win."""
    hints = []
    if config.get("aggregators"):
        a = config["aggregators"]
        hints += [f"cb_nodes={a}", f"cb_config_list=*:{a}", "romio_cb_write=enable",
                  "romio_cb_read=enable"]  # fmt: skip
    return hints + [h for h in str(config.get("hints", "")).split(",") if h]


def bench_env(config: Mapping[str, Any]) -> dict[str, str]:
    """Environment a run's ranks need beyond the relay's: OpenMPI's OMPIO takes its aggregator
    count from an MCA parameter, not from cb_nodes."""
    if config.get("api") == "mpiio" and config.get("aggregators"):
        return {"OMPI_MCA_io_ompio_num_aggregators": str(config["aggregators"])}
    return {}


class SweepStopped(RuntimeError):
    """The runner cannot run any more of the sweep (its platform went away): the sweep ends
    with this one error instead of recording every run left as failed."""


@dataclass
class RunOutcome:
    bench: dict[str, Any] | None
    seconds: float
    error: str = ""
    command: str = ""
    info: dict[str, Any] = field(default_factory=dict)  # extra result columns of the run


def daemon_columns(
    daemons: Sequence[Mapping[str, Any]], bench: Mapping[str, Any]
) -> tuple[dict[str, Any], str]:
    """Result columns from the daemons' counters, and an error if they did not carry the
    benchmark's bytes (a forwarded run that went direct would pass verification too)."""
    per_host = {}
    totals = {"bytes_written": 0, "bytes_read": 0, "requests": 0, "dispatches": 0}
    for d in daemons:
        if isinstance(d["stats"], str):
            return {}, f"no counters from iorelayd on {d['host']}: {d['stats']}"
        total = d["stats"]["total"]
        for key in totals:
            totals[key] += int(total.get(key, 0))
        per_host[d["host"]] = int(total.get("bytes_written", 0)) + int(total.get("bytes_read", 0))
    cols: dict[str, Any] = {
        "daemon_bytes_written": totals["bytes_written"],
        "daemon_bytes_read": totals["bytes_read"],
        "daemon_requests": totals["requests"],
        "requests_per_dispatch": round(totals["requests"] / totals["dispatches"], 2)
        if totals["dispatches"]
        else None,
        "daemon_bytes_by_host": ";".join(f"{h}={b}" for h, b in per_host.items()),
    }
    moved = {p["operation"]: int(p["bytes"]) for p in bench.get("phases", [])}
    need_w, need_r = moved.get("write", 0), moved.get("read", 0)
    if totals["bytes_written"] < need_w or totals["bytes_read"] < need_r:
        return cols, (
            f"the daemons carried {totals['bytes_written']} bytes written and "
            f"{totals['bytes_read']} read, the benchmark moved {need_w} and {need_r}: "
            "not forwarded"
        )
    return cols, ""


def settled_stats(
    query: Callable[[], list[tuple[str, Any]]], bench_file: Path, tries: int = 20
) -> list[tuple[str, Any]]:
    """The daemons' counters (address, stats) once they cover the bytes the benchmark wrote to
    `bench_file` reports, or the last ones read after `tries` queries 50 ms apart: a daemon counts
    a request just after sending its reply, so the last one may be uncounted when the client
    exits."""
    for attempt in range(tries):
        stats = query()
        if not stats or not bench_file.exists():
            return stats
        bench = json.loads(bench_file.read_text())
        daemons = [{"host": addr, "stats": s} for addr, s in stats]
        if not daemon_columns(daemons, bench)[1] or attempt == tries - 1:
            return stats
        time.sleep(0.05)
    return []


Runner = Callable[[Mapping[str, Any], tuple[str, ...], float], RunOutcome]
