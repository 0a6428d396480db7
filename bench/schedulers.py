#!/usr/bin/env python3
"""Scheduler comparison on one daemon: R MPI ranks write one 1D-strided shared file in small
O_DIRECT requests through one iorelayd, per scheduler, against direct access by the same ranks.

    .venv/bin/python bench/schedulers.py [--ranks 8] [--backend emulated:hdd] [--reps 3]

Prints a Markdown table (bandwidth of the slowest rank, and the daemon's mean requests per
dispatch) and writes it to bench/results/schedulers-BACKEND-RANKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from iorelay import paths  # noqa: E402
from iorelay.daemons import LocalDaemons  # noqa: E402
from iorelay.stats import query_stats  # noqa: E402

MPI_ENV = {"OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1"}


def bench_once(directory: str, ranks: int, args: argparse.Namespace, env: dict[str, str]) -> dict:
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)]
    for k in env:
        cmd += ["-x", k]
    cmd += [str(paths.find("iorelay-bench")), "--write", "--layout", "shared",
            "--spatiality", "strided", "--request", args.request, "--segments",
            str(args.segments), "--odirect", "--dir", directory]  # fmt: skip
    out = subprocess.run(cmd, env={**os.environ, **MPI_ENV, **env}, capture_output=True,
                         text=True, timeout=600, check=False)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"iorelay-bench failed: {out.stderr.strip()[-2000:]}")
    doc = json.loads(out.stdout)
    return doc


def write_mib_s(doc: dict) -> float:
    for phase in doc["phases"]:
        if phase["operation"] == "write":
            return float(phase["bandwidth_mib_s"])
    raise KeyError("no write phase")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--request", default="8K")
    ap.add_argument("--segments", type=int, default=64)
    ap.add_argument("--backend", default="posix", help="posix, or emulated:hdd etc.")
    ap.add_argument("--schedulers", default="fifo,to-agg,aioli,mlf")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="iorelay-sched-", dir="/tmp"))
    rows = []
    try:
        root = work / "root"
        root.mkdir()
        if args.backend == "posix":
            vals = [write_mib_s(bench_once(str(root), args.ranks, args, {}))
                    for _ in range(args.reps)]  # fmt: skip
            rows.append(("direct", sorted(vals)[len(vals) // 2], vals, None))
        for sched in args.schedulers.split(","):
            w = work / f"w-{sched}"
            with LocalDaemons(1, root, "/iorelay-sched", w, scheduler=sched,
                              backend=args.backend) as d:  # fmt: skip
                env = d.env("unix")
                vals = [write_mib_s(bench_once(d.prefix, args.ranks, args, env))
                        for _ in range(args.reps)]  # fmt: skip
                total = query_stats(d.addresses("unix")[0], d.credential_file)["total"]
                per = total.get("mean_requests_per_dispatch")
            rows.append((sched, sorted(vals)[len(vals) // 2], vals, per))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cmd = "python bench/schedulers.py " + " ".join(sys.argv[1:])
    lines = [f"## Schedulers, {time.strftime('%Y-%m-%d')}: {args.ranks} ranks, 1D-strided "
             f"shared file, {args.request} O_DIRECT writes, backend {args.backend}", "",
             f"Command: `{cmd}`", "",
             "| path | write MiB/s (median) | runs | mean requests per dispatch |",
             "|---|---:|---|---:|"]  # fmt: skip
    for name, med, vals, per in rows:
        runs = ", ".join(f"{v:.1f}" for v in vals)
        per_s = "" if per is None else f"{per:.2f}"
        lines.append(f"| {name} | {med:.1f} | {runs} | {per_s} |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = REPO / f"bench/results/schedulers-{args.backend.replace(':', '-')}-{args.ranks}.md"
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
