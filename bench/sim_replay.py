#!/usr/bin/env python3
"""The same-code check: real iorelayd traces replayed in iorelay-sim with the same scheduler.

For each scheduler, RANKS strided_writer processes (SEGMENTS blocks of BLOCK bytes each, one
shared file) write through one local iorelayd on an emulated disk (`--backend emulated:DEVICE`)
with `--trace`; the trace is then replayed closed-loop by `iorelay-sim --replay` on PLATFORM with
the same scheduler. One table row per scheduler: the daemon's requests in flight at most, its
dispatches and time, the simulator's dispatches and time, and identical_dispatch_share.

  python bench/sim_replay.py                         # fifo, to-agg, sjf, aioli; 8 x 16 x 8 KiB
  python bench/sim_replay.py --daemon-args "--io-threads 8" --keep /tmp/traces
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from iorelay import paths
from iorelay.launch.local import LocalDaemons
from iorelay.trace import read_trace

DATA_OPS = ("pread", "pwrite", "read", "write")
CLIENT_TIMEOUT_S = 600.0


def record(trace: Path, scheduler: str, args: argparse.Namespace, work: Path) -> None:
    """One traced run of the strided writers through one iorelayd."""
    (work / "root").mkdir(parents=True)
    (work / "work").mkdir()
    daemons = LocalDaemons(
        1,
        work / "root",
        str(work / "fwd"),
        work / "work",
        scheduler=scheduler,
        backend=f"emulated:{args.device}",
        extra_args=["--trace", str(trace), *shlex.split(args.daemon_args)],
    )
    daemons.start()
    writer = str(paths.find("strided_writer"))
    try:
        procs = [
            subprocess.Popen(
                [
                    writer,
                    "--file",
                    f"{daemons.prefix}/t.dat",
                    "--rank",
                    str(rank),
                    "--ranks",
                    str(args.ranks),
                    "--segments",
                    str(args.segments),
                    "--block",
                    str(args.block),
                ],
                env={**os.environ, **daemons.env()},
            )
            for rank in range(args.ranks)
        ]
        codes = [p.wait(timeout=CLIENT_TIMEOUT_S) for p in procs]
    finally:
        stopped = daemons.stop()
    if any(codes) or stopped != [0]:
        raise SystemExit(f"the traced run failed: writers {codes}, daemon {stopped}")


def in_flight_max(arrivals: list[int], completions: list[int]) -> int:
    """The most data requests between arrival and reply at once."""
    events = sorted([(t, 1) for t in arrivals] + [(t, -1) for t in completions])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def row(trace: Path, scheduler: str, platform: Path) -> str:
    t = read_trace(trace)
    data = t[t["op"].isin(DATA_OPS)]
    sim = json.loads(
        subprocess.check_output(
            [
                str(paths.find("iorelay-sim")),
                "--platform",
                str(platform),
                "--replay",
                str(trace),
                "--scheduler",
                scheduler,
            ],
            text=True,
        )
    )
    flight = in_flight_max(list(data["arrival_ns"]), list(data["completion_ns"]))
    return (
        f"| {scheduler} | {len(data)} | {flight} | {sim['trace_dispatches']} | "
        f"{sim['trace_time_s']:.3f} | {sim['dispatches']} | {sim['simulated_time_s']:.3f} | "
        f"{sim['identical_dispatches']}/{sim['trace_dispatches']} = "
        f"{sim['identical_dispatch_share']:.2f} |"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--schedulers", default="fifo,to-agg,sjf,aioli")
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--segments", type=int, default=16)
    p.add_argument("--block", type=int, default=8192)
    p.add_argument("--device", default="hdd", help="the emulated disk's src/device profile")
    p.add_argument("--daemon-args", default="", help="more iorelayd options, one string")
    p.add_argument("--platform", default=str(paths.REPO_ROOT / "platforms" / "local.json"))
    p.add_argument("--keep", type=Path, help="keep the traces in this directory")
    args = p.parse_args()
    print(
        "| scheduler | requests | daemon in flight | daemon dispatches | daemon s "
        "| simulated dispatches | simulated s | identical |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="sim-replay-", dir="/tmp") as tmp:
        out_dir = args.keep or Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        for scheduler in args.schedulers.split(","):
            trace = out_dir / f"{scheduler}.trace"
            record(trace, scheduler, args, Path(tmp) / scheduler)
            print(row(trace, scheduler, Path(args.platform)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
