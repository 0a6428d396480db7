"""Intra-node aggregation on the testbed: J fio jobs on one compute host (node1) writing one
1D-strided file in small O_DIRECT requests through one I/O node (ion1) across node1's capped
link, without and with a relay on node1 (`iorelay run --node-aggregation` in an allocation),
alternating in one allocation per repetition.

    .venv/bin/python bench/testbed_node_aggregation.py [--jobs 16] [--bs 8k] [--writes 256]
        [--reps 3] [--relay-scheduler S]... [--out FILE]

Needs an up testbed (iorelay testbed up). fio runs as one Slurm step on node1 through
`iorelay exec` (LD_PRELOAD from the run file); without the relay its jobs reach ion1 over TCP,
with it they reach the relay on node1 at its abstract Unix socket (then shared memory), and
the relay reaches ion1 over TCP. Reports fio's write bandwidth (median), the data requests the
I/O node received and the relay's requests in / backend calls out (their counters: a run whose
daemons did not carry every byte fails), and node1's link bytes. Writes
bench/results/testbed-node-aggregation-JOBS.md unless --out.
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

import fio_job
from node_aggregation import add_pattern_args, data_requests

from iorelay import units
from iorelay.run import RelayConfig, start_relay
from iorelay.testbed import cluster
from iorelay.testbed import slurm as testbed_slurm
from iorelay.testbed.net import link_bytes
from iorelay.testbed.plan import SHARED_PATH
from iorelay.testbed.state import State

REPO = Path(__file__).resolve().parents[1]

COMPUTE = "node1"
IONODE = "ion1"
TIMEOUT_S = 900


def fio_step(args: argparse.Namespace, path: str, env: dict[str, str]) -> dict[str, Any]:
    """fio on COMPUTE as a step of this allocation, through iorelay exec; its job's JSON."""
    cmd = fio_job.strided_write_cmd(path, args.jobs, units.parse_bytes(args.bs), args.writes)
    argv = ["srun", "--overlap", "-N1", "-n1", f"-w{COMPUTE}", "--quiet",
            sys.executable, "-m", "iorelay.exec_cmd", "--",
            *cmd, "--group_reporting", "--output-format=json"]  # fmt: skip
    out = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True,
                         timeout=TIMEOUT_S, check=False)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"fio on {COMPUTE} failed: {out.stderr[-1500:]}")
    return json.loads(out.stdout[out.stdout.index("{") :])["jobs"][0]


def one_run(args: argparse.Namespace, work: Path, name: str, relay_scheduler: str) -> dict:
    """One fio run through ion1, with the relay unless relay_scheduler is empty."""
    root = work / f"root-{name}"
    root.mkdir()
    config = RelayConfig(ionodes=1, scheduler=args.scheduler, root=root, hosts=[IONODE],
                         compute_hosts=[COMPUTE], node_aggregation=bool(relay_scheduler),
                         relay_scheduler=relay_scheduler or "sjf")  # fmt: skip
    with start_relay(config, work / f"relay-{name}") as r:
        job = fio_step(args, f"{r.prefix}/strided.dat", r.env(preload=False))
        stats = dict(r.stats())
    written = args.jobs * args.writes * units.parse_bytes(args.bs)
    ionode = stats[r.ionode_addresses[0] if relay_scheduler else r.addresses[0]]
    if not isinstance(ionode, dict) or int(ionode["total"]["bytes_written"]) < written:
        raise RuntimeError(f"the I/O node did not write the {written} bytes: {ionode}")
    row = {"mib_s": job["write"]["bw_bytes"] / (1 << 20), "ionode_data": data_requests(ionode)}
    if relay_scheduler:
        rs = stats[r.relay_counter_addresses[0]]
        if not isinstance(rs, dict):
            raise RuntimeError(f"no counters from the relay: {rs}")
        row["relay_in"] = data_requests(rs)
        row["relay_out"] = sum(int(rs["backend_calls"].get(c, 0)) for c in ("pwritev", "pwrite"))
        row["relay_shm"] = int(rs.get("connections_shm_attached", 0))
    return row


def inside(args: argparse.Namespace) -> int:
    """In the allocation: each path once, in order; the rows as JSON on stdout."""
    work = Path(args.inside)
    rows = {label: one_run(args, work, str(i), sched)
            for i, (label, sched) in enumerate(paths_of(args))}  # fmt: skip
    print(json.dumps(rows))
    return 0


def paths_of(args: argparse.Namespace) -> list[tuple[str, str]]:
    schedulers = list(dict.fromkeys(args.relay_scheduler or [RelayConfig.relay_scheduler]))
    label = (lambda s: f"with relay, {s}") if len(schedulers) > 1 else (lambda s: "with relay")
    return [("without relay", ""), *((label(s), s) for s in schedulers)]


