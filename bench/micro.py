#!/usr/bin/env python3
"""Micro-benchmarks in a few minutes: every Google Benchmark program, and forwarded requests per
second against one local daemon. One JSON file per program in the output folder.

    .venv/bin/python bench/micro.py [--out results/bench] [--min-time 0.1] [--seconds 2]

The programs: sched_bench (scheduler decision cost per queue depth), placement_bench (placement
policies and metrics up to 49,152 nodes), frame_mac_bench (one frame's tag on a sealed
connection: heartbeat, 4 KiB, 4 MiB), fencing_poll_bench (the daemon's check before each queued
write), lock_table_bench (record locks against 1,000 and 60,000 held ranges), request_rate
(4 KiB pwrites through the C API, 1 and 8 threads, null and POSIX backends; the same rows as
bench/datapath.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from datapath import TIMEOUT_S, program, request_rate_rows

REPO = Path(__file__).resolve().parents[1]

GOOGLE_BENCHMARKS = (
    "sched_bench", "placement_bench", "frame_mac_bench", "fencing_poll_bench", "lock_table_bench",
)  # fmt: skip


def run_google_benchmark(name: str, out: Path, min_time_s: float) -> None:
    target = out / f"{name}.json"
    subprocess.run(
        [program(name), f"--benchmark_min_time={min_time_s}", f"--benchmark_out={target}",
         "--benchmark_out_format=json"],
        check=True, timeout=TIMEOUT_S,
    )  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "results/bench")
    ap.add_argument("--min-time", type=float, default=0.1, help="seconds per benchmark case")
    ap.add_argument("--seconds", type=float, default=2.0, help="per request-rate case")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in GOOGLE_BENCHMARKS:
        print(f"== {name}", flush=True)
        run_google_benchmark(name, args.out, args.min_time)
    print("== request_rate", flush=True)
    work = Path(tempfile.mkdtemp(prefix="iorelay-micro-", dir="/tmp"))
    try:
        rows = request_rate_rows(work, args.seconds, "unix")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for r in rows:
        print(f"{r['backend']:>6} backend, {r['threads']} threads: {r['requests_per_s']:.0f} req/s")
    (args.out / "request_rate.json").write_text(
        json.dumps({"date": time.strftime("%Y-%m-%d %H:%M"), "rows": rows}, indent=2) + "\n"
    )
    print(f"results in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
