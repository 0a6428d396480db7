"""mdtest with MPI ranks on the testbed's compute hosts: direct on GlusterFS against one I/O
node (iorelay run in a Slurm allocation), alternating, medians; and the same runs simulated on
platforms/testbed.json, whose metadata times come from such runs.

    .venv/bin/python bench/testbed_mdtest.py [--ranks 2,8] [--files 200] [--reps 3] [--fit]
        [--set storage.metadata_service=...] [--no-measure]

Needs an up testbed (iorelay testbed up; >= 2 compute hosts, >= 1 I/O node). Each rank creates,
stats, reads (4 KiB written at creation) and removes its own files in a directory of its own
(`mdtest -F -u -w 4096 -e 4096 -n FILES`), ranks split over node1 and node2, each through
`iorelay exec`; the I/O node is ion1. Every forwarded run checks the daemon's counters (two opens
and an unlink per file). Then each (ranks, path) is simulated with `iorelay simulate run
--mdtest` on the platform (with --set's values; with --fit also the metadata times of this run's
direct runs, as `fitted_settings` derives them) and the table shows measured and simulated ops/s
per phase; it goes to bench/results/testbed-mdtest.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mdtest import PHASES
from mdtest import parse_rates as parse_phases
from results_table import counts
from testbed_ior import COMPUTE, IONODE, direct_ranks, forwarded_ranks
from vendor_tools import build_ior

from iorelay import mpi
from iorelay.simulate import SimulateError, apply_settings, run_tool
from iorelay.testbed import slurm as testbed_slurm
from iorelay.testbed.plan import SHARED_PATH

REPO = Path(__file__).resolve().parents[1]

PLATFORM = REPO / "platforms" / "testbed.json"
BYTES = 4096
LAST_OPS: dict[int, dict[str, int]] = {}  # the daemon's requests by op, last forwarded run


def mdtest_argv(mdtest: Path, files: int, directory: Path) -> list[str]:
    return [str(mdtest), "-F", "-u", "-w", str(BYTES), "-e", str(BYTES), "-n", str(files),
            "-d", str(directory)]  # fmt: skip


def run_direct(mdtest: Path, ranks: int, files: int, work: Path) -> dict[str, float]:
    directory = work / f"direct-{ranks}"
    directory.mkdir()
    return parse_phases(direct_ranks(ranks, mdtest_argv(mdtest, files, directory)))


def run_forwarded(mdtest: Path, ranks: int, files: int, work: Path) -> dict[str, float]:
    """ops/s per phase; RuntimeError if the daemon did not serve every file's calls."""
    root = work / f"root-{ranks}"
    root.mkdir()
    out, total = forwarded_ranks(ranks, mdtest_argv(mdtest, files, root), work, root)
    by_op = total["by_op"]
    # Each file is opened twice (created, then read) and unlinked once.
    if by_op.get("open", 0) < 2 * ranks * files or by_op.get("unlink", 0) < ranks * files:
        raise RuntimeError(f"the daemon served too little for {ranks * files} files: {by_op}")
    LAST_OPS[ranks] = by_op
    return parse_phases(out)


def simulate(platform: Path, ranks: int, files: int, forwarded: bool) -> dict[str, float]:
    argv = ["--platform", str(platform), "--mdtest", str(files), "--mdtest-bytes", str(BYTES),
            "--ranks", str(ranks), "--nodes", str(len(COMPUTE)),
            "--ionodes", "1" if forwarded else "0", "--issuer", "rank"]  # fmt: skip
    res = run_tool(argv, timeout_s=600)
    return {p["phase"]: p["ops_per_s"] for p in res["mdtest"]["phases"]}


# The phases whose time at a saturated metadata server is one kind of call, and that kind's key.
FITTED = {"File creation": "storage.metadata_service", "File stat": "storage.metadata_stat",
          "File removal": "storage.metadata_remove"}  # fmt: skip


