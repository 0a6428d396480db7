"""IOR and iorelay-bench with MPI ranks on the testbed's compute hosts: direct on GlusterFS
against one I/O node (iorelay run in a Slurm allocation), alternating, medians.

    .venv/bin/python bench/testbed_ior.py [--ranks 32] [--segments 64] [--reps 3]
        [--schedulers aioli,fifo] [--tools ior,bench] [--mpi openmpi|mpich]

Needs an up testbed (iorelay testbed up; >= 2 compute hosts, >= 1 I/O node). The pattern is the
32-rank 1D-strided 8 KiB O_DIRECT write to one shared file (volume options strict-o-direct on,
remote-dio off): IOR `-a POSIX -w -b 8k -t 8k -s S --posix.odirect`, and iorelay-bench
`--spatiality strided --request 8K --segments S --odirect`. Ranks on node1 and node2 only
(`mpirun --host node1:R/2,node2:R/2`, or MPICH's `mpiexec -iface iorelay-tb0 -hosts ...`), each
through `iorelay exec`; the I/O node is ion1. Every forwarded run checks the daemon's counters
(bytes written >= what the tool wrote) and reports its requests per dispatch; the table goes to
bench/results/testbed-ior-MPI.md. IOR is built from
../shared/vendor under build/ior (build/ior-mpich with --mpi mpich; bench/vendor_tools.py).
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
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from vendor_tools import build_ior, parse_ior

from iorelay import mpi, paths
from iorelay.testbed import slurm as testbed_slurm
from iorelay.testbed.explore import mpi_argv, mpi_env
from iorelay.testbed.plan import SHARED_PATH

REPO = Path(__file__).resolve().parents[1]

COMPUTE = ["node1", "node2"]
IONODE = "ion1"
TIMEOUT_S = 600


def tool_argv(tool: str, args: argparse.Namespace, directory: str, ior: Path) -> list[str]:
    if tool == "ior":
        return [str(ior), "-a", "POSIX", "-w", "-b", "8k", "-t", "8k", "-s", str(args.segments),
                "--posix.odirect", "-o", f"{directory}/ior.dat"]  # fmt: skip
    bench = paths.find(mpi.launcher().bench)
    return [str(bench), "--write", "--layout", "shared", "--spatiality", "strided",
            "--request", "8K", "--segments", str(args.segments), "--odirect", "--dir", directory,
            "--output", f"{directory}/../bench-{os.getpid()}.json"]  # fmt: skip


def mib_s(tool: str, out: str, directory: str) -> float:
    if tool == "ior":
        return float(parse_ior(out)["bandwidth_mib_s"])
    doc = json.loads(Path(f"{directory}/../bench-{os.getpid()}.json").read_text())
    if not doc["ok"]:
        raise RuntimeError(f"iorelay-bench failed: {doc}")
    return float(doc["phases"][0]["bandwidth_mib_s"])


def written_bytes(args: argparse.Namespace) -> int:
    return args.ranks * args.segments * 8192


def run_direct(tool: str, args: argparse.Namespace, work: Path, ior: Path) -> float:
    directory = work / f"direct-{tool}"
    directory.mkdir()
    out = direct_ranks(args.ranks, tool_argv(tool, args, str(directory), ior))
    return mib_s(tool, out, str(directory))


def run_forwarded(
    tool: str, sched: str, args: argparse.Namespace, work: Path, ior: Path
) -> tuple[float, float]:
    """MiB/s and the daemon's requests per dispatch; RuntimeError if it carried too little."""
    root = work / f"root-{tool}-{sched}"
    root.mkdir()
    out, total = forwarded_ranks(args.ranks, tool_argv(tool, args, str(root), ior), work, root,
                                 sched)  # fmt: skip
    if int(total["bytes_written"]) < written_bytes(args):
        raise RuntimeError(f"the daemon wrote {total['bytes_written']} bytes: not forwarded")
    return mib_s(tool, out, str(root)), float(total["mean_requests_per_dispatch"])


def direct_ranks(
    ranks: int,
    program: list[str],
    hosts: Sequence[str] = COMPUTE,
    env: Mapping[str, str] | None = None,
) -> str:
    """The stdout of `program` run as `ranks` MPI ranks on `hosts` (evenly), on their own
    mounts; `env` goes to every rank."""
    env = dict(env or {})
    argv = mpi_argv(hosts, ranks, list(env), program)
    return run_on_testbed(["salloc", f"-N{len(hosts)}", "-w", ",".join(hosts), "--quiet", *argv],
                          env)  # fmt: skip


