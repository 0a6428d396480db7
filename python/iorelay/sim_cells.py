"""Cells of measured results — one (pattern, I/O-node count) each, with the median bandwidth of
its repetitions — and the same cells simulated on a platform document, for `iorelay calibrate`
and the FORGE validation (bench/sim_forge.py).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from iorelay.analysis.schema import PATTERN_COLUMNS
from iorelay.simulate import run_tool

OPTION = "ionodes"
DEFAULT_REQUESTS_PER_RANK = 4


def pattern_columns(runs: pd.DataFrame) -> list[str]:
    return [c for c in PATTERN_COLUMNS if c in runs.columns]


def pattern_label(row: Mapping[str, Any]) -> str:
    """A stable, readable name of a pattern: layout/spatiality/nodes/processes/request."""
    return (
        f"{row['layout']}/{row['spatiality']}/n{int(row['nodes'])}/p{int(row['processes'])}"
        f"/{int(row['request_bytes']) // 1024}K/{row.get('operation', 'write')}"
    )


def measured_cells(runs: pd.DataFrame, total_bytes: int = 0) -> pd.DataFrame:
    """One row per (pattern, ionodes): median and count of bandwidth_mib_s, the pattern label,
    the coefficient of variation of the repetitions, and `total_bytes` (the bytes the runs
    planned to move, which fixes the file layout; 0: unknown)."""
    keys = [*pattern_columns(runs), OPTION]
    grouped = runs.groupby(keys, dropna=False)["bandwidth_mib_s"]
    cells = grouped.agg(median="median", n="count", mean="mean", std="std").reset_index()
    cells["cv"] = cells["std"] / cells["mean"]
    cells["pattern"] = [pattern_label(r) for r in cells.to_dict("records")]
    cells["total_bytes"] = total_bytes
    return cells.drop(columns=["mean", "std"])


def sim_argv(
    cell: Mapping[str, Any], platform_file: Path, requests_per_rank: int, scheduler: str, seed: int
) -> list[str]:
    """iorelay-sim's command line for one cell: the first requests_per_rank requests of every
    rank, in the file layout of the cell's `total_bytes` (that many requests' worth when the
    cell has none)."""
    total = int(cell.get("total_bytes") or 0)
    if total <= 0:
        total = requests_per_rank * int(cell["request_bytes"]) * int(cell["processes"])
    argv = [
        "--platform", str(platform_file),
        "--layout", str(cell["layout"]),
        "--spatiality", str(cell["spatiality"]),
        "--operation", str(cell.get("operation", "write")),
        "--request", str(int(cell["request_bytes"])),
        "--total", str(total),
        "--max-requests", str(requests_per_rank),
        "--ranks", str(int(cell["processes"])),
        "--nodes", str(int(cell["nodes"])),
        "--ionodes", str(int(cell[OPTION])),
        "--scheduler", scheduler,
        "--seed", str(seed),
    ]  # fmt: skip
    if cell.get("odirect", False):
        argv.append("--odirect")
    return argv


def simulate_cells(
    platform: Mapping[str, Any],
    cells: pd.DataFrame,
    requests_per_rank: int = DEFAULT_REQUESTS_PER_RANK,
    scheduler: str = "fifo",
    seed: int = 1,
    jobs: int = 2,
) -> np.ndarray:
    """Simulated bandwidth (MiB/s) of every cell on `platform` (a platform document), in the
    cells' order; `jobs` iorelay-sim processes at a time."""
    with tempfile.TemporaryDirectory(prefix="iorelay-cells-") as tmp:
        path = Path(tmp) / "platform.json"
        path.write_text(json.dumps(platform))
        argvs = [
            sim_argv(c, path, requests_per_rank, scheduler, seed) for c in cells.to_dict("records")
        ]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = list(pool.map(run_tool, argvs))
    return np.array([r["bandwidth_MiBps"] for r in results], dtype=float)


def default_jobs() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def best_option(cells: pd.DataFrame, column: str, keys: Sequence[str] = ("pattern",)) -> pd.Series:
    """The option with the highest `column` per pattern (ties: the fewest I/O nodes)."""
    ordered = cells.sort_values(
        [*keys, column, OPTION], ascending=[True] * len(keys) + [False, True]
    )
    return ordered.groupby(list(keys))[OPTION].first()
