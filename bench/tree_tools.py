"""Unmodified tree tools through one iorelayd against direct access: GNU tar extracting the IOR
source tree, find, du, tar reading it back, rm -r, each in a shell whose working directory is
the tree's directory (a forwarded one through the relay), alternating, medians of the
repetitions.

    .venv/bin/python bench/tree_tools.py [--reps 5] [--copies 4]

The tree is ../shared/vendor's IOR tarball (--copies of it, side by side). Each forwarded run
checks the daemon's counters: every file the tarball holds was opened at the daemon. Reports
each step's wall time (ms), forwarded / direct, and the daemon's requests by op, and writes the
table to bench/results/tree-tools.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from results_table import counts, publish

from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]

VENDOR = REPO.parent / "shared" / "vendor"
STEPS = {
    "tar x": "for i in $(seq {copies}); do mkdir c$i && tar xzf {archive} -C c$i; done",
    "find": "find . > /dev/null",
    "du": "du -s . > /dev/null",
    "tar c": "tar cf /dev/null .",
    "rm -r": "rm -r ./*",
}


def timed_steps(directory: str, archive: Path, copies: int, env: dict[str, str]) -> dict:
    """Wall time (ms) of each step, in one shell that cds into `directory`."""
    script = [f"cd {directory}"]
    for i, command in enumerate(STEPS.values()):
        cmd = command.format(copies=copies, archive=archive)
        script += [f"t0=$(date +%s%N); {cmd} || exit 1", f'echo "{i}=$(( $(date +%s%N) - t0 ))"']
    done = subprocess.run(["bash", "-c", "\n".join(script)], env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"tree tools failed in {directory}: {done.stderr[-2000:]}")
    ns = dict(line.split("=") for line in done.stdout.split())
    return {name: int(ns[str(i)]) / 1e6 for i, name in enumerate(STEPS)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--copies", type=int, default=4, help="copies of the tree extracted")
    args = ap.parse_args()
    archive = sorted(VENDOR.glob("ior-*.tar.gz"))[0]
    with tarfile.open(archive) as t:
        files = sum(1 for m in t.getmembers() if m.isfile()) * args.copies
    runs: dict[str, dict[str, list[float]]] = {"direct": {}, "forwarded": {}}
    by_op: dict[str, int] = {}
    base_env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    with tempfile.TemporaryDirectory(prefix="iorelay-tree-", dir="/var/tmp") as tmp:
        for rep in range(args.reps):
            direct = Path(tmp) / f"direct-{rep}"
            direct.mkdir()
            result = {"direct": timed_steps(str(direct), archive, args.copies, base_env)}
            root = Path(tmp) / f"root-{rep}"
            root.mkdir()
            with LocalDaemons(1, root, "/iorelay-tree", Path(tmp) / f"w{rep}") as d:
                env = {**base_env, **d.env("unix")}
                result["forwarded"] = timed_steps(d.prefix, archive, args.copies, env)
                by_op = query_stats(d.addresses("unix")[0], d.credential_file)["total"]["by_op"]
            if by_op.get("open", 0) < files:
                raise RuntimeError(f"the daemon opened {by_op.get('open', 0)} < {files} files")
            for path, steps in result.items():
                for step, ms in steps.items():
                    runs[path].setdefault(step, []).append(ms)
    cmd = "python bench/tree_tools.py " + " ".join(sys.argv[1:])
    lines = [f"## Tree tools through one I/O node, {time.strftime('%Y-%m-%d')}: {archive.name} "
             f"x {args.copies} ({files} files), backend posix, shared memory", "",
             f"Command: `{cmd}` (medians of {args.reps}, alternating)", "",
             "| step | direct ms | forwarded ms | forwarded / direct |",
             "|---|---:|---:|---:|"]  # fmt: skip
    for step in STEPS:
        dm = statistics.median(runs["direct"][step])
        fm = statistics.median(runs["forwarded"][step])
        lines.append(f"| {step} | {dm:.1f} | {fm:.1f} | {fm / dm:.2f} |")
    lines += ["", "Daemon requests by op (last run): "
              + counts(by_op)]  # fmt: skip
    publish("tree-tools.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
