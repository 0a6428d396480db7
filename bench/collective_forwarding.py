"""What forwarding through one I/O node costs collective MPI-IO writes, per MPI, on a fixed
calibration pattern: the evidence `iorelay hints` decides "direct or through I/O nodes" from
(iorelay.forwarding_cost).

    .venv/bin/python bench/collective_forwarding.py --component ompio|romio321|mpich [--reps 5]
        [--sizes 384K,1536K,6M,24M] [--total 4M] [--local]
    .venv/bin/python bench/collective_forwarding.py --component C --report   # from saved runs

The ladder the testbed's advice reads (platforms/testbed.json), on an idle machine, one step
per doubling so that no judged call size falls halfway between two steps, and 10 runs a side:

    .venv/bin/python bench/collective_forwarding.py --component C --reps 10 --tag idle10 \
        --sizes 384K,768K,1536K,3M,6M,12M,24M

Each run writes one shared file with collective calls and each MPI's defaults (no hints, no MCA
parameters: the `default` of bench/testbed_collective.py), 1D-strided with requests of SIZE /
ranks so that a call covers SIZE contiguous bytes, max(TOTAL, 2 SIZE) bytes, MPI_File_sync in
the timed phase; once direct on the file system and once through one iorelayd (ion1; with
--local one local iorelayd), the two alternating, sizes rotated within each repetition. The
pattern is none of the judged sets (bench/testbed_collective.py's sets A-E, LOCAL_SETS),
though its 3 MiB step has P2's shape (12 ranks, 256 KiB requests): on the testbed 12 ranks,
4 on each of node1-node3; with --local 4 ranks here and sizes 128K,512K,2M,8M. Rows go to
bench/results/collective-forwarding-[local-]C.jsonl as they finish (a rerun skips those done);
the report (.md) gives per size the medians, the ratio through 1 I/O node / direct and the
two-sided Mann-Whitney p, and the ladder as a platform file's collective.forwarding_by_mpi.C
(platforms/testbed.json, platforms/local.json).
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import testbed_mpiio
from testbed_mpiio import COMPONENT_ENV, COMPONENT_LIBRARY

from iorelay import forwarding_cost, units

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "results"
HOSTS = ["node1", "node2", "node3"]
IONODE = "ion1"
RANKS_PER_HOST = 4
LOCAL_RANKS = 4
SIZES = {"testbed": "384K,1536K,6M,24M", "local": "128K,512K,2M,8M"}


def one_run(args: argparse.Namespace, size: int, ionodes: int, work: Path) -> dict[str, Any]:
    ranks = LOCAL_RANKS if args.local else RANKS_PER_HOST * len(HOSTS)
    if size % ranks:
        raise SystemExit(f"size {size} is not a multiple of the {ranks} ranks")
    calls = max(2, args.total // size)
    options = ["--spatiality", "strided", "--request", str(size // ranks),
               "--segments", str(calls), "--write", "--fsync", "--collective"]  # fmt: skip
    mpi, env = COMPONENT_LIBRARY[args.component], COMPONENT_ENV.get(args.component, {})
    row: dict[str, Any] = {"calls": calls}
    result, written = testbed_mpiio.bench_placed(
        mpi, HOSTS, ranks, work, options, env, forwarded=bool(ionodes), local=args.local,
        ionode=IONODE, expected_bytes=calls * size,
    )  # fmt: skip
    written = -1 if written is None else written
    return row | {"mib_s": testbed_mpiio.phase_mib_s(result), "daemon_bytes_written": written}


def rows_path(args: argparse.Namespace) -> Path:
    tag = f"-{args.tag}" if args.tag else ""
    where = "local-" if args.local else ""
    return OUT / f"collective-forwarding-{where}{args.component}{tag}.jsonl"


def measure(args: argparse.Namespace, sizes: list[int]) -> int:
    if not args.local:
        status = testbed_mpiio.in_allocation([IONODE, *HOSTS])
        if status is not None:
            return status
    path = rows_path(args)
    done = {
        (r["repetition"], r["size"], r["ionodes"])
        for r in testbed_mpiio.read_rows(path)
        if "mib_s" in r
    }
    command = "python bench/collective_forwarding.py " + shlex.join(sys.argv[1:])
    deadline = time.monotonic() + args.max_minutes * 60
    cells = [(s, i) for s in sizes for i in (0, 1)]
    for rep in range(args.reps):
        shift = (2 * rep) % len(cells)
        order = cells[shift:] + cells[:shift]
        if rep % 2:  # forwarded first at every size in odd repetitions
            order = [(s, 1 - i) for s, i in order]
        for size, ionodes in order:
            if (rep, size, ionodes) in done:
                continue
            if time.monotonic() > deadline:
                print(f"stopped at --max-minutes {args.max_minutes}; rerun to go on")
                return 3
            row: dict[str, Any] = {"repetition": rep, "size": size, "ionodes": ionodes,
                                   "command": command,
                                   "date": time.strftime("%Y-%m-%d %H:%M")}  # fmt: skip
            try:
                where = "/var/tmp" if args.local else str(testbed_mpiio.SHARED_PATH)
                with tempfile.TemporaryDirectory(prefix="tbfwd-", dir=where) as tmp:
                    row |= one_run(args, size, ionodes, Path(tmp))
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                row["error"] = str(e)[-1500:]
            row["load"] = testbed_mpiio.load()
            with path.open("a") as f:
                f.write(json.dumps(row) + "\n")
            said = f"{row['mib_s']:.2f} MiB/s" if "mib_s" in row else row["error"][:300]
            print(f"rep {rep} {units.format_bytes(size)} ionodes={ionodes}: {said}", flush=True)
    return 0


def report(args: argparse.Namespace, sizes: list[int]) -> int:
    path = rows_path(args)
    saved = testbed_mpiio.read_rows(path)
    rows = [r for r in saved if "mib_s" in r and r["size"] in sizes]
    if not rows:
        raise SystemExit(f"no runs in {path}")
    errors = [r for r in saved if "error" in r]
    where = "this machine" if args.local else "the testbed"
    flag = " --local" if args.local else ""
    source = (f"bench/collective_forwarding.py{flag} on {where}, {rows[0]['date']} to "
              f"{rows[-1]['date']}, {path.relative_to(REPO)}")  # fmt: skip
    ladder = forwarding_cost.ladder_from_runs(
        args.component, ((r["size"], r["ionodes"], r["mib_s"]) for r in rows), source
    )
    loads = sorted({r["load"] for r in rows})
    who = (f"{LOCAL_RANKS} ranks on this machine" if args.local else
           f"{RANKS_PER_HOST * len(HOSTS)} ranks, {RANKS_PER_HOST} on each of {', '.join(HOSTS)}, "
           f"{IONODE} the I/O node")  # fmt: skip
    lines = [f"# Forwarding's cost to collective writes, {args.component}, {where}", "",
             f"Command: `{rows[0]['command']}` ({who}; each MPI's defaults, collective calls, "
             f"1D strided, MPI_File_sync timed); runs {rows[0]['date']} to {rows[-1]['date']}, "
             f"load averages {loads[0]} .. {loads[-1]}; {len(errors)} failed run(s)", "",
             "| bytes per call | direct MiB/s, median | runs | through 1 I/O node, median | runs "
             "| forwarded / direct | Mann-Whitney p |",
             "|---:|---:|---|---:|---|---:|---:|"]  # fmt: skip
    for step in ladder.steps:
        cols = []
        for ionodes in (0, 1):
            mine = [r["mib_s"] for r in rows if r["size"] == step.bytes_per_call
                    and r["ionodes"] == ionodes]  # fmt: skip
            cols += [f"{statistics.median(mine):.2f}", ", ".join(f"{v:.2f}" for v in mine)]
        lines.append(f"| {units.format_bytes(step.bytes_per_call)} | " + " | ".join(cols)
                     + f" | {step.ratio:.2f} | {step.p:.3f} |")  # fmt: skip
    doc = forwarding_cost.ladder_to_json(ladder)
    lines += ["", f"As `collective.forwarding_by_mpi.{args.component}`:", "", "```",
              json.dumps(doc), "```"]  # fmt: skip
    text = "\n".join(lines) + "\n"
    print(text)
    path.with_suffix(".md").write_text(text)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--component", choices=sorted(COMPONENT_LIBRARY), required=True)
    ap.add_argument("--sizes", help="bytes per collective call (default: testbed "
                    f"{SIZES['testbed']}, local {SIZES['local']})")  # fmt: skip
    ap.add_argument("--total", default="4M", help="bytes per run (at least 2 calls)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--local", action="store_true", help="4 ranks and one iorelayd here")
    ap.add_argument("--max-minutes", type=float, default=19.0, help="stop starting runs after")
    ap.add_argument("--tag", help="rows to ...-C-TAG.jsonl (a repeat of the ladder)")
    ap.add_argument("--report", action="store_true", help="the ladder from the saved runs")
    args = ap.parse_args()
    args.total = units.parse_bytes(args.total)
    ladder = args.sizes or SIZES["local" if args.local else "testbed"]
    sizes = [units.parse_bytes(s) for s in ladder.split(",") if s]
    if args.report:
        return report(args, sizes)
    return measure(args, sizes)


if __name__ == "__main__":
    sys.exit(main())
