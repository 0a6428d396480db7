#!/usr/bin/env python3
"""Scheduler comparison on one daemon: R MPI ranks write one 1D-strided shared file in small
O_DIRECT requests through one iorelayd, per scheduler and number of dispatch slots
(`iorelayd --workers`), against direct access by the same ranks in the same run.

    .venv/bin/python bench/schedulers.py [--ranks 32] [--backend emulated:hdd] [--reps 3]

Repetitions alternate: each one runs direct access, then every configuration once, so a
slow phase of this noisy machine hits all paths alike. Prints a Markdown table (bandwidth of
the job, median of the repetitions; its ratio to direct; the daemon's mean requests per
dispatch) and writes it to bench/results/schedulers-BACKEND-RANKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from strided_job import MPI_ENV, strided_writer_cmd

from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]


def write_mib_s(directory: str, args: argparse.Namespace, env: dict[str, str]) -> float:
    """One run of the job; its write bandwidth (bytes of all ranks / slowest rank's time)."""
    cmd = strided_writer_cmd(args.ranks, directory, env, args.request, args.segments)
    out = subprocess.run(cmd, env={**os.environ, **MPI_ENV, **env}, capture_output=True,
                         text=True, timeout=600, check=False)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"iorelay-bench failed: {out.stderr.strip()[-2000:]}")
    for phase in json.loads(out.stdout)["phases"]:
        if phase["operation"] == "write":
            return float(phase["bandwidth_mib_s"])
    raise KeyError("no write phase")


def forwarded_run(work: Path, root: Path, sched: str, workers: int,
                  args: argparse.Namespace) -> tuple[float, float]:  # fmt: skip
    """One run through a fresh daemon: (MiB/s, mean requests per dispatch)."""
    with LocalDaemons(1, root, "/iorelay-sched", work, scheduler=sched, backend=args.backend,
                      extra_args=["--workers", str(workers)]) as d:  # fmt: skip
        mib_s = write_mib_s(d.prefix, args, d.env("unix"))
        total = query_stats(d.addresses("unix")[0], d.credential_file)["total"]
    return mib_s, float(total.get("mean_requests_per_dispatch") or 0.0)


def markdown(args: argparse.Namespace, rows: list[dict]) -> str:
    cmd = "python bench/schedulers.py " + " ".join(sys.argv[1:])
    direct = next((r["median"] for r in rows if r["path"] == "direct"), None)
    lines = [f"## Schedulers, {time.strftime('%Y-%m-%d')}: {args.ranks} ranks, 1D-strided "
             f"shared file, {args.request} O_DIRECT writes, {args.segments} segments, "
             f"backend {args.backend}", "", f"Command: `{cmd}`", "",
             "| path | slots | write MiB/s (median) | / direct | runs | requests per dispatch |",
             "|---|---:|---:|---:|---|---:|"]  # fmt: skip
    for r in rows:
        ratio = f"{r['median'] / direct:.2f}" if direct and r["path"] != "direct" else ""
        runs = ", ".join(f"{v:.1f}" for v in r["runs"])
        per = f"{statistics.median(r['per_dispatch']):.2f}" if r["per_dispatch"] else ""
        lines.append(f"| {r['path']} | {r['slots']} | {r['median']:.1f} | {ratio} | {runs} | "
                     f"{per} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--request", default="8K")
    ap.add_argument("--segments", type=int, default=64)
    ap.add_argument("--backend", default="posix", help="posix, or emulated:hdd etc.")
    ap.add_argument("--schedulers", default="fifo,to-agg,sjf,aioli,mlf")
    ap.add_argument("--workers", default="1,4", help="dispatch slots of the daemon, a list")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", help="default: bench/results/schedulers-BACKEND-RANKS.md")
    args = ap.parse_args()
    configs = [(s, int(w)) for w in args.workers.split(",") for s in args.schedulers.split(",")]
    rows = [{"path": s, "slots": w, "runs": [], "per_dispatch": []} for s, w in configs]
    if args.backend == "posix":  # direct access is only meaningful on the real file system
        rows.insert(0, {"path": "direct", "slots": "", "runs": [], "per_dispatch": []})
    work = Path(tempfile.mkdtemp(prefix="iorelay-sched-", dir="/tmp"))
    try:
        root = work / "root"
        root.mkdir()
        for rep in range(args.reps):
            for i, row in enumerate(rows):
                if row["path"] == "direct":
                    row["runs"].append(write_mib_s(str(root), args, {}))
                    continue
                mib_s, per = forwarded_run(work / f"w{rep}-{i}", root, row["path"],
                                           row["slots"], args)  # fmt: skip
                row["runs"].append(mib_s)
                row["per_dispatch"].append(per)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for row in rows:
        row["median"] = statistics.median(row["runs"])
    text = markdown(args, rows)
    print(text)
    default = REPO / f"bench/results/schedulers-{args.backend.replace(':', '-')}-{args.ranks}.md"
    Path(args.out or default).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
