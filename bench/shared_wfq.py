#!/usr/bin/env python3
"""Weighted fair queueing between jobs that arrive while a shared daemon runs: job A (weight 3)
is admitted and starts writing; 2 s later job B (weight 1) is admitted and starts too. Over the
window when both write, each job's share of the bytes the emulated disk took should be 3:1.

One iorelayd with `--scheduler wfq` on an emulated disk (`--backend emulated:seek=0ms,bw=RATE`),
an admin credential, and two jobs admitted through `iorelay ionode`; each job runs PROCS
io_worker processes (one file each, 256 KiB pwrites) through the interposer. The window's bytes
come from the daemon's per-application counters (iorelay-ctl stats), read when B has written
for 1 s and again WINDOW seconds later.

    .venv/bin/python bench/shared_wfq.py [--bw 64MBps] [--procs 8] [--window 4] [--reps 3]
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

from iorelay import ionode, paths
from iorelay.credential import create_credential
from iorelay.launch.local import LocalDaemons

REPO = Path(__file__).resolve().parents[1]

TIMEOUT_S = 120


def bytes_by_app(address: str, admin: Path) -> dict[str, int]:
    out = subprocess.run(
        [str(paths.find("iorelay-ctl")), "--secret-file", str(admin), "stats", address],
        capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
    )  # fmt: skip
    return {name: a["bytes_written"] for name, a in json.loads(out.stdout)["apps"].items()}


def writers(job_key: Path, prefix: str, address: str, procs: int) -> list[subprocess.Popen]:
    env = {
        **os.environ,
        "LD_PRELOAD": str(paths.find("libiorelay_preload.so")),
        "IORELAY_PREFIX": prefix,
        "IORELAY_SECRET_FILE": str(job_key),
        "IORELAY_SERVERS": address,
    }
    return [
        subprocess.Popen(
            [
                str(paths.find("io_worker")),
                "--file",
                f"{prefix}/w{i}",
                "--size",
                str(8 << 30),
                "--request",
                str(256 << 10),
                "--op",
                "write",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(procs)
    ]


def one_rep(args: argparse.Namespace, work: Path) -> float:
    admin = create_credential(work / "admin.key")
    start_root = work / "start"
    start_root.mkdir()
    backend = f"emulated:seek=0ms,bw={args.bw}"
    procs: list[subprocess.Popen] = []
    with LocalDaemons(
        1, start_root, "/unused", work / "d", scheduler="wfq", backend=backend,
        extra_args=("--admin-credential", str(admin), "--workers", str(args.workers)),
    ) as d:  # fmt: skip
        address = d.addresses("unix")[0]
        try:
            for i, (job, weight) in enumerate((("jobA", 3), ("jobB", 1))):
                if i == 1:
                    time.sleep(2.0)  # B arrives 2 s after A
                root = work / job
                root.mkdir()
                key = create_credential(work / f"{job}.key")
                prefix = f"/shared-wfq/{job}"
                ionode.admit(address, job, key, [f"{prefix}={root}"], weight=weight,
                             admin_secret_file=admin)  # fmt: skip
                procs += writers(key, prefix, address, args.procs)
            time.sleep(1.0)
            before = bytes_by_app(address, admin)
            time.sleep(args.window)
            after = bytes_by_app(address, admin)
        finally:
            for p in procs:
                p.kill()
                p.wait()
    a = after["jobA"] - before["jobA"]
    b = after["jobB"] - before["jobB"]
    ratio = a / max(1, b)
    print(f"A {a / 2**20:.0f} MiB, B {b / 2**20:.0f} MiB in {args.window:g} s: {ratio:.2f}:1")
    return ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bw", default="64MBps", help="the emulated disk's bandwidth")
    ap.add_argument("--procs", type=int, default=8, help="writers per job")
    ap.add_argument("--window", type=float, default=4.0, help="seconds measured")
    ap.add_argument("--workers", type=int, default=1, help="the daemon's --workers (1)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    ratios = []
    for _ in range(args.reps):
        work = Path(tempfile.mkdtemp(prefix="iorelay-shared-wfq-", dir="/tmp"))
        try:
            ratios.append(one_rep(args, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    m = statistics.median(ratios)
    print(f"median A:B = {m:.2f}:1 (target 3:1, {abs(m - 3) / 3 * 100:.1f}% off)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
