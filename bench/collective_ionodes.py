"""Collective against independent MPI-IO, direct and through 1 and 2 I/O nodes, with a handful of
aggregator counts: iorelay-bench --api mpiio on one machine, alternating configurations within
each repetition, medians of the repetitions.

    .venv/bin/python bench/collective_ionodes.py [--component ompio|romio321] [--ranks 4]
        [--request 64K] [--segments 64] [--aggregators 1,2,4] [--ionodes 0,1,2] [--reps 3]

Each run: P ranks, the 1D-strided pattern (segment k of rank r at (k*P + r)*t), a write phase and
a read phase of the same data, no verification pass (the tests verify). Collective runs set the
aggregator count A: OMPIO through OMPI_MCA_io_ompio_num_aggregators=A, ROMIO through the hints
cb_nodes=A, cb_config_list=*:A (all ranks are on one host) and romio_cb_write/read=enable.
The I/O nodes' write requests are read from their counters. Writes bench/results/
collective-ionodes-COMPONENT.md (medians) and .json (every run).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from iorelay import mpi, paths
from iorelay.run import RelayConfig, start_relay

REPO = Path(__file__).resolve().parents[1]

RUN_TIMEOUT_S = 300.0


def mode_args(component: str, aggregators: int | None) -> tuple[list[str], dict[str, str]]:
    """Bench options and environment for independent (None) or collective with A aggregators."""
    env = {"OMPI_MCA_io": component}
    if aggregators is None:
        return [], env
    if component == "ompio":
        return ["--collective"], {**env, "OMPI_MCA_io_ompio_num_aggregators": str(aggregators)}
    hints = [f"cb_nodes={aggregators}", f"cb_config_list=*:{aggregators}",
             "romio_cb_write=enable", "romio_cb_read=enable"]  # fmt: skip
    return ["--collective", *(a for h in hints for a in ("--hint", h))], env


def bench(args: argparse.Namespace, directory: str, extra: list[str], env: dict[str, str]):
    """One iorelay-bench run of the pattern, write and read; its JSON result."""
    pattern = ["--request", args.request, "--segments", str(args.segments), "--write", "--read"]
    return mpiio_bench(args.ranks, directory, [*pattern, *extra], env)


def mpiio_bench(ranks: int, directory: str, options: list[str], env: dict[str, str]):
    """One 1D-strided `iorelay-bench --api mpiio` run under mpirun, each rank through
    `iorelay exec`; its JSON result."""
    launcher = mpi.launcher({"IORELAY_MPI": "openmpi"})
    argv = [*launcher.prefix(ranks, list(env)), sys.executable, "-m", "iorelay.exec_cmd",
            "--", str(paths.find(launcher.bench)), "--api", "mpiio", "--spatiality", "strided",
            "--dir", directory, *options]  # fmt: skip
    proc = subprocess.run(argv, env={**os.environ, **launcher.run_env, **env},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, check=False)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)}\n{proc.stderr[-2000:]}")
    result = json.loads(proc.stdout)
    if not result["ok"]:
        raise RuntimeError(f"not ok: {proc.stderr[-2000:]}")
    return result


def one_run(args: argparse.Namespace, tmp: Path, ionodes: int, aggregators: int | None):
    extra, env = mode_args(args.component, aggregators)
    row: dict[str, Any] = {"ionodes": ionodes, "aggregators": aggregators}
    if ionodes == 0:
        result = bench(args, str(tmp / "direct"), extra, env)
        row["ionode_writes"] = None
    else:
        config = RelayConfig(ionodes=ionodes, root=tmp / "root", prefix="/iorelay-collective")
        with start_relay(config, tempfile.mkdtemp(prefix="work-", dir=tmp)) as relay:
            result = bench(args, relay.prefix, extra, {**env, **relay.env(preload=False)})
            stats = [s for _, s in relay.stats()]
        if not all(isinstance(s, dict) for s in stats):
            raise RuntimeError(f"no counters from an I/O node: {stats}")
        row["ionode_writes"] = sum(s["total"]["by_family"]["write"]["requests"] for s in stats)
    for phase in result["phases"]:
        row[f"{phase['operation']}_mib_s"] = phase["bandwidth_mib_s"]
    return row


def label(aggregators: int | None) -> str:
    return "independent" if aggregators is None else f"collective A={aggregators}"


def spread(values: list[float]) -> str:
    """'median (min-max)'."""
    return f"{statistics.median(values):.1f} ({min(values):.0f}-{max(values):.0f})"


def markdown(args: argparse.Namespace, rows: list[dict[str, Any]], command: str) -> str:
    modes = [None, *args.aggregator_counts]
    lines = [
        f"# Collective vs independent MPI-IO through I/O nodes ({args.component})",
        "",
        f"`{command}`",
        "",
        f"OpenMPI 4.1.4, io component {args.component}, {args.ranks} ranks on one 2-core machine,",
        f"1D strided, t = {args.request}, {args.segments} segments per rank; medians of "
        f"{args.reps} repetitions, configurations alternating within each repetition.",
        "",
        "Medians with the range (min-max) of the repetitions beside them.",
        "",
        "| I/O nodes | mode | write MiB/s | read MiB/s | write requests at the I/O nodes |",
        "|---|---|---|---|---|",
    ]
    for ionodes in args.ionode_counts:
        for a in modes:
            mine = [r for r in rows if r["ionodes"] == ionodes and r["aggregators"] == a]
            w = spread([r["write_mib_s"] for r in mine])
            rd = spread([r["read_mib_s"] for r in mine])
            req = (
                "—" if ionodes == 0 else f"{statistics.median(r['ionode_writes'] for r in mine):g}"
            )
            lines.append(f"| {ionodes} | {label(a)} | {w} | {rd} | {req} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--component", choices=("ompio", "romio321"), default="ompio")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--request", default="64K")
    ap.add_argument("--segments", type=int, default=64)
    ap.add_argument("--aggregators", default="1,2,4", help="collective aggregator counts")
    ap.add_argument("--ionodes", default="0,1,2", help="I/O-node counts (0: direct)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", help="default: bench/results/collective-ionodes-COMPONENT.md")
    ap.add_argument("--report", metavar="JSON", help="only re-render the tables of that run's JSON")
    args = ap.parse_args()
    if args.report:
        saved = json.loads(Path(args.report).read_text())
        words = shlex.split(saved["command"])
        args = ap.parse_args(words[[w.endswith(".py") for w in words].index(True) + 1 :])
        args.aggregator_counts = [int(a) for a in args.aggregators.split(",")]
        args.ionode_counts = [int(k) for k in args.ionodes.split(",")]
        out = Path(args.out or REPO / f"bench/results/collective-ionodes-{args.component}.md")
        out.write_text(markdown(args, saved["runs"], saved["command"]))
        print(out.read_text())
        return 0
    args.aggregator_counts = [int(a) for a in args.aggregators.split(",")]
    args.ionode_counts = [int(k) for k in args.ionodes.split(",")]
    configs = [(k, a) for k in args.ionode_counts for a in [None, *args.aggregator_counts]]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="iorelay-collective-", dir="/var/tmp") as name:
        tmp = Path(name)
        (tmp / "direct").mkdir()
        for rep in range(args.reps):
            shift = rep % len(configs)  # a different configuration first in each repetition
            for ionodes, aggregators in configs[shift:] + configs[:shift]:
                row = one_run(args, tmp, ionodes, aggregators)
                row["repetition"] = rep
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    out = Path(args.out or REPO / f"bench/results/collective-ionodes-{args.component}.md")
    command = "nice -n 5 .venv/bin/python bench/collective_ionodes.py " + shlex.join(sys.argv[1:])
    out.write_text(markdown(args, rows, command.strip()))
    out.with_suffix(".json").write_text(json.dumps({"command": command, "runs": rows}, indent=1))
    print(out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
