"""The A/B rotation the small A/B benchmarks share (seal_ab.py, shared_admit_ab.py): for each
row, RUNS rounds in which the two modes alternate which goes first, each run's result kept by
row and mode, then the medians of every numeric key a run reports."""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from iorelay import paths

Runs = dict[str, dict[str, list[dict[str, Any]]]]


def rotate(
    rows: Sequence[tuple[str, Any]],
    modes: tuple[str, str],
    runs: int,
    one_run: Callable[[str, Any], dict[str, Any]],
) -> Runs:
    """one_run(mode, row_args) for every row, `runs` rounds, the first mode first in even
    rounds; progress printed after each run."""
    out: Runs = {}
    for row, row_args in rows:
        for run in range(runs):
            for mode in modes if run % 2 == 0 else modes[::-1]:
                r = one_run(mode, row_args)
                out.setdefault(row, {}).setdefault(mode, []).append(r)
                shown = ", ".join(f"{k} {v:.1f}" for k, v in r.items() if isinstance(v, float))
                print(f"{row} {mode} run {run}: {shown}", flush=True)
    return out


def medians(runs: Runs, keys: Sequence[str], out: Path | None) -> dict[str, dict[str, float]]:
    """The median of each of `keys` per row and mode, printed, and with the runs written to
    `out` as JSON when given."""
    result = {}
    for row, by_mode in runs.items():
        for mode, rs in by_mode.items():
            m = {k: statistics.median(r[k] for r in rs) for k in keys}
            result[f"{row} {mode}"] = m
            print(f"{row} {mode}: median " + ", ".join(f"{k} {v:.1f}" for k, v in m.items()))
    if out:
        out.write_text(json.dumps({"runs": runs, "medians": result}, indent=1) + "\n")
    return result


def main(
    description: str,
    modes: tuple[str, str],
    rows: Sequence[tuple[str, int, int]],
    keys: Sequence[str],
    one_run: Callable[..., dict[str, Any]],
) -> int:
    """The command line both benchmarks take (BUILD, --seconds, --runs, --out), then the rotation
    of `rows` (name, threads, request size) over `modes`: one_run(build, mode, threads, size,
    seconds, work) in a temporary directory."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("build", type=Path, nargs="?", default=paths.REPO_ROOT / "build")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, help="write the runs and medians there (JSON)")
    args = ap.parse_args()
    build = args.build.resolve()
    work = Path(tempfile.mkdtemp(prefix="iorelay-ab-", dir="/tmp"))
    try:
        runs = rotate(
            [(name, (threads, size)) for name, threads, size in rows],
            modes,
            args.runs,
            lambda mode, ts: one_run(build, mode, ts[0], ts[1], args.seconds, work),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians(runs, keys, args.out)
    return 0