def fitted_settings(measured: dict[tuple[int, str], list[dict[str, float]]], ranks: int) -> list:
    """Service times from the direct runs with the most ranks, where the one metadata server is
    saturated (the rates are flat in the ranks): a phase's time per file. The create phase's
    closes and 4 KiB writes are taken as free (metadata_close 0; the data go to the device, beside
    the server)."""
    runs = measured[(ranks, "direct")]
    return [f"{key}={1e6 / statistics.median(r[phase] for r in runs):.0f}us"
            for phase, key in FITTED.items()]  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="2,8")
    ap.add_argument("--files", type=int, default=200, help="files per rank")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--set", action="append", default=[], help="SECTION.KEY=VALUE, repeatable")
    ap.add_argument("--no-measure", action="store_true", help="simulate only")
    ap.add_argument("--fit", action="store_true",
                    help="simulate with the metadata times of this run's direct runs")  # fmt: skip
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "testbed-mdtest.md"))
    args = ap.parse_args()
    if args.fit and args.no_measure:
        ap.error("--fit fits on this run's measurements: not with --no-measure")
    ranks = [int(r) for r in args.ranks.split(",")]
    measured: dict[tuple[int, str], list[dict[str, float]]] = {}
    if not args.no_measure:
        if not Path(testbed_slurm.SLURM_CONF).exists():
            print("no testbed up (iorelay testbed up)", file=sys.stderr)
            return 1
        mdtest = build_ior(mpi.launcher().name) / "mdtest"
        for rep in range(args.reps):
            for r in ranks:
                with tempfile.TemporaryDirectory(prefix="tbmd-", dir=SHARED_PATH) as tmp:
                    work = Path(tmp)
                    measured.setdefault((r, "direct"), []).append(
                        run_direct(mdtest, r, args.files, work)
                    )
                    measured.setdefault((r, "ion1"), []).append(
                        run_forwarded(mdtest, r, args.files, work)
                    )
            print(f"repetition {rep + 1} done", flush=True)
    if args.fit:
        args.set += fitted_settings(measured, max(ranks))
    with tempfile.TemporaryDirectory() as tmp:
        platform = PLATFORM
        if args.set:
            try:
                doc = apply_settings(json.loads(PLATFORM.read_text()), args.set)
            except SimulateError as e:
                raise SystemExit(str(e)) from e
            platform = Path(tmp) / "testbed-modified.json"
            platform.write_text(json.dumps(doc))
        simulated = {(r, p): simulate(platform, r, args.files, p != "direct")
                     for r in ranks for p in ("direct", "ion1")}  # fmt: skip
    lines = [f"{time.strftime('%Y-%m-%d')}, mdtest -F -u -w {BYTES} -e {BYTES} -n {args.files}, "
             f"ranks on {','.join(COMPUTE)}; forwarded through {IONODE}; simulated on "
             f"platforms/testbed.json {' '.join(args.set)}".rstrip(), "",
             "Command: `.venv/bin/python bench/testbed_mdtest.py " + " ".join(sys.argv[1:]) + "`",
             "", "| ranks | path | phase | measured ops/s (runs) | median | simulated | "
             "simulated / measured |", "|---:|---|---|---|---:|---:|---:|"]  # fmt: skip
    for (r, path), sim in simulated.items():
        for phase in PHASES:
            runs = [m[phase] for m in measured.get((r, path), [])]
            med = statistics.median(runs) if runs else float("nan")
            lines.append(f"| {r} | {path} | {phase} | {', '.join(f'{x:.0f}' for x in runs)} | "
                         f"{med:.0f} | {sim[phase]:.0f} | {sim[phase] / med:.2f} |")  # fmt: skip
    lines.append("")
    for r, ops in LAST_OPS.items():
        lines.append(f"The I/O node's requests by op, {r} ranks (last run): "
                     + counts(ops))  # fmt: skip
    table = "\n".join(lines) + "\n"
    print("\n" + table)
    if measured:
        Path(args.out).write_text(table)
        Path(args.out).with_suffix(".json").write_text(json.dumps(
            {f"{r} {p}": v for (r, p), v in measured.items()}, indent=1) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
