"""fio, J unsynchronised jobs writing one 1D-strided file in small O_DIRECT requests, through one
iorelayd per scheduler against direct access, in the same run, alternating.

    .venv/bin/python bench/fio_strided.py [--jobs 32] [--bs 8k] [--writes 256] [--reps 3]
                                           [--schedulers sjf,aioli,fifo] [--out FILE.md]
                                           [--ioengine psync|libaio|posixaio] [--iodepth N]
                                           [--backends posix,null] [--daemon-args="--workers 1"]...

Job j writes bs bytes at j * bs, then skips (jobs - 1) * bs (`rw=write:SKIP`,
`offset_increment=bs`), `writes` times: the pattern of IOR's strided run, but with no barrier
between the jobs (fio processes, `ioengine=psync`, i.e. pwrite, unless `--ioengine` says
otherwise, with `--iodepth` requests in flight per job). Reports fio's aggregate write
bandwidth (MiB/s, median), the ratio to direct, the whole machine's busy CPU time per request
(every process and the kernel: run it on otherwise idle cores), the CPU time per request of the
processes of the path alone (fio's, from its rusage, and the daemon's, from /proc/PID/stat: the
figure to compare on a machine other work keeps busy; interrupts are charged to whatever they
interrupt), the load average, the daemon's mean requests per
dispatch and its requests by op, and writes bench/results/fio-strided-JOBS.md. With
`--backends posix,null`, each scheduler runs against both backends in turn: the null backend's
row is what the client and the daemon cost with no disk behind them (its dispatches end at
once, so nothing queues to merge there). Given more than once, `--daemon-args` makes each
scheduler run once with each set of options in every repetition (an A/B of daemon options, a row
each); `--client-env` does the same with the interposer's environment (`--client-env
IORELAY_SPIN_ADAPT=on --client-env ''`: fio's processes with and without it, a row each).
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import fio_job
from results_table import counts

from iorelay import units
from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]


def busy_jiffies() -> int:
    """The machine's CPU time so far in clock ticks, all cores, less idle and I/O wait."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    return sum(fields) - fields[3] - fields[4]


