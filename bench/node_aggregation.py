"""Intra-node aggregation: J fio jobs on one (virtual) compute node writing one 1D-strided file in
small O_DIRECT requests, through one I/O node, with and without a node-local relay in front of
it (`iorelay run --node-aggregation`), alternating, in the same run.

    .venv/bin/python bench/node_aggregation.py [--jobs 16] [--bs 8k] [--writes 256] [--reps 3]
                                                [--relay-workers 1[,2,...]]

Job j writes bs bytes at j * bs, then skips (jobs - 1) * bs, `writes` times (fio, psync, i.e.
pwrite; no barrier between jobs). Reports fio's aggregate write bandwidth (MiB/s, median), the
data requests the I/O node received (from its counters: with the relay, the relay's messages to
it; without, the jobs' own), their ratio, and the relay's requests in and backend calls out,
and writes bench/results/node-aggregation-JOBS.md. With several --relay-workers, the relay runs
once with each in every repetition (a row each).
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import fio_job

from iorelay import units
from iorelay.run import RelayConfig, start_relay

REPO = Path(__file__).resolve().parents[1]

DATA_OPS = ("pwrite", "write", "pread", "read", "pwrite_piped", "pread_piped", "pwrite_ranges")


def fio_mib_s(args: argparse.Namespace, path: str, env: dict[str, str]) -> float:
    cmd = fio_job.strided_write_cmd(path, args.jobs, units.parse_bytes(args.bs), args.writes)
    job = fio_job.run(cmd, env)
    return job["write"]["bw_bytes"] / (1 << 20)


def data_requests(stats: dict[str, Any]) -> int:
    by_op = stats["total"]["by_op"]
    return sum(int(by_op.get(op, 0)) for op in DATA_OPS)


def one_run(
    args: argparse.Namespace,
    tmp: Path,
    name: str,
    relay: bool,
    relay_workers: int,
    relay_scheduler: str,
) -> dict[str, float]:
    config = RelayConfig(
        ionodes=1,
        scheduler=args.scheduler,
        root=tmp / "root",
        prefix="/iorelay-agg",
        node_aggregation=relay,
        relay_scheduler=relay_scheduler,
        relay_workers=relay_workers,
        relay_args=shlex.split(args.relay_args),
        daemon_args=shlex.split(args.ionode_args),
        # Without the relay, the jobs reach the I/O node over TCP, as the relay does: the I/O
        # node stands for another host.
        local_transport="tcp",
    )
    with start_relay(config, tmp / name) as r:
        mib_s = fio_mib_s(args, f"{r.prefix}/strided.dat", r.env())
        stats = dict(r.stats())
    ionode = stats[(r.ionode_addresses or r.addresses)[0]]
    if not isinstance(ionode, dict):
        raise RuntimeError(f"no counters from the I/O node: {ionode}")
    row = {"mib_s": mib_s, "ionode_data": float(data_requests(ionode)),
           "ionode_per_dispatch": float(ionode["total"]["mean_requests_per_dispatch"])}  # fmt: skip
    if relay:
        rs = stats[r.addresses[0]]
        if not isinstance(rs, dict):
            raise RuntimeError(f"no counters from the relay: {rs}")
        calls = rs["backend_calls"]
        row["relay_in"] = float(data_requests(rs))
        row["relay_out"] = float(sum(int(calls.get(c, 0)) for c in ("pwritev", "pwrite")))
        row["relay_per_dispatch"] = float(rs["total"]["mean_requests_per_dispatch"])
    (tmp / "root" / "strided.dat").unlink(missing_ok=True)
    return row


def add_pattern_args(ap: argparse.ArgumentParser) -> None:
    """The options of the fio pattern and the I/O node, shared with testbed_node_aggregation."""
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--bs", default="8k")
    ap.add_argument("--writes", type=int, default=256, help="requests per job")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scheduler", default="sjf", help="the I/O node's scheduler")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_pattern_args(ap)
    ap.add_argument(
        "--relay-scheduler",
        action="append",
        help=f"as iorelay run's default ({RelayConfig.relay_scheduler}); again: a row each (with "
        "every --relay-workers)",
    )
    ap.add_argument(
        "--relay-workers", default="1", help="upstream requests at once (1); a list: a row each"
    )
    ap.add_argument(
        "--ionode-args",
        default="",
        help="more iorelayd options for the I/O node, e.g. '--delay-us 1000' (every backend call "
        "costs 1 ms more, as a remote file system's per-request latency)",
    )
    ap.add_argument("--relay-args", default="", help="more iorelayd options for the relay")
    ap.add_argument("--out", help="default: bench/results/node-aggregation-JOBS[-...].md")
    args = ap.parse_args()
    workers = list(dict.fromkeys(int(w) for w in args.relay_workers.split(",")))
    schedulers = list(dict.fromkeys(args.relay_scheduler or [RelayConfig.relay_scheduler]))

    def relay_label(w: int, scheduler: str) -> str:
        parts = ["with relay"]
        if len(schedulers) > 1:
            parts.append(scheduler)
        if len(workers) > 1:
            parts.append(f"{w} worker{'s' if w > 1 else ''}")
        return ", ".join(parts)

    paths = [("without relay", False, 0, "")] + [
        (relay_label(w, sched), True, w, sched) for sched in schedulers for w in workers
    ]
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _, _, _ in paths}
    with tempfile.TemporaryDirectory(prefix="iorelay-agg-", dir="/var/tmp") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "root").mkdir()
        for rep in range(args.reps):
            for i, (label, relay, w, sched) in enumerate(paths):
                runs[label].append(one_run(args, tmp, f"{rep}-{i}", relay, w, sched))
            print(f"repetition {rep + 1}: " + "; ".join(
                f"{k} {v[-1]['mib_s']:.1f} MiB/s, {v[-1]['ionode_data']:.0f} requests at the "
                "I/O node" for k, v in runs.items()), flush=True)  # fmt: skip

    def med(label: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[label])

    base_bw, base_msgs = med("without relay", "mib_s"), med("without relay", "ionode_data")
    cmd = "python bench/node_aggregation.py " + shlex.join(sys.argv[1:])
    ionode = " ".join([args.scheduler, args.ionode_args]).strip()
    relay_more = f" {args.relay_args}" if args.relay_args else ""
    lines = [f"## Node-local relay, {args.jobs} fio jobs on one node, 1D-strided {args.bs} "
             f"O_DIRECT writes to one file, one I/O node ({ionode}; "
             f"relay {' / '.join(schedulers)}, {args.relay_workers} workers{relay_more}), "
             f"{time.strftime('%Y-%m-%d')}", "",
             f"Command: `{cmd}`", "",
             "| path | write MiB/s (median) | / without | runs | data requests at the I/O node "
             "(median) | reduction | relay: requests in / backend calls out | I/O node requests "
             "per dispatch |", "|---|---:|---:|---|---:|---:|---|---:|"]  # fmt: skip
    for label, rows in runs.items():
        bw, msgs = med(label, "mib_s"), med(label, "ionode_data")
        relay_col = ""
        if "relay_in" in rows[0]:
            relay_col = f"{med(label, 'relay_in'):.0f} / {med(label, 'relay_out'):.0f}"
        each = ", ".join(f"{r['mib_s']:.1f}" for r in rows)
        lines.append(f"| {label} | {bw:.1f} | {bw / base_bw:.2f} | {each} | {msgs:.0f} | "
                     f"{base_msgs / msgs:.1f}x | {relay_col} | "
                     f"{med(label, 'ionode_per_dispatch'):.2f} |")  # fmt: skip
    table = "\n".join(lines) + "\n"
    print(table)

    def words(options: str) -> str:
        return "-".join(options.replace("--", "").split())

    def spec_words(spec: str) -> str:  # "sjf:gather=1ms" -> "sjf-gather-1ms"
        return words(spec.replace(":", " ").replace(",", " ").replace("=", " "))

    default_sched = [RelayConfig.relay_scheduler]

    parts = [
        words(args.ionode_args),
        "relay-" + words(args.relay_args) if args.relay_args else "",
        "relay-workers-" + "-".join(map(str, workers)) if workers != [1] else "",
        "relay-" + "-".join(map(spec_words, schedulers)) if schedulers != default_sched else "",
    ]
    suffix = "-".join(p for p in parts if p)
    default = f"node-aggregation-{args.jobs}{'-' + suffix if suffix else ''}.md"
    out = Path(args.out) if args.out else REPO / "bench" / "results" / default
    out.parent.mkdir(exist_ok=True)
    out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