def testbed_hosts() -> dict[str, Any]:
    state = State.load()
    return {h.name: h for h in cluster.hosts_of(state)} if state else {}


def node1_sent() -> int:
    host = testbed_hosts().get(COMPUTE)
    return link_bytes(host)["sent"] if host else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_pattern_args(ap)
    ap.add_argument("--relay-scheduler", action="append",
                    help=f"default {RelayConfig.relay_scheduler}; again: a row each")  # fmt: skip
    ap.add_argument("--out")
    ap.add_argument("--inside", help=argparse.SUPPRESS)  # (run in the allocation)
    args = ap.parse_args()
    if args.inside:
        return inside(args)
    if not Path(testbed_slurm.SLURM_CONF).exists():
        print("no testbed up (iorelay testbed up)", file=sys.stderr)
        return 1
    runs: dict[str, list[dict]] = {label: [] for label, _ in paths_of(args)}
    link_mib: list[float] = []
    for rep in range(args.reps):
        with tempfile.TemporaryDirectory(prefix="tbagg-", dir=SHARED_PATH) as tmp:
            me = ["--jobs", str(args.jobs), "--bs", args.bs, "--writes", str(args.writes),
                  "--scheduler", args.scheduler, "--inside", tmp]  # fmt: skip
            me += [a for s in args.relay_scheduler or [] for a in ("--relay-scheduler", s)]
            argv = ["salloc", "-N2", f"-w{IONODE},{COMPUTE}", "--quiet", sys.executable,
                    __file__, *me]  # fmt: skip
            before = node1_sent()
            proc = subprocess.run(argv, env={**os.environ, **testbed_slurm.env()},
                                  capture_output=True, text=True, timeout=TIMEOUT_S * 3,
                                  stdin=subprocess.DEVNULL, check=False)  # fmt: skip
            link_mib.append((node1_sent() - before) / 2**20)
            if proc.returncode != 0:
                raise RuntimeError(f"repetition {rep + 1} failed:\n{proc.stderr[-3000:]}")
            rows = json.loads(proc.stdout.strip().splitlines()[-1])
        for label, row in rows.items():
            runs[label].append(row)
        print(f"repetition {rep + 1}: " + "; ".join(
            f"{k} {v[-1]['mib_s']:.1f} MiB/s, {v[-1]['ionode_data']} requests at {IONODE}"
            for k, v in runs.items()), flush=True)  # fmt: skip

    def med(label: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[label])

    base = med("without relay", "mib_s")
    base_msgs = med("without relay", "ionode_data")
    cmd = "python bench/testbed_node_aggregation.py " + shlex.join(sys.argv[1:])
    hosts = testbed_hosts()
    caps = ", ".join(f"{h} {hosts[h].rate_mbit} Mbit/s" for h in (COMPUTE, IONODE) if h in hosts)
    lines = [f"## Testbed: {args.jobs} fio jobs on {COMPUTE}, 1D-strided {args.bs} O_DIRECT "
             f"writes to one file, {args.writes} each, through {IONODE} ({args.scheduler}), "
             f"{time.strftime('%Y-%m-%d')}", "", f"Command: `{cmd}`", "",
             f"Link caps: {caps}. {COMPUTE}'s link sent {statistics.median(link_mib):.1f} MiB "
             "per repetition (median; every path of the repetition together).", "",
             "| path | write MiB/s (median) | / without | runs | data requests at the I/O node "
             "(median) | fewer | relay: requests in / backend calls out | relay shm clients |",
             "|---|---:|---:|---|---:|---:|---|---:|"]  # fmt: skip
    for label, rows in runs.items():
        bw, msgs = med(label, "mib_s"), med(label, "ionode_data")
        relay = f"{med(label, 'relay_in'):.0f} / {med(label, 'relay_out'):.0f}" if (
            "relay_in" in rows[0]) else ""  # fmt: skip
        shm = f"{med(label, 'relay_shm'):.0f}" if "relay_shm" in rows[0] else ""
        each = ", ".join(f"{r['mib_s']:.1f}" for r in rows)
        lines.append(f"| {label} | {bw:.1f} | {bw / base:.2f} | {each} | {msgs:.0f} | "
                     f"{base_msgs / msgs:.1f}x | {relay} | {shm} |")  # fmt: skip
    table = "\n".join(lines) + "\n"
    print(table)
    out = Path(args.out) if args.out else (
        REPO / "bench" / "results" / f"testbed-node-aggregation-{args.jobs}.md")  # fmt: skip
    out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
