"""fio, J jobs each writing then reading its own file in large requests, through one iorelayd
against direct access, alternating, in the same run.

    .venv/bin/python bench/fio_bandwidth.py [--jobs 4] [--bs 1m] [--size 256m] [--direct]
                                            [--reps 5] [--daemon-args '...'] [--out FILE.md]
                                            [--daemon-binary OTHER_BUILD/src/iorelayd/iorelayd]
                                            [--variant 'NAME:VAR=VALUE VAR=VALUE' ...]

Each repetition runs the write phase and then the read phase (`ioengine=psync`, i.e. pwrite and
pread; buffered unless --direct; `invalidate=0`: fio's page-cache drop before a job is a
`posix_fadvise` that the interposer does not forward, so both paths read what the write left in
the page cache), direct first on odd repetitions and forwarded first on even
ones. The daemon (a new one per repetition, its default transport for a client on its host:
shared memory) is reached through the interposer, as any unmodified program. Reports fio's
aggregate bandwidth (median MiB/s), the forwarded/direct ratio of the medians, and the daemon's
requests by op and shared-memory counters of the last run, which show the run went through it.
Each --variant adds a forwarded row whose client gets those variables (e.g.
`--variant 'write-behind:IORELAY_WRITE_BEHIND=on IORELAY_READ_AHEAD=on'`), run against the same
daemon in the same repetition, the order of all rows rotating from one repetition to the next;
its daemon requests are those of its own runs.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import fio_job
from results_table import counts

from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]

PHASES = ("write", "read")
COUNTERS = ("connections_shm_attached", "connections_shm_writes_piped",
            "connections_shm_reads_piped", "connections_shm_writes_in_place",
            "connections_shm_reads_in_place")  # fmt: skip


def fio_phase(args: argparse.Namespace, directory: str, phase: str, env: dict[str, str]) -> float:
    """fio's aggregate bandwidth of one phase, MiB/s."""
    cmd = ["fio", "--name=bw", f"--directory={directory}", "--ioengine=psync",
           f"--direct={int(args.direct)}", f"--rw={phase}", f"--bs={args.bs}",
           f"--size={args.size}", f"--numjobs={args.jobs}", "--invalidate=0"]  # fmt: skip
    job = fio_job.run(cmd, env, timeout_s=900)
    return job[phase]["bw_bytes"] / (1 << 20)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--bs", default="1m")
    ap.add_argument("--size", default="256m", help="per job")
    ap.add_argument("--direct", action="store_true", help="O_DIRECT (default: buffered)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--daemon-args", default="", help="more iorelayd options, one string")
    ap.add_argument("--daemon-binary", type=Path, default=None,
                    help="another build's iorelayd (default: build/'s)")  # fmt: skip
    ap.add_argument("--out", default=None, help="default: bench/results/fio-bandwidth-BS.md")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="NAME:VAR=VALUE ...: one more forwarded row, with these client variables",
    )
    args = ap.parse_args()
    variants = {"forwarded": {}}
    for v in args.variant:
        name, _, assignments = v.partition(":")
        variants[name] = dict(a.split("=", 1) for a in assignments.split())
    paths = ["direct", *variants]
    runs = {(path, phase): [] for path in paths for phase in PHASES}
    stats: dict = {}
    requests: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="iorelay-fio-bw-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        (root / "direct").mkdir(parents=True)
        (root / "fwd").mkdir()
        for rep in range(args.reps):
            binary = {"daemon_binary": args.daemon_binary} if args.daemon_binary else {}
            with LocalDaemons(1, root, "/iorelay-fio", Path(tmp) / f"d{rep}",
                              extra_args=args.daemon_args.split(), **binary) as d:  # fmt: skip
                order = paths[rep % len(paths) :] + paths[: rep % len(paths)]
                for path in order:
                    if path == "direct":
                        for phase in PHASES:
                            runs[path, phase].append(
                                fio_phase(args, str(root / "direct"), phase, {})
                            )
                        continue
                    before = query_stats(d.addresses("unix")[0], d.credential_file)
                    for phase in PHASES:
                        runs[path, phase].append(
                            fio_phase(args, f"{d.prefix}/fwd", phase,
                                      {**d.env("unix"), **variants[path]})
                        )  # fmt: skip
                    stats = query_stats(d.addresses("unix")[0], d.credential_file)
                    requests[path] = {
                        op: n - before["total"]["by_op"].get(op, 0)
                        for op, n in stats["total"]["by_op"].items()
                        if n > before["total"]["by_op"].get(op, 0)
                    }
            print(f"repetition {rep + 1}: " + ", ".join(
                f"{p} {ph} {r[-1]:.0f}" for (p, ph), r in runs.items()), flush=True)  # fmt: skip
    mode = "O_DIRECT" if args.direct else "buffered"
    cmd = "python bench/fio_bandwidth.py " + shlex.join(sys.argv[1:])
    lines = [f"## fio, {args.jobs} jobs, file per job, {args.bs} {mode} requests, "
             f"{time.strftime('%Y-%m-%d')}", "", f"Command: `{cmd}`", "",
             "| phase | direct MiB/s | forwarded MiB/s | forwarded/direct | direct runs | "
             "forwarded runs |", "|---|---:|---:|---:|---|---|"]  # fmt: skip
    for name in variants:
        label = "" if name == "forwarded" else f" ({name})"
        for phase in PHASES:
            d, f = runs["direct", phase], runs[name, phase]
            lines.append(f"| {phase}{label} | {statistics.median(d):.0f} | "
                         f"{statistics.median(f):.0f} | "
                         f"{statistics.median(f) / statistics.median(d):.2f} | "
                         f"{', '.join(f'{v:.0f}' for v in d)} | "
                         f"{', '.join(f'{v:.0f}' for v in f)} |")  # fmt: skip
    counters = ", ".join(f"{k} {stats.get(k, 0)}" for k in COUNTERS)
    lines += ["", f"The daemon of the last repetition: {counters}. Its requests by op, per row: "
              + "; ".join(f"{name}: {counts(requests.get(name, {}))}" for name in variants)
              + "."]  # fmt: skip
    table = "\n".join(lines) + "\n"
    print(table)
    out = args.out or REPO / "bench" / "results" / f"fio-bandwidth-{args.bs}.md"
    Path(out).write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
