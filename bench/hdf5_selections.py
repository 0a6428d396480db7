"""A parallel HDF5 program of small selections (tools/hdf5/h5_selections.py, h5py's MPI-IO
driver), direct against through I/O nodes, independent and collective, alternating within each
repetition; medians of the repetitions, with the I/O nodes' requests from their counters.

    .venv/bin/python bench/hdf5_selections.py [--ranks 4] [--ionodes 2] [--rows 256]
        [--width 8] [--elements 4096] [--reps 5] [--daemon-args "..."] [--env KEY=VALUE]...
        [--out FILE.md]

--env sets a variable for the forwarded runs' ranks (e.g. the client's IORELAY_* options).

Each run writes then reads one shared file; each rank checks its elements and rank 0 the whole
file (a run that does not verify stops the benchmark). Time is the slowest rank's, from a
barrier before the phase to one after it. Writes bench/results/hdf5-selections.md and .json.
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
from pathlib import Path
from typing import Any

from iorelay import mpi, paths
from iorelay.run import RelayConfig, start_relay

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tools" / "hdf5" / "h5_selections.py"
SYSTEM_PYTHON = "/usr/bin/python3"
RUN_TIMEOUT_S = 900.0


def h5_run(args: argparse.Namespace, directory: str, collective: bool, env: dict[str, str]):
    launcher = mpi.launcher({"IORELAY_MPI": "openmpi"})
    argv = [*launcher.prefix(args.ranks, list(env)), sys.executable, "-m", "iorelay.exec_cmd",
            "--", SYSTEM_PYTHON, str(PROGRAM), "--dir", directory, "--rows", str(args.rows),
            "--width", str(args.width), "--elements", str(args.elements),
            *(["--collective"] if collective else [])]  # fmt: skip
    proc = subprocess.run(argv, env={**os.environ, **launcher.run_env, **env},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, check=False)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"{shlex.join(argv)}\n{proc.stdout[-1000:]}{proc.stderr[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if not result["ok"]:
        raise RuntimeError("the HDF5 file did not verify")
    return {p["operation"]: p["seconds"] for p in result["phases"]}


def one_run(args: argparse.Namespace, tmp: Path, ionodes: int, collective: bool) -> dict:
    row: dict[str, Any] = {"ionodes": ionodes, "collective": collective}
    if ionodes == 0:
        direct = tmp / "direct"
        direct.mkdir(exist_ok=True)
        row |= h5_run(args, str(direct), collective, {})
        return row
    config = RelayConfig(ionodes=ionodes, root=tmp / "root", prefix="/iorelay-hdf5",
                         daemon_args=shlex.split(args.daemon_args))  # fmt: skip
    with start_relay(config, tempfile.mkdtemp(prefix="work-", dir=tmp)) as relay:
        client_env = dict(kv.split("=", 1) for kv in args.env)
        row |= h5_run(args, relay.prefix, collective, relay.env(preload=False) | client_env)
        stats = [s for _, s in relay.stats()]
    if not all(isinstance(s, dict) for s in stats):
        raise RuntimeError(f"no counters from an I/O node: {stats}")
    totals = [s["total"] for s in stats]
    row["ionode_writes"] = sum(t["by_family"]["write"]["requests"] for t in totals)
    row["ionode_reads"] = sum(t["by_family"]["read"]["requests"] for t in totals)
    return row


def table(rows: list[dict], ionodes: int) -> list[str]:
    lines = ["| mode | phase | direct s | forwarded s | forwarded / direct (median of runs) |"
             " I/O-node requests |", "|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for collective in (False, True):
        mode = "collective" if collective else "independent"
        direct = [r for r in rows if r["collective"] == collective and r["ionodes"] == 0]
        fwd = [r for r in rows if r["collective"] == collective and r["ionodes"] == ionodes]
        for phase in ("write", "read"):
            d = statistics.median(r[phase] for r in direct)
            f = statistics.median(r[phase] for r in fwd)
            ratios = [b[phase] / a[phase] for a, b in zip(direct, fwd, strict=True)]
            reqs = statistics.median(r[f"ionode_{phase}s"] for r in fwd)
            lines.append(f"| {mode} | {phase} | {d:.3f} | {f:.3f} | "
                         f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) "
                         f"| {reqs:.0f} |")  # fmt: skip
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--ionodes", type=int, default=2)
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--elements", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--daemon-args", default="", help="extra iorelayd options")
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for forwarded ranks")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "hdf5-selections.md")
    args = ap.parse_args()
    paths.find("iorelayd")  # NotBuiltError says how to build
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="iorelay-hdf5-", dir="/var/tmp") as tmp:
        for rep in range(args.reps):
            for collective in (False, True):
                order = (0, args.ionodes) if rep % 2 == 0 else (args.ionodes, 0)
                for ionodes in order:
                    row = one_run(args, Path(tmp), ionodes, collective) | {"repetition": rep}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    command = "python bench/hdf5_selections.py " + " ".join(sys.argv[1:])
    load = Path("/proc/loadavg").read_text().split()[:3]
    lines = [f"# Parallel HDF5, small selections, {time.strftime('%Y-%m-%d')}", "",
             f"Command: `{command}` ({args.ranks} ranks, {args.ionodes} I/O nodes, "
             f"{args.rows} rows x {args.width} elements per rank, {args.elements} strided "
             f"elements per rank; medians of {args.reps}; load average at the end "
             f"{' '.join(load)})", "", *table(rows, args.ionodes)]  # fmt: skip
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)
    args.out.with_suffix(".json").write_text(json.dumps({"command": command, "runs": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
