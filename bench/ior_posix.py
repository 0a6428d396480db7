"""IOR's POSIX backend through one iorelayd against direct access, in the same run, alternating.

    .venv/bin/python bench/ior_posix.py [--ranks 32] [--block 8k] [--transfer 8k]
        [--segments 512] [--fpp] [--read] [--reps 3] [--schedulers sjf,aioli,fifo]

The default is the 1D-strided pattern of the data-path issue: 32 ranks of
`ior -a POSIX -w -b 8k -t 8k -s 512 --posix.odirect` on one shared file (IOR issues lseek +
write per transfer). `--ranks 4 --fpp --block 256m --transfer 4m --segments 1 --read
--schedulers fifo --reps 10` is the large-transfer one. Each repetition runs direct access,
then every scheduler through a fresh daemon. Reports IOR's Max(MiB) per phase (MiB/s), the
median ratio to direct with a 95% bootstrap interval, the daemon's mean requests per dispatch
and the requests it received by op (a run that forwards nothing would verify too), and writes
the table to bench/results/ior-posix-NAME.md. IOR is built from ../shared/vendor under
build/ior (bench/vendor_tools.py).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ratio_interval import ratio_interval
from results_table import counts
from vendor_tools import build_ior, run_mpi

from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]


def ior_args(args: argparse.Namespace, path: str) -> list[str]:
    out = ["-a", "POSIX", "-w", "-b", args.block, "-t", args.transfer,
           "-s", str(args.segments), "--posix.odirect", "-o", path]  # fmt: skip
    if args.read:
        out += ["-r", "-C"]  # -C: each rank reads another rank's data
    if args.fpp:
        out.append("-F")
    return out


def ior_mib_s(ior: Path, args: argparse.Namespace, path: str, env: dict[str, str]) -> dict:
    """One IOR run: MiB/s per phase (IOR's Max(MiB) of its summary)."""
    stdout = run_mpi(args.ranks, [str(ior), *ior_args(args, path)], env)
    summary = stdout.partition("Summary of all tests:")[2]
    out = {}
    for phase in args.phases:
        m = re.search(rf"^{phase}\s+([\d.]+)\s", summary, re.MULTILINE)
        if not m:
            raise RuntimeError(f"no {phase} summary in IOR's output: {stdout[-1500:]}")
        out[phase] = float(m.group(1))
    return out


def markdown(args: argparse.Namespace, rows: dict[str, dict]) -> str:
    cmd = "python bench/ior_posix.py " + " ".join(sys.argv[1:])
    layout = "file per process" if args.fpp else "one shared file"
    lines = [f"## IOR POSIX through one I/O node, {time.strftime('%Y-%m-%d')}: {args.ranks} "
             f"ranks, -b {args.block} -t {args.transfer} -s {args.segments} --posix.odirect, "
             f"{layout}, backend posix", "", f"Command: `{cmd}`", "",
             "| path | phase | MiB/s (median) | / direct [95% interval] | runs | "
             "requests per dispatch | requests by op (last run) |",
             "|---|---|---:|---|---|---:|---|"]  # fmt: skip
    for phase in args.phases:
        direct = rows["direct"]["runs"][phase]
        for path, r in rows.items():
            runs = r["runs"][phase]
            med = statistics.median(runs)
            ratio = ""
            if path != "direct":
                low, high = ratio_interval(runs, direct)
                ratio = f"{med / statistics.median(direct):.2f} [{low:.2f}, {high:.2f}]"
            per = f"{statistics.median(r['per_dispatch']):.2f}" if r["per_dispatch"] else ""
            ops = counts(r["by_op"])
            lines.append(f"| {path} | {phase} | {med:.1f} | {ratio} | "
                         f"{', '.join(f'{v:.1f}' for v in runs)} | {per} | {ops} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=32)
    ap.add_argument("--block", default="8k")
    ap.add_argument("--transfer", default="8k")
    ap.add_argument("--segments", type=int, default=512)
    ap.add_argument("--fpp", action="store_true", help="one file per rank (IOR -F)")
    ap.add_argument("--read", action="store_true", help="a read phase after the write phase")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--schedulers", default="sjf,aioli,fifo")
    ap.add_argument("--name", default=None, help="results file suffix (default: RANKS)")
    args = ap.parse_args()
    args.phases = ["write", "read"] if args.read else ["write"]
    ior = build_ior() / "ior"
    schedulers = args.schedulers.split(",")
    rows: dict[str, dict] = {
        p: {"runs": {ph: [] for ph in args.phases}, "per_dispatch": [], "by_op": {}}
        for p in ["direct", *schedulers]
    }
    with tempfile.TemporaryDirectory(prefix="iorelay-ior-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        for rep in range(args.reps):
            for ph, v in ior_mib_s(ior, args, str(root / "direct.dat"), {}).items():
                rows["direct"]["runs"][ph].append(v)
            for sched in schedulers:
                work = Path(tmp) / f"d-{sched}-{rep}"
                with LocalDaemons(1, root, "/iorelay-ior", work, scheduler=sched) as d:
                    mib_s = ior_mib_s(ior, args, f"{d.prefix}/fwd.dat", d.env("unix"))
                    total = query_stats(d.addresses("unix")[0], d.credential_file)["total"]
                for ph, v in mib_s.items():
                    rows[sched]["runs"][ph].append(v)
                rows[sched]["per_dispatch"].append(float(total["mean_requests_per_dispatch"]))
                rows[sched]["by_op"] = total.get("by_op", {})
            print(f"repetition {rep + 1}: " + ", ".join(
                f"{p} {ph} {r['runs'][ph][-1]:.1f}" for p, r in rows.items()
                for ph in args.phases), flush=True)  # fmt: skip
    table = markdown(args, rows)
    print(table)
    out = REPO / "bench" / "results" / f"ior-posix-{args.name or args.ranks}.md"
    out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