def forwarded_ranks(
    ranks: int,
    program: list[str],
    work: Path,
    root: Path,
    scheduler: str | None = None,
    hosts: Sequence[str] = COMPUTE,
    env: Mapping[str, str] | None = None,
) -> tuple[str, dict]:
    """The stdout of `program` run as `ranks` MPI ranks on `hosts` through IONODE (iorelay run
    in a Slurm allocation, its daemon rooted at `root`), and the daemon's total counters after it
    (`iorelay stats`); `env` goes to every rank."""
    env = dict(env or {})
    names = ["IORELAY_RUN_FILE", *env]  # iorelay exec completes the rest from the run file
    argv = mpi_argv(hosts, ranks, names, program)
    stats = work / f"stats-{root.name}.json"
    iorelay = Path(sys.executable).with_name("iorelay")
    script = f"{shlex.join(argv)} && {iorelay} stats $IORELAY_SERVERS --json > {stats}"
    sched = ["--scheduler", scheduler] if scheduler else []
    out = run_on_testbed(["salloc", f"-N{len(hosts) + 1}", "-w", f"{IONODE},{','.join(hosts)}",
                          "--quiet", sys.executable, "-m", "iorelay", "run", "--ionode-hosts",
                          IONODE, *sched, "--shared-dir", str(work), "--root", str(root),
                          "--no-preload", "--", "sh", "-c", script], env)  # fmt: skip
    return out, json.loads(stats.read_text())["total"]


def run_on_testbed(argv: list[str], extra_env: Mapping[str, str] | None = None) -> str:
    """Runs `argv` (salloc ...) against the testbed's Slurm, with `extra_env` added to the
    environment; its stdout, or RuntimeError."""
    env = {**os.environ, **testbed_slurm.env(), **mpi_env(), **(extra_env or {})}
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                          stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)[:300]} failed:\n{proc.stdout[-1500:]}"
                           f"\n{proc.stderr[-1500:]}")  # fmt: skip
    return proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=32)
    ap.add_argument("--segments", type=int, default=64, help="8 KiB writes per rank")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--schedulers", default="aioli,fifo")
    ap.add_argument("--tools", default="ior,bench")
    ap.add_argument("--mpi", choices=sorted(mpi.LAUNCHERS), default=None)
    args = ap.parse_args()
    if args.mpi:
        os.environ[mpi.ENV] = args.mpi
    if not Path(testbed_slurm.SLURM_CONF).exists():
        print("no testbed up (iorelay testbed up)", file=sys.stderr)
        return 1
    launcher = mpi.launcher()
    tools = args.tools.split(",")
    ior = build_ior(launcher.name) / "ior" if "ior" in tools else Path("ior")
    paths_ = ["direct", *args.schedulers.split(",")]
    runs = {(t, p): [] for t in tools for p in paths_}
    per_dispatch: dict[tuple[str, str], list[float]] = {k: [] for k in runs}
    for rep in range(args.reps):
        for tool in tools:
            with tempfile.TemporaryDirectory(prefix="tbior-", dir=SHARED_PATH) as tmp:
                work = Path(tmp)
                runs[(tool, "direct")].append(run_direct(tool, args, work, ior))
                for sched in paths_[1:]:
                    bw, per = run_forwarded(tool, sched, args, work, ior)
                    runs[(tool, sched)].append(bw)
                    per_dispatch[(tool, sched)].append(per)
        print(f"repetition {rep + 1}: " + ", ".join(
            f"{t}/{p} {v[-1]:.1f}" for (t, p), v in runs.items()), flush=True)  # fmt: skip
    lines = [f"{time.strftime('%Y-%m-%d')}, {launcher.name}, {args.ranks} ranks on "
             f"{','.join(COMPUTE)}, 8 KiB strided O_DIRECT writes, {args.segments} per rank "
             f"({written_bytes(args) >> 20} MiB); I/O node {IONODE}", "",
             "Command: `.venv/bin/python bench/testbed_ior.py " + " ".join(sys.argv[1:]) + "`",
             "", "| tool | path | MiB/s (runs) | median | / direct | requests per dispatch |",
             "|---|---|---|---:|---:|---:|"]  # fmt: skip
    for (tool, path), v in runs.items():
        direct = statistics.median(runs[(tool, "direct")])
        per = per_dispatch[(tool, path)]
        lines.append(f"| {tool} | {path} | {', '.join(f'{x:.1f}' for x in v)} | "
                     f"{statistics.median(v):.1f} | {statistics.median(v) / direct:.2f} | "
                     f"{', '.join(f'{x:.1f}' for x in per) or '-'} |")  # fmt: skip
    table = "\n".join(lines) + "\n"
    print("\n" + table)
    (REPO / "bench" / "results" / f"testbed-ior-{launcher.name}.md").write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
