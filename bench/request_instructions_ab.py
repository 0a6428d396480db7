#!/usr/bin/env python3
"""Daemon instructions per request of two iorelayd builds: a cost a loaded machine cannot blur.

Time per request moves with whatever else runs on the machine (bench/request_rate_ab.py saw
single runs of one build range 1.7k-127k requests/s at load 20-35). Instructions executed do
not: each run starts the OLD or NEW build's iorelayd under valgrind's callgrind, zeroes its
counters once the daemon is up, drives it with the same build's `request_rate` (4 KiB pwrites
through the C API from 8 threads, Unix socket) and dumps the counters when it ends, so the count
covers exactly the requests' work. Instructions per request = the daemon's total / requests.
Idle workers do not spin (--worker-spin-us 0), since a spin's instructions count time, not
work. Runs alternate old/new; medians.

    .venv/bin/python bench/request_instructions_ab.py OLD_BUILD NEW_BUILD [--runs 3]
        [--seconds 3] [--threads 8] [--backends null,posix]
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

from ab_rotation import medians, rotate

from iorelay.launch.local import LocalDaemons

TIMEOUT_S = 300


def callgrind_wrapper(build: Path, out: Path, work: Path) -> Path:
    """A daemon 'binary' that execs the build's iorelayd under callgrind (same pid)."""
    script = work / f"iorelayd-callgrind-{os.getpid()}-{time.monotonic_ns()}"
    daemon = build / "src/iorelayd/iorelayd"
    if not daemon.exists():  # builds before the composition root moved (src/daemon/iorelayd)
        daemon = build / "src/daemon/iorelayd"
    script.write_text(
        f'#!/bin/sh\nexec valgrind -q --tool=callgrind --callgrind-out-file={out} {daemon} "$@"\n'
    )
    script.chmod(0o755)
    return script


def total_instructions(dump: Path) -> int:
    """The `totals:` (or `summary:`) line of a callgrind dump: instructions executed."""
    for line in dump.read_text().splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise RuntimeError(f"{dump}: no totals line")


def one_run(build: Path, backend: str, work: Path, opts: argparse.Namespace) -> dict:
    run_dir = Path(tempfile.mkdtemp(dir=work))
    root, wd = run_dir / "root", run_dir / "wd"
    root.mkdir()
    wd.mkdir()
    out = run_dir / "callgrind.out"
    with LocalDaemons(
        1, root, "/iorelay-bench", wd, backend=backend, extra_args=("--worker-spin-us", "0"),
        daemon_binary=callgrind_wrapper(build, out, run_dir),
        ready_timeout_s=120,
    ) as d:  # fmt: skip
        pid = str(d.daemons[0].pid)
        env = {k: v for k, v in d.env("unix").items() if k != "LD_PRELOAD"}
        subprocess.run(["callgrind_control", "--zero", pid], check=True, capture_output=True)
        rate = subprocess.run(
            [str(build / "bench/request_rate"), "/iorelay-bench/rate.dat", str(opts.threads),
             str(opts.seconds), "4096"],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=TIMEOUT_S,
            check=True,
        )  # fmt: skip
        subprocess.run(["callgrind_control", "--dump", pid], check=True, capture_output=True)
        requests = json.loads(rate.stdout)["requests"]
    dumps = sorted(run_dir.glob("callgrind.out.*"), key=lambda p: p.stat().st_mtime)
    if not dumps:
        raise RuntimeError(f"callgrind wrote no dump in {run_dir}")
    return {"requests": requests, "instructions": total_instructions(dumps[0])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="build directory of the old version")
    ap.add_argument("new", type=Path, help="build directory of the new version")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--backends", default="null,posix")
    args = ap.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("request_instructions_ab: needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    builds = {"old": args.old.resolve(), "new": args.new.resolve()}
    work = Path(tempfile.mkdtemp(prefix="iorelay-ir-ab-", dir="/tmp"))

    def run(name: str, backend: str) -> dict:
        r = one_run(builds[name], backend, work, args)
        return {"instructions_per_request": r["instructions"] / max(1, r["requests"])}

    try:
        backends = args.backends.split(",")
        runs = rotate([(b, b) for b in backends], ("old", "new"), args.runs, run)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    m = medians(runs, ["instructions_per_request"], None)
    print("| backend | old: instructions per request | new | new / old |")
    print("|---|---|---|---|")
    for b in backends:
        old, new = (m[f"{b} {mode}"]["instructions_per_request"] for mode in ("old", "new"))
        print(f"| {b} | {old:,.0f} | {new:,.0f} | {new / old:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
