#!/usr/bin/env python3
"""aIOLi against FIFO on one hard disk, real and simulated (issue 15, criterion 4): C MPI ranks
write one 1D-strided shared file in T-byte O_DIRECT requests, S segments (bench/strided_job.py),
through one local iorelayd on the emulated disk (`--backend emulated:hdd`, the daemon's default
4 slots), and the same pattern in iorelay-sim on platforms/local.json (the same `hdd` model,
4 slots, one I/O node, C compute nodes, `--odirect`).

    .venv/bin/python bench/sim_aioli.py [--clients 8,32] [--requests 8K,64K,512K,4M]
        [--segments 16] [--reps 3]

Real runs: medians of --reps repetitions, each running every cell with fifo then aioli; the
daemon's counters must show every write forwarded (C * S writes; a write of 2 MiB or more
arrives as 1 MiB pieces) and every byte written, and its mean requests per dispatch is
recorded. The simulator is deterministic (one run per cell). Prints a Markdown table and writes
it to bench/results/sim-aioli.md (--out) with the date, the load average and the wall time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from schedulers import write_mib_s  #  (one run of the job, as bench/schedulers.py)

from iorelay.launch.local import LocalDaemons
from iorelay.simulate import platform_path, run_tool
from iorelay.stats import query_stats
from iorelay.units import parse_bytes

REPO = Path(__file__).resolve().parents[1]

SCHEDULERS = ("fifo", "aioli")
PAPER_RANGE = (11.0, 50.0)  # aIOLi's speed-ups over its range of request sizes and clients
# The interposer sends a transfer of two pieces or more as pipelined pieces of this size
# (src/client/file_io.cc, kPieceBytes): the daemon sees a 4 MiB write as four requests.
CLIENT_PIECE_BYTES = 1 << 20


def forwarded_per_write(request: str) -> int:
    """Requests the daemon receives for one write of this size."""
    size = parse_bytes(request)
    return -(-size // CLIENT_PIECE_BYTES) if size >= 2 * CLIENT_PIECE_BYTES else 1


def real_run(work: Path, root: Path, sched: str, job: argparse.Namespace) -> tuple[float, float]:
    """One run of the job through a fresh daemon on the emulated disk: (MiB/s, requests per
    dispatch); raises if the daemon did not forward every write."""
    with LocalDaemons(1, root, "/iorelay-aioli", work, scheduler=sched,
                      backend="emulated:hdd") as d:  # fmt: skip
        mib_s = write_mib_s(d.prefix, job, d.env("unix"))
        total = query_stats(d.addresses("unix")[0], d.credential_file)["total"]
    writes, expected = total["by_family"]["write"]["requests"], job.ranks * job.segments
    if writes != expected * forwarded_per_write(job.request):
        raise RuntimeError(f"{sched} {job}: {writes} writes forwarded for {expected}")
    if total["bytes_written"] != expected * parse_bytes(job.request):
        raise RuntimeError(f"{sched} {job}: {total['bytes_written']} bytes written")
    return mib_s, float(total["mean_requests_per_dispatch"])


def simulated_run(sched: str, job: argparse.Namespace) -> dict:
    """iorelay-sim's JSON result for the same pattern on platforms/local.json."""
    result = run_tool(["--platform", str(platform_path("local")), "--spatiality", "strided",
                       "--request", job.request, "--segments", str(job.segments),
                       "--ranks", str(job.ranks), "--nodes", str(job.ranks), "--ionodes", "1",
                       "--scheduler", sched, "--odirect"])  # fmt: skip
    if result["requests"] != job.ranks * job.segments:
        raise RuntimeError(f"simulated {sched} {job}: {result['requests']} requests")
    return result


def ratio_cell(fifo: float, aioli: float) -> str:
    """aioli / fifo, in bold inside the paper's range."""
    ratio = aioli / fifo
    text = f"{ratio:.1f}x"
    return f"**{text}**" if PAPER_RANGE[0] <= ratio <= PAPER_RANGE[1] else text


