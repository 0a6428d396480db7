"""OMPIO's overlap of one cycle's exchange with the previous cycle's writes, measured on the
testbed and simulated, so that the simulator's OMPIO plan is checked against real runs.

    .venv/bin/python bench/ompio_overlap.py [--aggregators 1] [--request 1M] [--calls 4]
        [--cycle 4M] [--reps 5] [--tool iorelay-bench|ior] [--out FILE.md]

OpenMPI's fcoll component vulcan (OMPIO's collective writes on a file system other than
Lustre, as the testbed's GlusterFS) keeps two buffers of half io_ompio_bytes_per_agg each: with
asynchronous writes (MCA fcoll_vulcan_async_io=1) the aggregator writes cycle c while the ranks
send it cycle c + 1; with synchronous ones (=2) it exchanges, then writes, cycle after cycle;
the default (0) writes asynchronously when the file system's module can and a call has more
than 2 cycles.

Each run: 12 ranks, 4 on each of node1-node3 (one Slurm allocation, as
bench/collective_spread.py), write one shared file on the testbed's GlusterFS in the 1D-strided
pattern, REQUEST bytes per rank per collective call, CALLS calls, then MPI_File_sync (timed),
through AGGREGATORS aggregators with cycles of CYCLE bytes (io_ompio_bytes_per_agg = 2 CYCLE).
Three settings alternate in a rotated order within each repetition: fcoll=vulcan with
async_io=2 (sync) and =1 (async), and OMPIO's defaults for fcoll (default). The same pattern is
simulated on platforms/testbed.json (`iorelay-sim-collective --plan ompio --ompio-async on|off`)
and the report sets the measured async / sync ratio beside the simulated one. Writes
bench/results/ompio-overlap-testbed.md and .json.

--tool ior writes the same file with IOR (built from ../shared/vendor, bench/vendor_tools.py)
instead of iorelay-bench: `ior -a MPIIO -c -w -b REQUEST -t REQUEST -s CALLS -e`, the same
layout (segment c, rank r at (c x ranks + r) x REQUEST), fsync in the timed phase.

It starts only on a quiet machine (--max-load, --wait-minutes, as
bench/collective_saturation.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import testbed_mpiio
from collective_saturation import aggregator_settings
from collective_spread import HOSTS, RANKS_PER_HOST
from vendor_tools import build_ior, parse_ior

from iorelay import mpi, paths, units
from iorelay.testbed.explore import mpi_argv, mpi_env

REPO = Path(__file__).resolve().parents[1]
# The fcoll settings compared; the simulator's --ompio-async for each (None: not simulated).
SETTINGS = {
    "sync": ({"OMPI_MCA_fcoll": "vulcan", "OMPI_MCA_fcoll_vulcan_async_io": "2"}, "off"),
    "async": ({"OMPI_MCA_fcoll": "vulcan", "OMPI_MCA_fcoll_vulcan_async_io": "1"}, "on"),
    "default": ({}, "auto"),
}


def run(args: argparse.Namespace, setting: str, directory: str) -> float:
    extra, env = aggregator_settings("ompio", args.aggregators, args.cycle)
    env |= SETTINGS[setting][0]
    ranks = RANKS_PER_HOST * len(HOSTS)
    if args.tool == "ior":
        return ior_mib_s(args, ranks, directory, env)
    options = ["--spatiality", "strided", "--request", str(args.request),
               "--segments", str(args.calls), "--write", "--fsync", *extra]  # fmt: skip
    result = testbed_mpiio.bench_on_hosts("openmpi", HOSTS, ranks, directory, options, env)
    return testbed_mpiio.phase_mib_s(result)


def ior_mib_s(args: argparse.Namespace, ranks: int, directory: str, env: dict[str, str]) -> float:
    """IOR's write bandwidth for the same file, from inside the allocation (the ranks on HOSTS
    through the MPI's launcher, as iorelay-bench's)."""
    os.environ[mpi.ENV] = "openmpi"  # the launcher mpi_argv picks (as bench_on_hosts)
    size = str(args.request)
    program = [str(build_ior("openmpi") / "ior"), "-a", "MPIIO", "-c", "-w", "-b", size,
               "-t", size, "-s", str(args.calls), "-e", "-o", f"{directory}/ior.dat"]  # fmt: skip
    argv = mpi_argv(HOSTS, ranks, list(env), program)
    proc = subprocess.run(argv, env={**os.environ, **mpi_env(), **env}, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=testbed_mpiio.RUN_TIMEOUT_S,
                          check=False)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}\n{proc.stdout[-1500:]}{proc.stderr[-1500:]}")
    return float(parse_ior(proc.stdout)["bandwidth_mib_s"])


def simulate(args: argparse.Namespace, ompio_async: str) -> dict:
    argv = [str(paths.find("iorelay-sim-collective")), "--platform", "platforms/testbed.json",
            "--nodes", str(len(HOSTS)), "--ranks-per-node", str(RANKS_PER_HOST),
            "--bytes-per-rank", str(args.request), "--calls", str(args.calls),
            "--cb-nodes", str(args.aggregators), "--cb-buffer-size", str(args.cycle),
            "--plan", "ompio", "--ompio-async", ompio_async]  # fmt: skip
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: {out.stderr.strip()}")
    return {"argv": argv[1:], **json.loads(out.stdout)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aggregators", type=int, default=1)
    ap.add_argument("--request", default="1M", help="bytes per rank per collective call")
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--cycle", default="4M", help="an aggregator's bytes per cycle")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tool", choices=("iorelay-bench", "ior"), default="iorelay-bench")
    ap.add_argument("--out", type=Path, default=REPO / "bench/results/ompio-overlap-testbed.md")
    testbed_mpiio.add_quiet_options(ap)
    args = ap.parse_args()
    args.request = units.parse_bytes(args.request)
    args.cycle = units.parse_bytes(args.cycle)
    if args.tool == "ior":
        build_ior("openmpi")  # before the allocation: the first build takes minutes
    # Before the allocation (not holding it while waiting), and again inside it.
    if not testbed_mpiio.quiet("ompio_overlap", "the overlap", args):
        return 2
    status = testbed_mpiio.in_allocation(HOSTS)
    if status is not None:
        return status
    command = "python bench/ompio_overlap.py " + " ".join(sys.argv[1:])
    names = list(SETTINGS)
    rows = []
    with testbed_mpiio.work_dir("iorelay-overlap-") as tmp:
        for rep in range(args.reps):
            for setting in names[rep % len(names) :] + names[: rep % len(names)]:
                mib_s = run(args, setting, tmp)
                rows.append({"repetition": rep, "setting": setting, "mib_s": mib_s,
                             "load": testbed_mpiio.load()})  # fmt: skip
                print(f"rep {rep} {setting}: {mib_s:.2f} MiB/s", flush=True)
    simulated = {name: simulate(args, sim) for name, (_, sim) in SETTINGS.items()}
    text = report(args, command, rows, simulated)
    print(text)
    args.out.write_text(text)
    args.out.with_suffix(".json").write_text(
        json.dumps({"command": command, "runs": rows, "simulated": simulated}, indent=1)
    )
    return 0


def report(args: argparse.Namespace, command: str, rows: list[dict], simulated: dict) -> str:
    measured = {n: statistics.median(r["mib_s"] for r in rows if r["setting"] == n)
                for n in SETTINGS}  # fmt: skip
    ranks = RANKS_PER_HOST * len(HOSTS)
    per_call = ranks * args.request
    cycles = -(-per_call // (args.aggregators * args.cycle))
    lines = [
        f"# OMPIO's overlap of exchange and writes, testbed, {time.strftime('%Y-%m-%d')}",
        "",
        f"Command: `{command}` ({ranks} ranks, {RANKS_PER_HOST} on each of {', '.join(HOSTS)}; "
        f"{units.format_bytes(per_call)} per collective call, {args.calls} calls; "
        f"{args.aggregators} aggregator(s), cycles of {units.format_bytes(args.cycle)}: "
        f"{cycles} cycle(s) per call per aggregator; written with {args.tool}; load averages "
        "after the runs "
        f"{rows[0]['load']} to {rows[-1]['load']})",
        "",
        "| setting | measured MiB/s, median | runs | simulated MiB/s | simulator's --ompio-async |",
        "|---|---:|---|---:|---|",
        *(
            f"| {n} | {measured[n]:.2f} | "
            + ", ".join(f"{r['mib_s']:.2f}" for r in rows if r["setting"] == n)
            + f" | {simulated[n]['bandwidth_MiBps']:.2f} | {SETTINGS[n][1]} |"
            for n in SETTINGS
        ),
        "",
        f"async / sync: measured {measured['async'] / measured['sync']:.2f}, simulated "
        f"{simulated['async']['bandwidth_MiBps'] / simulated['sync']['bandwidth_MiBps']:.2f}; "
        f"default / sync: measured {measured['default'] / measured['sync']:.2f}, simulated "
        f"{simulated['default']['bandwidth_MiBps'] / simulated['sync']['bandwidth_MiBps']:.2f}",
        "",
        "Simulated: `iorelay-sim-collective " + " ".join(simulated["async"]["argv"]) + "`",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