def process_cpu_s(daemon_pid: int | None) -> float:
    """CPU seconds of this process's finished children (fio) and of the daemon, if any."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = r.ru_utime + r.ru_stime
    if daemon_pid is not None:
        fields = Path(f"/proc/{daemon_pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def fio_run(
    args: argparse.Namespace, path: str, env: dict[str, str], daemon_pid: int | None = None
) -> tuple[float, float, float]:
    """(MiB/s, busy CPU microseconds per request, the processes' CPU microseconds per request)
    of one fio run."""
    cmd = fio_job.strided_write_cmd(
        path, args.jobs, units.parse_bytes(args.bs), args.writes, args.ioengine, args.iodepth
    )
    busy, procs = busy_jiffies(), process_cpu_s(daemon_pid)
    job = fio_job.run(cmd, env)
    busy, procs = busy_jiffies() - busy, process_cpu_s(daemon_pid) - procs
    cpu_us = busy * 1e6 / os.sysconf("SC_CLK_TCK")
    n = job["write"]["total_ios"]
    return job["write"]["bw_bytes"] / (1 << 20), cpu_us / n, procs * 1e6 / n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=32)
    ap.add_argument("--bs", default="8k")
    ap.add_argument("--writes", type=int, default=256, help="requests per job")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ioengine", default="psync", help="psync, libaio or posixaio")
    ap.add_argument("--iodepth", type=int, default=1, help="requests in flight per job")
    ap.add_argument("--schedulers", default="sjf,aioli,fifo")
    ap.add_argument(
        "--out", default=None, help="default: bench/results/fio-strided-JOBS[-BACKEND...].md"
    )
    ap.add_argument(
        "--backends",
        default="posix",
        help="the daemons' backends, each in turn (null: the relay without a disk)",
    )
    ap.add_argument(
        "--daemon-args",
        action="append",
        help="more iorelayd options, one string (--daemon-args='--workers 1'); again: a row each",
    )
    ap.add_argument(
        "--client-env",
        action="append",
        help="VAR=VALUE ... for fio's processes, one string; again: a row each ('': none)",
    )
    args = ap.parse_args()
    backends = list(dict.fromkeys(args.backends.split(",")))
    variants = list(dict.fromkeys(args.daemon_args or [""]))
    envs = list(dict.fromkeys(args.client_env or [""]))
    paths = [(s, b, v, e) for s in dict.fromkeys(args.schedulers.split(",")) for b in backends
             for v in variants for e in envs]  # fmt: skip

    def label(sched: str, backend: str, variant: str, env: str) -> str:
        name = sched if backend == "posix" else f"{sched}, {backend} backend"
        if len(variants) > 1:
            name += f", `{variant}`" if variant else ", no more options"
        if len(envs) > 1:
            name += f", `{env}`" if env else ", no client variables"
        return name

    rows = {p: {"runs": [], "cpu": [], "procs": [], "per_dispatch": [], "by_op": {}}
            for p in ["direct", *(label(*p) for p in paths)]}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="iorelay-fio-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        for rep in range(args.reps):
            mib_s, cpu, procs = fio_run(args, str(root / "direct.dat"), {})
            rows["direct"]["runs"].append(mib_s)
            rows["direct"]["cpu"].append(cpu)
            rows["direct"]["procs"].append(procs)
            for n, (sched, backend, variant, env) in enumerate(paths):
                row = rows[label(sched, backend, variant, env)]
                with LocalDaemons(1, root, "/iorelay-fio", Path(tmp) / f"{rep}-{n}",
                                  scheduler=sched, backend=backend,
                                  extra_args=shlex.split(variant)) as d:  # fmt: skip
                    client_env = {**d.env("unix"), **dict(v.split("=", 1) for v in env.split())}
                    mib_s, cpu, procs = fio_run(
                        args, f"{d.prefix}/fwd.dat", client_env, d.daemons[0].pid
                    )
                    row["runs"].append(mib_s)
                    row["cpu"].append(cpu)
                    row["procs"].append(procs)
                    total = query_stats(d.addresses("unix")[0], d.credential_file)["total"]
                row["per_dispatch"].append(float(total["mean_requests_per_dispatch"]))
                row["by_op"] = total.get("by_op", {})
            print(f"repetition {rep + 1}: " + ", ".join(
                f"{p} {r['runs'][-1]:.1f}" for p, r in rows.items()), flush=True)  # fmt: skip
    direct = statistics.median(rows["direct"]["runs"])
    cmd = "python bench/fio_strided.py " + shlex.join(sys.argv[1:])
    engine = "" if args.ioengine == "psync" else f" ({args.ioengine}, {args.iodepth} in flight)"
    lines = [f"## fio, {args.jobs} unsynchronised jobs{engine}, 1D-strided {args.bs} O_DIRECT "
             f"writes to one file, {time.strftime('%Y-%m-%d')}", "", f"Command: `{cmd}`", "",
             f"Load average (1, 5, 15 min) at the end: {os.getloadavg()[0]:.1f}, "
             f"{os.getloadavg()[1]:.1f}, {os.getloadavg()[2]:.1f} on {os.cpu_count()} CPUs.", "",
             "| path | write MiB/s (median) | / direct | runs | busy CPU us per request | "
             "fio + daemon CPU us per request | requests per dispatch | "
             "requests by op (last run) |",
             "|---|---:|---:|---|---:|---:|---:|---|"]  # fmt: skip
    for path, r in rows.items():
        med = statistics.median(r["runs"])
        ratio = f"{med / direct:.2f}" if path != "direct" else ""
        per = f"{statistics.median(r['per_dispatch']):.2f}" if r["per_dispatch"] else ""
        ops = counts(r["by_op"])
        cpu = statistics.median(r["cpu"])
        procs = statistics.median(r["procs"])
        lines.append(f"| {path} | {med:.1f} | {ratio} | "
                     f"{', '.join(f'{v:.1f}' for v in r['runs'])} | {cpu:.1f} | {procs:.1f} | "
                     f"{per} | {ops} |")  # fmt: skip
    table = "\n".join(lines) + "\n"
    print(table)
    others = "".join(f"-{b}" for b in backends if b != "posix")
    others += "-daemon-args-ab" if len(variants) > 1 else ""
    others += "-client-env-ab" if len(envs) > 1 else ""
    others += "" if args.ioengine == "psync" else f"-{args.ioengine}-{args.iodepth}"
    out = args.out or REPO / "bench" / "results" / f"fio-strided-{args.jobs}{others}.md"
    Path(out).write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
