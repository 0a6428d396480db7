"""mdtest (create, stat, read, remove of files) through one iorelayd against direct access, for
2 and 8 ranks, alternating in the same run, medians of the repetitions.

    .venv/bin/python bench/mdtest.py [--ranks 2,8] [--files 500] [--reps 3]

Each rank creates, stats, reads (4 KiB written at creation) and removes its own files in a
unique directory (`mdtest -F -u -w 4096 -e 4096 -n FILES`). Reports each phase's rate (ops/s,
mdtest's Max of the summary), forwarded / direct, and the daemon's requests by op, and writes
the table to bench/results/mdtest.md.
"""

from __future__ import annotations

import argparse
import re
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
    args = ap.parse_args()
    mdtest = build_ior() / "mdtest"
    cmd = "python bench/mdtest.py " + " ".join(sys.argv[1:])
    lines = [f"## mdtest through one I/O node, {time.strftime('%Y-%m-%d')}: "
             f"{args.files} files per rank, 4 KiB each, backend posix", "",
             f"Command: `{cmd}`", "",
             "| ranks | phase | direct ops/s | forwarded ops/s | forwarded / direct |",
             "|---:|---|---:|---:|---:|"]  # fmt: skip
    ops_by_ranks = {}
    with tempfile.TemporaryDirectory(prefix="iorelay-mdtest-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        for ranks in (int(r) for r in args.ranks.split(",")):
            runs: dict[str, dict[str, list[float]]] = {"direct": {}, "forwarded": {}}
            for rep in range(args.reps):
                direct = rates(mdtest, ranks, args.files, str(root / f"d{ranks}-{rep}"), {})
                work = Path(tmp) / f"w{ranks}-{rep}"
                with LocalDaemons(1, root, "/iorelay-md", work) as d:
                    fwd = rates(mdtest, ranks, args.files, f"{d.prefix}/f{ranks}-{rep}",
                                d.env("unix"))  # fmt: skip
                    total = query_stats(d.addresses("unix")[0], d.credential_file)["total"]
                ops_by_ranks[ranks] = total.get("by_op", {})
                for path, r in (("direct", direct), ("forwarded", fwd)):
                    for phase, v in r.items():
                        runs[path].setdefault(phase, []).append(v)
            for phase in PHASES:
                dm = statistics.median(runs["direct"][phase])
                fm = statistics.median(runs["forwarded"][phase])
                lines.append(f"| {ranks} | {phase} | {dm:.0f} | {fm:.0f} | {fm / dm:.2f} |")
    lines.append("")
    for ranks, ops in ops_by_ranks.items():
        lines.append(f"Daemon requests by op, {ranks} ranks (last run): "
                     + counts(ops))  # fmt: skip
    publish("mdtest.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
