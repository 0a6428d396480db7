#!/usr/bin/env python3
"""Data in place over shared memory, on against off, with direct access in the same run.

Two daemons on one root, one with `--shm-in-place on` and one with `off`; 4 processes, file per
process, buffered writes then reads of REQUEST-byte requests (1 MiB and 4 MiB by default: a
4 MiB request goes out as pipelined 1 MiB pieces), direct and through each daemon alternating
within each repetition; medians. Checks from the daemons' counters that the `on` runs were in
place and the `off` runs were not.

    .venv/bin/python bench/shm_in_place.py [--requests-mib 1,4] [--reps N] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import datapath

from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]

MIB = 1 << 20
PATHS = ("direct", "in place", "copied")


def in_place_counts(d: LocalDaemons) -> tuple[int, int]:
    s = query_stats(d.addresses("tcp")[0], d.credential_file)
    return s["connections_shm_writes_in_place"], s["connections_shm_reads_in_place"]


def daemon(root: Path, work: Path, mode: str) -> LocalDaemons:
    return LocalDaemons(1, root, "/iorelay-bench", work / mode, extra_args=["--shm-in-place", mode])


def measure(where: dict, mibs: list[int], reps: int, size: int) -> list[dict]:
    """Median MiB/s per (request size, op, path), the paths alternating in each repetition."""
    rows = []
    for mib in mibs:
        for op in ("write", "read"):
            vals: dict[str, list[float]] = {p: [] for p in PATHS}
            for _ in range(reps):
                for p in PATHS:
                    dirpath, env = where[p]
                    bw = datapath.fpp_bandwidth(dirpath, 4, size, mib * MIB, op, False, env)
                    vals[p].append(bw)
            med = {p: statistics.median(v) for p, v in vals.items()}
            rows.append({"request_mib": mib, "op": op, "median": med, "all": vals})
            print(mib, op, json.dumps(med), flush=True)
    return rows


def markdown(args: argparse.Namespace, rows: list[dict], on: tuple[int, int]) -> str:
    lines = [
        f"## Data in place over shared memory, {time.strftime('%Y-%m-%d')}",
        "",
        f"Command: `python bench/shm_in_place.py --requests-mib {args.requests_mib} "
        f"--reps {args.reps}`",
        "",
        f"Buffered, 4 processes, file per process, {args.size_mib} MiB each; medians of "
        f"{args.reps} alternating repetitions, MiB/s. Daemon counters: in place {on[0]} writes "
        f"and {on[1]} reads; copied 0 and 0.",
        "",
        "| request | op | direct | in place | copied | in place/direct | copied/direct |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        m = r["median"]
        d = m["direct"]
        lines.append(
            f"| {r['request_mib']} MiB | {r['op']} | {d:.0f} | {m['in place']:.0f} | "
            f"{m['copied']:.0f} | {m['in place'] / d:.2f} | {m['copied'] / d:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests-mib", default="1,4", help="request sizes in MiB (1,4)")
    ap.add_argument("--reps", type=int, default=5, help="repetitions (5)")
    ap.add_argument("--size-mib", type=int, default=256, help="bytes per process (256 MiB)")
    ap.add_argument("--out", default=str(REPO / "bench/results/shm-in-place.md"))
    args = ap.parse_args()
    mibs = [int(x) for x in args.requests_mib.split(",")]
    work = Path(tempfile.mkdtemp(prefix="iorelay-bench-", dir="/tmp"))
    try:
        root = work / "root"
        root.mkdir()
        with daemon(root, work, "on") as on, daemon(root, work, "off") as off:
            where = {
                "direct": (str(root), None),
                "in place": (on.prefix, datapath.client_env(on, "shm")),
                "copied": (off.prefix, datapath.client_env(off, "shm")),
            }
            rows = measure(where, mibs, args.reps, args.size_mib * MIB)
            on_counts, off_counts = in_place_counts(on), in_place_counts(off)
            if 0 in on_counts or off_counts != (0, 0):
                raise RuntimeError(f"in place: on {on_counts}, off {off_counts}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = markdown(args, rows, on_counts)
    print(text)
    out = Path(args.out)
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
