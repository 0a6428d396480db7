"""IOR's POSIX backend (lseek + write per transfer) through one iorelayd against direct access:
R ranks of `ior -a POSIX -w -b 8k -t 8k -s S --posix.odirect` on one shared file, the
1D-strided pattern of the data-path issue, in the same run, alternating.

    .venv/bin/python bench/ior_posix.py [--ranks 32] [--segments 512] [--reps 3]
                                        [--schedulers sjf,aioli,fifo]

IOR is built once from ../shared/vendor out of tree under build/ior (not by `make test`).
Each repetition runs direct access, then every scheduler through a fresh daemon. Reports
IOR's Max(MiB) of the write summary (MiB/s), its ratio to direct (medians), the daemon's mean
requests per dispatch and the requests it received by op (a run that forwards nothing would
verify too), and writes the table to bench/results/ior-posix-RANKS.md.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from vendor_tools import build_ior, run_mpi  # noqa: E402

from iorelay.daemons import LocalDaemons  # noqa: E402
from iorelay.stats import query_stats  # noqa: E402


def ior_write_mib_s(ior: Path, args: argparse.Namespace, path: str, env: dict[str, str]) -> float:
    stdout = run_mpi(args.ranks, [str(ior), "-a", "POSIX", "-w", "-b", args.request,
                                  "-t", args.request, "-s", str(args.segments),
                                  "--posix.odirect", "-o", path], env)  # fmt: skip
    summary = stdout.partition("Summary of all tests:")[2]
    m = re.search(r"^write\s+([\d.]+)\s", summary, re.MULTILINE)  # the Max(MiB) column
    if not m:
        raise RuntimeError(f"no write summary in IOR's output: {stdout[-1500:]}")
    return float(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=32)
    ap.add_argument("--request", default="8k")
    ap.add_argument("--segments", type=int, default=512)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--schedulers", default="sjf,aioli,fifo")
    args = ap.parse_args()
    ior = build_ior() / "ior"
    schedulers = args.schedulers.split(",")
    rows: dict[str, dict] = {p: {"runs": [], "per_dispatch": [], "by_op": {}}
                             for p in ["direct", *schedulers]}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="iorelay-ior-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        for rep in range(args.reps):
            rows["direct"]["runs"].append(ior_write_mib_s(ior, args, str(root / "direct.dat"), {}))
            for sched in schedulers:
                work = Path(tmp) / f"d-{sched}-{rep}"
                with LocalDaemons(1, root, "/iorelay-ior", work, scheduler=sched) as d:
                    mib_s = ior_write_mib_s(ior, args, f"{d.prefix}/fwd.dat", d.env("unix"))
                    total = query_stats(d.addresses("unix")[0], d.credential_file)["total"]
                rows[sched]["runs"].append(mib_s)
                rows[sched]["per_dispatch"].append(float(total["mean_requests_per_dispatch"]))
                rows[sched]["by_op"] = total.get("by_op", {})
            print(f"repetition {rep + 1}: " + ", ".join(
                f"{p} {r['runs'][-1]:.1f}" for p, r in rows.items()), flush=True)  # fmt: skip
    direct = statistics.median(rows["direct"]["runs"])
    cmd = "python bench/ior_posix.py " + " ".join(sys.argv[1:])
    lines = [f"## IOR POSIX through one I/O node, {time.strftime('%Y-%m-%d')}: {args.ranks} ranks, "
             f"-b {args.request} -t {args.request} -s {args.segments} --posix.odirect, one shared "
             "file, backend posix", "", f"Command: `{cmd}`", "",
             "| path | write MiB/s (median) | / direct | runs | requests per dispatch | "
             "requests by op (last run) |", "|---|---:|---:|---|---:|---|"]  # fmt: skip
    for path, r in rows.items():
        med = statistics.median(r["runs"])
        ratio = f"{med / direct:.2f}" if path != "direct" else ""
        runs = ", ".join(f"{v:.1f}" for v in r["runs"])
        per = f"{statistics.median(r['per_dispatch']):.2f}" if r["per_dispatch"] else ""
        ops = ", ".join(f"{k} {v}" for k, v in sorted(r["by_op"].items()))
        lines.append(f"| {path} | {med:.1f} | {ratio} | {runs} | {per} | {ops} |")
    table = "\n".join(lines) + "\n"
    print(table)
    out = REPO / "bench" / "results" / f"ior-posix-{args.ranks}.md"
    out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