def markdown(args: argparse.Namespace, rows: list[dict], load: str, wall_s: float) -> str:
    cmd = "python bench/sim_aioli.py " + " ".join(sys.argv[1:])
    lines = [f"## aIOLi against FIFO on one hard disk, real and simulated, "
             f"{time.strftime('%Y-%m-%d %H:%M %Z')}", "",
             f"Command: `{cmd}` (wall time {wall_s / 60:.1f} min; load average {load}; "
             f"{os.cpu_count()} cores shared with other builds)", "",
             f"C ranks, one 1D-strided shared file, T-byte O_DIRECT writes, {args.segments} "
             "segments. Real: one iorelayd, `--backend emulated:hdd`, 4 slots, MiB/s median of "
             f"{args.reps} (runs in the last column). Simulated: `iorelay-sim --platform "
             "platforms/local.json --spatiality strided --request T --segments S --ranks C "
             "--nodes C --ionodes 1 --odirect`. Bold: aioli / fifo in the paper's 11-50x. "
             "The interposer sends a write of 2 MiB or more as pipelined 1 MiB pieces, so the "
             "real requests per dispatch of 4M count pieces; the simulator sends one request.",
             "",
             "| clients | request | real fifo MiB/s | real aioli MiB/s | real aioli/fifo "
             "| real requests/dispatch (aioli) | simulated fifo | simulated aioli "
             "| simulated aioli/fifo | simulated requests/dispatch (aioli) "
             "| real runs fifo; aioli |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for r in rows:
        real = {s: statistics.median(r["runs"][s]) for s in SCHEDULERS}
        sim = {s: r["sim"][s]["bandwidth_MiBps"] for s in SCHEDULERS}
        runs = "; ".join(", ".join(f"{v:.1f}" for v in r["runs"][s]) for s in SCHEDULERS)
        lines.append(f"| {r['job'].ranks} | {r['job'].request} | {real['fifo']:.2f} | "
                     f"{real['aioli']:.2f} | {ratio_cell(real['fifo'], real['aioli'])} | "
                     f"{statistics.median(r['per_dispatch']):.1f} | {sim['fifo']:.2f} | "
                     f"{sim['aioli']:.2f} | {ratio_cell(sim['fifo'], sim['aioli'])} | "
                     f"{r['sim']['aioli']['requests_per_dispatch']:.1f} | {runs} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", default="8,32", help="MPI ranks, a list")
    ap.add_argument("--requests", default="8K,64K,512K,4M", help="request sizes, a list")
    ap.add_argument("--segments", type=int, default=16)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=REPO / "bench/results/sim-aioli.md")
    args = ap.parse_args()
    start_s, load_start = time.monotonic(), os.getloadavg()
    rows = [{"job": argparse.Namespace(ranks=int(c), request=t, segments=args.segments),
             "runs": {s: [] for s in SCHEDULERS}, "per_dispatch": []}
            for c in args.clients.split(",") for t in args.requests.split(",")]  # fmt: skip
    for r in rows:
        r["sim"] = {s: simulated_run(s, r["job"]) for s in SCHEDULERS}
    work = Path(tempfile.mkdtemp(prefix="iorelay-aioli-", dir="/tmp"))
    try:
        (work / "root").mkdir()
        for rep in range(args.reps):
            for i, r in enumerate(rows):
                for s in SCHEDULERS:
                    mib_s, per = real_run(work / f"w{rep}-{i}-{s}", work / "root", s, r["job"])
                    r["runs"][s].append(mib_s)
                    if s == "aioli":
                        r["per_dispatch"].append(per)
                print(f"rep {rep + 1} {r['job'].ranks} x {r['job'].request}: fifo "
                      f"{r['runs']['fifo'][-1]:.1f}, aioli {r['runs']['aioli'][-1]:.1f} MiB/s",
                      file=sys.stderr, flush=True)  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_end = os.getloadavg()
    load = f"{' / '.join(f'{v:.2f}' for v in load_start)} at the start, " + (
        f"{' / '.join(f'{v:.2f}' for v in load_end)} at the end (1 / 5 / 15 min)"
    )
    text = markdown(args, rows, load, time.monotonic() - start_s)
    print(text)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
