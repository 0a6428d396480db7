"""The tidy results file of `iorelay explore`: one row per run and operation, CSV and Parquet.

Columns follow docs/analysis.md (schema version 1), so `iorelay analyze` reads the file as is;
every row also carries the run's full effective configuration and a `run_key` (a hash of the
configuration and repetition) by which a resumed sweep recognises the runs already done.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
CSV_NAME = "results.csv"
# In a subdirectory: `iorelay analyze OUT` reads every .csv and .parquet of OUT, and must not
# count each run twice.
PARQUET_NAME = "parquet/results.parquet"
FAILURES_NAME = "failures.jsonl"
# Phases of iorelay-bench that become rows (the verify pass is a check, not a measurement).
MEASURED_OPERATIONS = ("write", "read")

# Column order: analysis schema first, then the rest of the configuration and measurements.
LEADING_COLUMNS = (
    "schema_version",
    "run_key",
    "layout",
    "spatiality",
    "nodes",
    "processes",
    "request_bytes",
    "operation",
    "odirect",
    "stonewall_s",
    "ionodes",
    "scheduler",
    "placement",
    "repetition",
    "bytes",
    "time_s",
    "bandwidth_mib_s",
)


def run_key(config: Mapping[str, Any]) -> str:
    """A stable identifier of a run's configuration (repetition included)."""
    text = json.dumps(dict(config), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def rows_from_bench(
    config: Mapping[str, Any], bench: Mapping[str, Any], extra: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Rows of one run: the sweep configuration, iorelay-bench's derived sizes, one phase each."""
    bench_config = bench.get("config", {})
    rows = []
    for phase in bench.get("phases", []):
        if phase["operation"] not in MEASURED_OPERATIONS:
            continue
        times = phase.get("rank_time_s", {})
        row: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "run_key": run_key(config),
            **config,
            "nodes": bench_config.get("nodes", config.get("nodes")),
            "iorelay_version": bench_config.get("iorelay_version"),
            "protocol_version": bench_config.get("protocol_version"),
            "block_bytes": bench_config.get("block_bytes"),
            "segments": bench_config.get("segments"),
            "operation": phase["operation"],
            "bytes": phase["bytes"],
            "requests": phase.get("requests"),
            "time_s": phase["time_s"],
            "bandwidth_mib_s": phase["bandwidth_mib_s"],
            "rank_time_min_s": times.get("min"),
            "rank_time_median_s": times.get("median"),
            "rank_time_max_s": times.get("max"),
            "stonewalled_ranks": phase.get("stonewalled_ranks"),
            "wrong_words": phase.get("wrong_words"),
            "errors": phase.get("errors"),
            **(extra or {}),
        }
        rows.append(row)
    return rows


def _ordered(columns: Iterable[str]) -> list[str]:
    cols = list(dict.fromkeys(columns))
    return [c for c in LEADING_COLUMNS if c in cols] + [c for c in cols if c not in LEADING_COLUMNS]


class ResultsFile:
    """One sweep directory: results.csv (appended run by run), parquet/results.parquet (a copy),
    failures.jsonl (failed runs, retried on resume)."""

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.dir = Path(out_dir)
        self.csv_path = self.dir / CSV_NAME
        self.parquet_path = self.dir / PARQUET_NAME
        self.failures_path = self.dir / FAILURES_NAME

    def _header(self, path: Path) -> list[str] | None:
        if not path.exists() or path.stat().st_size == 0:
            return None
        with path.open(newline="") as f:
            return next(csv.reader(f), None)

    def done_keys(self) -> set[str]:
        """run_key of every run already in the results (CSV, or Parquet if only that exists)."""
        if self.csv_path.exists():
            with self.csv_path.open(newline="") as f:
                return {row["run_key"] for row in csv.DictReader(f) if row.get("run_key")}
        if self.parquet_path.exists():
            import pandas as pd

            return set(pd.read_parquet(self.parquet_path, columns=["run_key"])["run_key"])
        return set()

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Adds the rows of one run to results.csv (durably: a crash loses at most that run)."""
        if not rows:
            return
        path = self.csv_path
        self.dir.mkdir(parents=True, exist_ok=True)
        header = self._header(path)
        new_cols = [c for r in rows for c in r]
        if header is not None and not set(new_cols) <= set(header):
            # A column appeared (e.g. a new sweep dimension): rewrite with the wider header.
            with path.open(newline="") as f:
                old = list(csv.DictReader(f))
            header = _ordered([*header, *new_cols])
            with path.open("w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=header)
                writer.writeheader()
                writer.writerows(old)
        with path.open("a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=header or _ordered(new_cols))
            if header is None:
                writer.writeheader()
            writer.writerows(rows)
            f.flush()
            os.fsync(f.fileno())

    def append_failure(self, record: Mapping[str, Any]) -> None:
        """Records a failed run in failures.jsonl; it is not in results, so a resume retries it."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with self.failures_path.open("a") as f:
            f.write(json.dumps(dict(record), default=str) + "\n")

    def write_parquet(self) -> Path | None:
        """Rewrites results.parquet from results.csv; None when there are no results yet."""
        if not self.csv_path.exists():
            return None
        import pandas as pd

        frame = pd.read_csv(self.csv_path)
        self.parquet_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.parquet_path.with_suffix(".parquet.tmp")
        frame.to_parquet(tmp, index=False)
        tmp.replace(self.parquet_path)
        return self.parquet_path
