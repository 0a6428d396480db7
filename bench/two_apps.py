#!/usr/bin/env python3
"""Two applications sharing one I/O node, as aIOLi's IOR + cat case: an MPI job writing a
1D-strided shared file in small O_DIRECT requests, and a sequential single-process reader,
each with its own credential. Per scheduler: each one's completion time alone and together,
and the slowdown (together / alone).

    .venv/bin/python bench/two_apps.py [--backend emulated:hdd] [--ranks 32] [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from strided_job import MPI_ENV, strided_writer_cmd

from iorelay import paths
from iorelay.credential import create_credential
from iorelay.launch.local import LocalDaemons

REPO = Path(__file__).resolve().parents[1]

TIMEOUT_S = 600


def writer_cmd(args: argparse.Namespace, directory: str, env: dict[str, str]) -> list[str]:
    return strided_writer_cmd(args.ranks, directory, env, "8K", args.segments)


def reader_cmd(args: argparse.Namespace, directory: str) -> list[str]:
    return [str(paths.find("io_worker")), "--file", f"{directory}/seq.dat", "--size",
            str(args.read_mib << 20), "--request", str(64 << 10), "--op", "read"]  # fmt: skip


def timed(cmds: list[tuple[list[str], dict[str, str]]]) -> list[float]:
    """Starts the commands together; returns each one's completion time in seconds."""
    t0 = time.monotonic()
    procs = [subprocess.Popen(c, env={**os.environ, **MPI_ENV, **e}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for c, e in cmds]  # fmt: skip
    done = [0.0] * len(procs)
    while any(p.poll() is None for p in procs):
        for i, p in enumerate(procs):
            if p.poll() is not None and done[i] == 0.0:
                done[i] = time.monotonic() - t0
        if time.monotonic() - t0 > TIMEOUT_S:
            for p in procs:
                p.kill()
            raise RuntimeError("timed out")
        time.sleep(0.01)
    for i, p in enumerate(procs):
        if done[i] == 0.0:
            done[i] = time.monotonic() - t0
        if p.returncode != 0:
            raise RuntimeError(f"{cmds[i][0][0]} failed: {p.stderr.read()[-1500:]}")
    return done


def one_scheduler(work: Path, root: Path, sched: str, reader_key: Path,
                  args: argparse.Namespace) -> list[tuple[float, float, float, float]]:  # fmt: skip
    """Per repetition: (writer alone, writer together, reader alone, reader together)."""
    second = ["--credential", f"reader={reader_key}", *args.daemon_args.split()]
    reps = []
    with LocalDaemons(1, root, "/iorelay-2app", work, scheduler=sched, backend=args.backend,
                      app_name="writer", extra_args=second) as d:  # fmt: skip
        wenv = d.env("unix")
        renv = {**wenv, "IORELAY_SECRET_FILE": str(reader_key)}
        w_cmd, r_cmd = writer_cmd(args, d.prefix, wenv), reader_cmd(args, d.prefix)
        for _ in range(args.reps):
            w_alone = timed([(w_cmd, wenv)])[0]
            r_alone = timed([(r_cmd, renv)])[0]
            w_both, r_both = timed([(w_cmd, wenv), (r_cmd, renv)])
            reps.append((w_alone, w_both, r_alone, r_both))
    return reps


def markdown(args: argparse.Namespace, rows: list[tuple[str, list]]) -> str:
    cmd = "python bench/two_apps.py " + " ".join(sys.argv[1:])
    lines = [f"## Two applications on one I/O node, {time.strftime('%Y-%m-%d')}, backend "
             f"{args.backend}", "", f"Command: `{cmd}`", "",
             f"Writer: {args.ranks} ranks, 1D-strided shared file, 8 KiB O_DIRECT writes, "
             f"{args.segments} segments. Reader: one process, {args.read_mib} MiB in 64 KiB "
             f"reads. Seconds, medians of {args.reps} repetitions (each: writer alone, reader "
             "alone, both together); slowdown = median of the per-repetition together / alone, "
             "with its range.", "",
             "| scheduler | writer alone | writer together | slowdown | reader alone | "
             "reader together | slowdown |", "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip

    def slowdown(alone: list[float], both: list[float]) -> str:
        ratios = [b / a for a, b in zip(alone, both, strict=True)]
        return f"{statistics.median(ratios):.2f} ({min(ratios):.2f} to {max(ratios):.2f})"

    for sched, reps in rows:
        wa, wb, ra, rb = (list(col) for col in zip(*reps, strict=True))
        med = statistics.median
        lines.append(f"| {sched} | {med(wa):.2f} | {med(wb):.2f} | {slowdown(wa, wb)} | "
                     f"{med(ra):.2f} | {med(rb):.2f} | {slowdown(ra, rb)} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="emulated:hdd")
    ap.add_argument("--ranks", type=int, default=32)
    ap.add_argument("--segments", type=int, default=16)
    ap.add_argument("--read-mib", type=int, default=256)
    ap.add_argument("--schedulers", default="fifo,to-agg,sjf,aioli,mlf,wfq")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--daemon-args", default="", help="extra iorelayd arguments")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="iorelay-2app-", dir="/tmp"))
    rows = []
    try:
        root = work / "root"
        root.mkdir()
        with open(root / "seq.dat", "wb") as f:
            f.write(os.urandom(args.read_mib << 20))
        reader_key = create_credential(work / "reader.key")
        for sched in args.schedulers.split(","):
            rows.append((sched, one_scheduler(work / f"w-{sched}", root, sched, reader_key, args)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = markdown(args, rows)
    print(text)
    (REPO / f"bench/results/two-apps-{args.backend.replace(':', '-')}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
