"""The spread point of a machine and MPI: the bytes per collective call from which one
aggregator on every host writes faster than one aggregator for all of them
(iorelay.spread_point), measured on the testbed with a fixed calibration pattern.

    .venv/bin/python bench/collective_spread.py --component ompio|romio321|mpich [--reps 5]
        [--sizes 384K,1536K,6M,24M] [--total 12M] [--interleaved]

Why: k (bench/collective_saturation.py) is measured through one aggregator on one host. It says
how large one aggregator's calls must be, not what a second aggregator on another host costs or
adds: that depends on how the MPI runs its aggregators (ROMIO's two-phase I/O, OMPIO's fcoll),
so it is measured per MPI here, on a pattern fixed in this file, not on the patterns it is then
judged on (bench/testbed_collective.py).

Each run: 12 ranks, 4 on each of node1-node3 (one Slurm allocation), write one shared file on
the testbed's GlusterFS in the 1D-strided pattern with requests of SIZE / 12, so that each
collective call covers SIZE contiguous bytes; max(TOTAL, 2 SIZE) bytes, then MPI_File_sync in
the timed phase. Through A = 1 and A = 3 aggregators (OMPIO: io_ompio_num_aggregators=A; ROMIO,
OpenMPI's romio321 or MPICH's: cb_nodes=A, cb_config_list=*:1, romio_cb_write=enable, as the
`cbA` runs of bench/testbed_collective.py), sizes and counts rotated within each repetition.
The spread point is where the ratio of the two counts' median bandwidths crosses 1
(iorelay.spread_point). Writes bench/results/collective-spread-testbed-COMPONENT.md and .json.

--interleaved: the interleaved calibration pattern, fixed on 2026-12-06 before any of its runs
and none of the judged patterns (sets A-D, L1-L3 of bench/testbed_collective.py):
the same 12 ranks on node1-node3, but through a 2D subarray view (a 3 x 4 grid of tiles, each
rank's tile SEGMENTS rows of SIZE / 48 bytes) with 4 requests (rows) per rank per collective
call, so that a call covers SIZE bytes in 48 pieces that interleave across the ranks and leave
gaps between the tile rows: the several-requests-per-call shape of an interleaved job, which
ROMIO's and MPICH's two-phase I/O gather whatever the count. Same ladder of call sizes, same
counts (1 and 3); writes collective-spread-interleaved-testbed-COMPONENT.md and .json, the
point goes to collective.spread_point_interleaved_by_mpi.

It starts only on a quiet machine (--max-load, default 2, and --wait-minutes, as
bench/collective_saturation.py): the testbed's hosts share this machine's 2 cores, and the
points of 2026-12-06 were measured at load 14-19.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import testbed_mpiio
from collective_saturation import aggregator_settings
from testbed_mpiio import COMPONENT_LIBRARY

from iorelay import units
from iorelay.spread_point import median_curve, spread_point

REPO = Path(__file__).resolve().parents[1]
HOSTS = ["node1", "node2", "node3"]
RANKS_PER_HOST = 4
INTERLEAVED_VIEW = "subarray"  # --interleaved: the view and the requests per rank per call
INTERLEAVED_PER_CALL = 4


def run(args: argparse.Namespace, size: int, aggregators: int, directory: str) -> dict:
    ranks = RANKS_PER_HOST * len(HOSTS)
    per_call = INTERLEAVED_PER_CALL if args.interleaved else 1
    pieces = ranks * per_call
    if size % pieces:
        raise SystemExit(f"size {size} is not a multiple of the {pieces} pieces of a call")
    calls = max(2, args.total // size)
    extra, env = aggregator_settings(args.component, aggregators)
    options = ["--spatiality", "strided", "--request", str(size // pieces),
               "--segments", str(calls * per_call), "--write", "--fsync", *extra]  # fmt: skip
    if args.interleaved:
        options += ["--view", INTERLEAVED_VIEW, "--requests-per-call", str(per_call)]
    result = testbed_mpiio.bench_on_hosts(COMPONENT_LIBRARY[args.component], HOSTS, ranks,
                                          directory, options, env)  # fmt: skip
    mib_s = testbed_mpiio.phase_mib_s(result)
    return {"mib_s": mib_s, "calls": calls}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--component", choices=sorted(COMPONENT_LIBRARY), required=True)
    ap.add_argument("--sizes", default="384K,1536K,6M,24M", help="bytes per collective call")
    ap.add_argument("--total", default="12M", help="bytes per run (at least 2 calls)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument(
        "--interleaved",
        action="store_true",
        help="the interleaved calibration pattern (subarray, 4 requests per call)",
    )
    ap.add_argument("--out", type=Path)
    ap.add_argument("--from-json", type=Path, help="report the runs saved here, measure nothing")
    testbed_mpiio.add_quiet_options(ap)
    args = ap.parse_args()
    sizes = [units.parse_bytes(s) for s in args.sizes.split(",") if s]
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        return report(args, sizes, saved["runs"], saved["command"])
    # Before the allocation (not holding it while waiting), and again inside it.
    if not testbed_mpiio.quiet("collective_spread", "a spread point", args):
        return 2
    status = testbed_mpiio.in_allocation(HOSTS)
    if status is not None:
        return status
    args.total = units.parse_bytes(args.total)
    command = "python bench/collective_spread.py " + " ".join(sys.argv[1:])
    cells = [(s, a) for s in sizes for a in (1, len(HOSTS))]
    rows = []
    with testbed_mpiio.work_dir("iorelay-spread-") as tmp:
        for rep in range(args.reps):
            shift = (rep * 3) % len(cells)
            for size, a in cells[shift:] + cells[:shift]:
                row = {"repetition": rep, "size": size, "aggregators": a,
                       **run(args, size, a, tmp), "load": testbed_mpiio.load()}  # fmt: skip
                rows.append(row)
                # the runs so far, for --from-json if the turn ends early
                partial = out_path(args).with_suffix(".partial.json")
                partial.write_text(json.dumps({"command": command, "runs": rows}, indent=1))
                print(f"rep {rep} {units.format_bytes(size)} A={a}: {row['mib_s']:.2f} MiB/s",
                      flush=True)  # fmt: skip
    out_path(args).with_suffix(".partial.json").unlink(missing_ok=True)
    return report(args, sizes, rows, command)


def out_path(args: argparse.Namespace) -> Path:
    kind = "interleaved-" if args.interleaved else ""
    return (
        args.out or REPO / "bench/results" / f"collective-spread-{kind}testbed-{args.component}.md"
    )


def report(args: argparse.Namespace, sizes: list[int], rows: list[dict], command: str) -> int:
    curves = {a: median_curve((r["size"], r["mib_s"]) for r in rows if r["aggregators"] == a)
              for a in (1, len(HOSTS))}  # fmt: skip
    point = spread_point(curves[1], curves[len(HOSTS)])
    shape = (f"{INTERLEAVED_VIEW} view, {INTERLEAVED_PER_CALL} requests per rank per call"
             if args.interleaved else "1D strided, one request per rank per call")  # fmt: skip
    lines = [f"# Spread point{', interleaved' if args.interleaved else ''}, {args.component}, "
             f"{time.strftime('%Y-%m-%d')}", "",
             f"Command: `{command}` ({len(HOSTS) * RANKS_PER_HOST} ranks, {RANKS_PER_HOST} on "
             f"each of {', '.join(HOSTS)}; {shape}; files on GlusterFS; load average from "
             f"{rows[0]['load']} to {rows[-1]['load']})", "",
             "| bytes per call | A = 1: MiB/s, median (IQR) | runs | A = 3: median (IQR) | runs | "
             "A = 3 / A = 1 |", "|---:|---:|---|---:|---|---:|"]  # fmt: skip
    for size in sizes:
        cols = []
        for a in (1, len(HOSTS)):
            mine = [r["mib_s"] for r in rows if r["size"] == size and r["aggregators"] == a]
            q1, _, q3 = statistics.quantiles(mine, n=4) if len(mine) > 1 else (mine * 3)
            cols += [f"{curves[a][size]:.2f} ({q1:.2f}-{q3:.2f})",
                     ", ".join(f"{v:.2f}" for v in mine)]  # fmt: skip
        ratio = curves[len(HOSTS)][size] / curves[1][size]
        lines.append(f"| {units.format_bytes(size)} | " + " | ".join(cols) + f" | {ratio:.2f} |")
    said = ("never (one aggregator is as fast or faster at the largest size)" if point is None
            else "0: one aggregator per host is at least as fast at every size measured"
            if point == 0 else units.format_bytes(point))  # fmt: skip
    lines += ["", f"Spread point (A = 3 / A = 1 crosses 1, in log size): {said}"]
    text = "\n".join(lines) + "\n"
    print(text)
    out = out_path(args)
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps({"command": command, "runs": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
