"""Reads measured runs, FORGE's CSV or iorelay's own tidy results, into the internal schema.

A directory stands for every .csv and .parquet file in it, so FORGE's direct.csv and
forwarding.csv are read together. Each file's format is told from its header.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from iorelay.analysis.schema import (
    MEASUREMENT_COLUMNS,
    OPTION_COLUMNS,
    PATTERN_COLUMNS,
    RUN_COLUMNS,
    SOURCES,
    AnalysisError,
)

SUFFIXES = (".csv", ".parquet")

# FORGE (Bez et al., PDSW 2020): semicolon CSV, one row per run.
FORGE_COLUMNS = (
    "forwarders",
    "clients",
    "processes",
    "layout",
    "spatiality",
    "odirect",
    "stonewall",
    "request",
    "operation",
    "time",
    "bandwidth",
)
_FORGE_LAYOUT = {0: "fpp", 1: "shared"}
_FORGE_SPATIALITY = {0: "contiguous", 1: "strided"}

# iorelay's tidy results (docs/analysis.md): the one required measurement.
TIDY_REQUIRED = ("bandwidth_mib_s",)
LAYOUTS = frozenset(_FORGE_LAYOUT.values())
SPATIALITIES = frozenset(_FORGE_SPATIALITY.values())


def expand(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files to read: each file as given, each directory as its .csv and .parquet files."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.suffix in SUFFIXES and f.is_file())
            if not found:
                raise AnalysisError(f"{p}: no .csv or .parquet file in this directory")
            files += found
        elif p.is_file():
            files.append(p)
        else:
            raise AnalysisError(f"{p}: no such file or directory")
    return files


MPIIO_DEFAULTS = {"api": "posix", "collective": False, "hints": "", "aggregators": 0}


def read_results(paths: Iterable[str | os.PathLike[str]]) -> pd.DataFrame:
    """All runs of all given files and directories, in the internal schema (see schema.py)."""
    frames = [read_file(f) for f in expand(paths)]
    if not frames:
        raise AnalysisError("no results given")
    runs = pd.concat(frames, ignore_index=True)
    # A sweep of POSIX and MPI-IO runs: the POSIX rows have no MPI-IO columns; give them the
    # values that say so, or grouping by pattern would drop them as missing.
    for column, posix in MPIIO_DEFAULTS.items():
        if column in runs.columns:
            values = runs[column].astype(object)
            runs[column] = values.where(values.notna(), posix)
    keep = [
        c
        for c in (*PATTERN_COLUMNS, *OPTION_COLUMNS, *MEASUREMENT_COLUMNS, *RUN_COLUMNS)
        if c in runs.columns
    ]
    return runs[keep]


def read_file(path: Path) -> pd.DataFrame:
    """One file in the internal schema, with a `file` column naming the file and a `source`
    column: the file's own (`measured` or `simulated`), else `measured` (FORGE, and results
    written before simulated runs existed, are measurements)."""
    raw = _read_raw(path)
    if set(FORGE_COLUMNS) <= set(raw.columns):
        runs = from_forge(raw)
    elif set(TIDY_REQUIRED) <= set(raw.columns):
        runs = from_tidy(raw, path)
    else:
        raise AnalysisError(
            f"{path}: neither FORGE ({';'.join(FORGE_COLUMNS)}) nor iorelay results "
            f"(needs {', '.join(TIDY_REQUIRED)}); columns are {', '.join(map(str, raw.columns))}"
        )
    if "source" not in runs.columns:
        runs["source"] = "measured"
    runs["source"] = runs["source"].fillna("measured")
    if not set(runs["source"]) <= set(SOURCES):
        raise AnalysisError(f"{path}: source must be one of {', '.join(SOURCES)}")
    runs["file"] = path.name
    return runs


def _read_raw(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    with path.open(encoding="utf-8") as f:
        header = f.readline()
    sep = ";" if header.count(";") > header.count(",") else ","
    try:
        return pd.read_csv(path, sep=sep)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise AnalysisError(f"{path}: {e}") from e


def from_forge(raw: pd.DataFrame) -> pd.DataFrame:
    """FORGE columns mapped to the internal ones (request KiB → bytes, 0/1 codes → names)."""
    out = pd.DataFrame(
        {
            "layout": raw["layout"].map(_FORGE_LAYOUT),
            "spatiality": raw["spatiality"].map(_FORGE_SPATIALITY),
            "nodes": raw["clients"].astype("int64"),
            "processes": raw["processes"].astype("int64"),
            "request_bytes": raw["request"].astype("int64") * 1024,
            "operation": raw["operation"].astype(str),
            "odirect": raw["odirect"].astype(bool),
            "stonewall_s": raw["stonewall"],
            "ionodes": raw["forwarders"].astype("int64"),
            "time_s": raw["time"].astype(float),
            "bandwidth_mib_s": raw["bandwidth"].astype(float),
        }
    )
    if out["layout"].isna().any() or out["spatiality"].isna().any():
        raise AnalysisError("FORGE layout and spatiality must be 0 or 1")
    return out


def from_tidy(raw: pd.DataFrame, path: Path) -> pd.DataFrame:
    """iorelay's results: already in the internal names; checks the values it can."""
    out = raw.copy()
    if "layout" in out and not set(out["layout"].dropna()) <= LAYOUTS:
        raise AnalysisError(f"{path}: layout must be one of {sorted(LAYOUTS)}")
    if "spatiality" in out and not set(out["spatiality"].dropna()) <= SPATIALITIES:
        raise AnalysisError(f"{path}: spatiality must be one of {sorted(SPATIALITIES)}")
    if "odirect" in out:
        out["odirect"] = out["odirect"].astype(bool)
    for col in MEASUREMENT_COLUMNS:
        if col in out:
            try:
                out[col] = pd.to_numeric(out[col], errors="raise").astype(float)
            except (ValueError, TypeError) as e:
                raise AnalysisError(f"{path}: column {col} is not numeric: {e}") from e
    return out
