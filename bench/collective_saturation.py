"""The write saturation point k of this machine (iorelay.saturation): collective MPI-IO writes
through ONE aggregator, each collective call giving it SIZE bytes, over a ladder of sizes; k is
the smallest size within 90% of the plateau, per repetition, with its spread.

    .venv/bin/python bench/collective_saturation.py [--component ompio|romio321|mpich] [--ranks 4]
        [--sizes 256K,1M,4M,16M,64M] [--total 256M] [--reps 5] [--platform-out FILE.json]
        [--testbed HOST]

With --testbed HOST (e.g. node1) the ranks run on that compute host of the testbed, in one
Slurm allocation of it, and write to the testbed's GlusterFS (bench/testbed_mpiio.py): k of
the testbed, where the aggregator's writes cross the host's capped link to the storage host.

Each run: P ranks write one shared file in the 1D-strided pattern with requests of SIZE / P,
so each collective call covers SIZE contiguous bytes, and the one aggregator (OMPIO:
io_ompio_num_aggregators=1 with io_ompio_bytes_per_agg=2 x SIZE; ROMIO, OpenMPI's romio321 or
MPICH's: cb_nodes=1 with cb_buffer_size=SIZE) writes them in one call; TOTAL bytes, then
MPI_File_sync (the write phase's time includes it). Sizes alternate in a rotated order within
each repetition. Writes bench/results/collective-saturation-COMPONENT.md and .json; with
--platform-out, a copy of --platform with the measured k as
`collective.saturation_point_by_mpi.COMPONENT` (and as `collective.saturation_point` if it has
none).

It starts only on a quiet machine: k measured the hosts' load as much as the file system here
(64, 16 and 4 MiB at load 7-21 on 2026-12-06; 1 MiB with each MPI at load 0.5-4 the next day;
CPU spinners alone gave back 4-16 MiB, docs/collective.md),
so it waits up to --wait-minutes for the 1-minute load average to fall to --max-load (default 2,
this machine's cores) and refuses to start otherwise. The load is recorded before every run.
With --background-load N it then starts N processes that only spin on the CPU, each in its own
session, for all the runs: k under a known load, to tell the load's part from the day's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import testbed_mpiio
from collective_ionodes import mpiio_bench
from testbed_mpiio import COMPONENT_LIBRARY

from iorelay import prctl, units
from iorelay.collective_advice import ompio_bytes_per_agg
from iorelay.saturation import PLATEAU_SHARE, saturation
from iorelay.simulate import platform_path

REPO = Path(__file__).resolve().parents[1]


def aggregator_settings(
    component: str, aggregators: int, buffer_size: int = 0
) -> tuple[list[str], dict[str, str]]:
    """Bench options and environment for collective writes through `aggregators` aggregators
    (one per host), each taking `buffer_size` bytes per call when given (else the MPI's
    default buffer)."""
    env = {"OMPI_MCA_io": component} if COMPONENT_LIBRARY[component] == "openmpi" else {}
    if component == "ompio":
        env["OMPI_MCA_io_ompio_num_aggregators"] = str(aggregators)
        if buffer_size:
            # (Runs before 2026-12-07 10:30 set io_ompio_cycle_buffer_size instead, which left
            # bytes_per_agg at its 32 MiB: one 16 MiB cycle: the same single write per call
            # from 256 KiB to 16 MiB, four writes of 16 MiB for a 64 MiB call.)
            env["OMPI_MCA_io_ompio_bytes_per_agg"] = str(ompio_bytes_per_agg(buffer_size))
        return ["--collective"], env
    buffer = [f"cb_buffer_size={buffer_size}"] if buffer_size else []
    hints = [f"cb_nodes={aggregators}", "cb_config_list=*:1", *buffer, "romio_cb_write=enable"]
    return ["--collective", *(a for h in hints for a in ("--hint", h))], env


def run(args: argparse.Namespace, size: int, directory: str) -> float:
    if size % args.ranks:
        raise SystemExit(f"size {size} is not a multiple of --ranks {args.ranks}")
    segments = max(1, args.total // size)
    extra, env = aggregator_settings(args.component, 1, size)
    pattern = ["--request", str(size // args.ranks), "--segments", str(segments)]
    options = [*pattern, "--write", "--fsync", *extra]
    if args.testbed:
        options = ["--spatiality", "strided", *options]
        result = testbed_mpiio.bench_on_hosts(COMPONENT_LIBRARY[args.component], [args.testbed],
                                              args.ranks, directory, options, env)  # fmt: skip
        return testbed_mpiio.phase_mib_s(result)
    if args.component == "mpich":
        raise SystemExit("--component mpich is measured on the testbed only (--testbed HOST)")
    result = mpiio_bench(args.ranks, directory, options, env)
    (phase,) = [p for p in result["phases"] if p["operation"] == "write"]
    return float(phase["bandwidth_mib_s"])


@contextlib.contextmanager
def spinning(processes: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`processes` processes that spin on the CPU until the block ends (none for 0). Each in a
    session of its own: with the kernel's autogroup scheduling (Debian's default), processes of
    one session share one group's part of the CPU, so 8 or 20 spinners in the bench's session
    loaded the ranks alike (2026-12-07). They die with the bench, even when it is killed."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                 start_new_session=True, preexec_fn=prctl.die_with_parent)
                for _ in range(processes)]  # fmt: skip
    try:
        yield spinners
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--component", choices=sorted(COMPONENT_LIBRARY), default="ompio")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--sizes", default="256K,1M,4M,16M,64M")
    ap.add_argument("--total", default="256M")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp", help="where the files are written")
    ap.add_argument("--platform", default="local", help="with --platform-out: the platform")
    ap.add_argument("--platform-out", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--testbed", metavar="HOST", help="ranks on this testbed compute host")
    testbed_mpiio.add_quiet_options(ap)
    ap.add_argument("--background-load", type=int, default=0, metavar="N",
                    help="N processes spinning on the CPU during the runs")  # fmt: skip
    args = ap.parse_args()
    args.total = units.parse_bytes(args.total)
    sizes = [units.parse_bytes(s) for s in args.sizes.split(",") if s]
    if args.testbed:
        status = testbed_mpiio.in_allocation([args.testbed])
        if status is not None:
            return status
        args.dir = str(testbed_mpiio.SHARED_PATH)
    # The load before each later run includes what this bench's own ranks left behind.
    if not testbed_mpiio.quiet("collective_saturation", "k", args):
        return 2
    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="iorelay-k-", dir=args.dir) as tmp,
        spinning(args.background_load),
    ):
        for rep in range(args.reps):
            order = sizes[rep % len(sizes) :] + sizes[: rep % len(sizes)]
            for size in order:
                before = testbed_mpiio.load()
                mib_s = run(args, size, tmp)
                rows.append({"repetition": rep, "size": size, "mib_s": mib_s,
                             "load_before": before})  # fmt: skip
                print(f"rep {rep} size {units.format_bytes(size)}: {mib_s:.1f} MiB/s", flush=True)
    found = saturation(rows)
    k = units.format_bytes(found.saturation_point)
    q1, q3 = (units.format_bytes(int(q)) for q in found.quartiles)
    command = "python bench/collective_saturation.py " + " ".join(sys.argv[1:])
    lines = [
        f"# Write saturation point k, {args.component}, {time.strftime('%Y-%m-%d')}",
        "",
        f"Command: `{command}` ({args.ranks} ranks, {units.format_bytes(args.total)} per run, "
        f"files in {args.dir}"
        + (f" from testbed host {args.testbed}" if args.testbed else "")
        + f"; load averages before the first run {rows[0]['load_before']}, at the end "
        f"{testbed_mpiio.load()})"
        + (
            f"; {args.background_load} processes spinning on the CPU during the runs"
            if args.background_load
            else ""
        ),
        "",
        "| bytes per aggregator per call | median MiB/s | runs |",
        "|---:|---:|---|",
        *(
            f"| {units.format_bytes(s)} | {bw:.1f} | "
            + ", ".join(f"{r['mib_s']:.0f}" for r in rows if r["size"] == s)
            + " |"
            for s, bw in found.median_curve.items()
        ),
        "",
        f"k (smallest size within {PLATEAU_SHARE:.0%} of the repetition's plateau): median {k}, "
        f"interquartile range {q1} to {q3}, per repetition "
        + ", ".join(units.format_bytes(v) for v in found.per_repetition)
        + (
            " (some repetitions still rising at the largest size)"
            if found.reached_at_largest
            else ""
        ),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    where = "testbed-" if args.testbed else ""
    out = args.out or REPO / "bench/results" / f"collective-saturation-{where}{args.component}.md"
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps({"command": command, "runs": rows}, indent=1))
    if args.platform_out:
        doc = json.loads(platform_path(args.platform).read_text())
        # This MPI's own k, beside the others'; the single value only where there is none.
        collective = doc.setdefault("collective", {})
        collective.setdefault("saturation_point_by_mpi", {})[args.component] = k
        collective.setdefault("saturation_point", k)
        args.platform_out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"median of medians {statistics.median(found.median_curve.values()):.1f} MiB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
