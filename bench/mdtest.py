"""mdtest (create, stat, read, remove of files) through one iorelayd against direct access, for
2 and 8 ranks, alternating in the same run, medians of the repetitions.

    .venv/bin/python bench/mdtest.py [--ranks 2,8] [--files 500] [--reps 3] [--out NAME.md]
        [--variant 'NAME:VAR=VALUE ...']

Each repetition runs direct and forwarded in turn, the order alternating from one repetition to
the next; each --variant adds a forwarded row whose ranks get those client variables, in the same
rotation. Each rank creates, stats, reads (4 KiB written at creation) and removes its own files in a
unique directory (`mdtest -F -u -w 4096 -e 4096 -n FILES`). Reports each phase's rate (ops/s,
mdtest's Max of the summary), forwarded / direct, and the daemon's requests by op, and writes
the table to bench/results/mdtest.md.
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

from results_table import counts, publish
from vendor_tools import build_ior, run_mpi

from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]

PHASES = ("File creation", "File stat", "File read", "File removal")


def parse_rates(stdout: str) -> dict[str, float]:
    """ops/s per phase (mdtest's Max of the summary) from mdtest's output."""
    out = {}
    for phase in PHASES:
        m = re.search(rf"^\s*{phase}\s+([\d.]+)", stdout, re.MULTILINE)
        if not m:
            raise RuntimeError(f"no '{phase}' rate in mdtest's output: {stdout[-1500:]}")
        out[phase] = float(m.group(1))
    return out


def rates(mdtest: Path, ranks: int, files: int, directory: str, env: dict[str, str]) -> dict:
    """One mdtest run: ops/s per phase."""
    stdout = run_mpi(ranks, [str(mdtest), "-F", "-u", "-w", "4096", "-e", "4096",
                             "-n", str(files), "-d", directory], env)  # fmt: skip
    return parse_rates(stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="2,8")
    ap.add_argument("--files", type=int, default=500, help="files per rank")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="mdtest.md", help="file name in bench/results (mdtest.md)")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="NAME:VAR=VALUE ...: one more forwarded row, with these client variables",
    )
    args = ap.parse_args()
    variants: dict[str, dict[str, str]] = {"forwarded": {}}
    for v in args.variant:
        name, _, assignments = v.partition(":")
        variants[name] = dict(a.split("=", 1) for a in assignments.split())
    paths = ["direct", *variants]
    mdtest = build_ior() / "mdtest"
    cmd = "python bench/mdtest.py " + shlex.join(sys.argv[1:])
    lines = [f"## mdtest through one I/O node, {time.strftime('%Y-%m-%d')}: "
             f"{args.files} files per rank, 4 KiB each, backend posix", "",
             f"Command: `{cmd}`", "",
             "| ranks | phase | row | direct ops/s | forwarded ops/s | forwarded / direct |",
             "|---:|---|---|---:|---:|---:|"]  # fmt: skip
    ops_by_ranks = {}
    with tempfile.TemporaryDirectory(prefix="iorelay-mdtest-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        for ranks in (int(r) for r in args.ranks.split(",")):
            runs: dict[str, dict[str, list[float]]] = {p: {} for p in paths}
            for rep in range(args.reps):
                work = Path(tmp) / f"w{ranks}-{rep}"
                with LocalDaemons(1, root, "/iorelay-md", work) as d:
                    for path in paths[rep % len(paths) :] + paths[: rep % len(paths)]:
                        if path == "direct":
                            r = rates(mdtest, ranks, args.files, str(root / f"d{ranks}-{rep}"), {})
                        else:
                            before = query_stats(d.addresses("unix")[0], d.credential_file)
                            r = rates(mdtest, ranks, args.files, f"{d.prefix}/{path}{ranks}-{rep}",
                                      {**d.env("unix"), **variants[path]})  # fmt: skip
                            after = query_stats(d.addresses("unix")[0], d.credential_file)
                            b = before["total"].get("by_op", {})
                            ops_by_ranks[ranks, path] = {
                                op: n - b.get(op, 0)
                                for op, n in after["total"].get("by_op", {}).items()
                                if n > b.get(op, 0)
                            }
                        for phase, v in r.items():
                            runs[path].setdefault(phase, []).append(v)
            for phase in PHASES:
                dm = statistics.median(runs["direct"][phase])
                for path in variants:
                    fm = statistics.median(runs[path][phase])
                    lines.append(f"| {ranks} | {phase} | {path} | {dm:.0f} | {fm:.0f} | "
                                 f"{fm / dm:.2f} |")  # fmt: skip
    lines.append("")
    for (ranks, path), ops in ops_by_ranks.items():
        lines.append(f"Daemon requests by op, {ranks} ranks, {path} (last run): "
                     + counts(ops))  # fmt: skip
    publish(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
