#!/usr/bin/env python3
"""System calls and context switches per 4 KiB pwrite, the daemon's and the client's, by name.

One iorelayd (null backend unless --backend says otherwise) and bench/request_rate (T threads,
4 KiB pwrites through the C API) over one transport: `tcp` (frames sealed, as between hosts),
`unix` or `shm`. `perf stat` counts the tracepoints `syscalls:sys_enter_NAME` of the daemon
(attached to its pid) and of the client (its whole run), divided by the requests the client made.
Counts, not times: a loaded machine changes them less than it changes CPU time, though how many
requests share one wake-up still moves with the load. Needs `perf` and tracefs (run as root).

    .venv/bin/python bench/syscalls_per_request.py [--transport tcp] [--threads 8]
        [--seconds 3] [--runs 3] [--daemon-args ARGS] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iorelay import paths
from iorelay.launch.local import LocalDaemons

CALLS = ["recvfrom", "recvmsg", "sendto", "sendmsg", "read", "write", "poll", "ppoll",
         "epoll_wait", "futex", "sched_yield", "io_uring_enter"]  # fmt: skip
EVENTS = [f"syscalls:sys_enter_{c}" for c in CALLS] + ["raw_syscalls:sys_enter", "context-switches"]


def parse_perf(text: str) -> dict[str, float]:
    """`perf stat -x,` output: event name -> count (0 where perf could not count it)."""
    counts = {}
    for line in text.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] in EVENTS:
            counts[f[2]] = float(f[0]) if f[0].replace(".", "").isdigit() else 0.0
    return counts


def name(event: str) -> str:
    if event == "raw_syscalls:sys_enter":
        return "all system calls"
    return event.removeprefix("syscalls:sys_enter_")


def one_run(args: argparse.Namespace, tmp: Path, n: int) -> dict[str, dict[str, float]]:
    root = tmp / f"root-{n}"
    root.mkdir()
    with LocalDaemons(1, root, "/iorelay-bench", tmp / f"d-{n}", backend=args.backend,
                      extra_args=shlex.split(args.daemon_args)) as d:  # fmt: skip
        env = {k: v for k, v in d.env("tcp" if args.transport == "tcp" else "unix").items()
               if k != "LD_PRELOAD"}  # fmt: skip
        env["IORELAY_SHM"] = "on" if args.transport == "shm" else "off"
        stat = ["perf", "stat", "-x", ",", "-e", ",".join(EVENTS)]
        daemon = subprocess.Popen([*stat, "-p", str(d.daemons[0].pid)], stderr=subprocess.PIPE,
                                  text=True)  # fmt: skip
        time.sleep(0.5)  # (perf attaches)
        client = subprocess.run(
            [*stat, "--", str(paths.find("request_rate")), "/iorelay-bench/rate.dat",
             str(args.threads), str(args.seconds), "4096"],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        daemon.send_signal(signal.SIGINT)
        daemon_err = daemon.communicate(timeout=30)[1]
    requests = max(1, json.loads(client.stdout)["requests"])
    return {side: {e: c / requests for e, c in parse_perf(text).items()}
            for side, text in (("daemon", daemon_err), ("client", client.stderr))}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transport", default="tcp", choices=["tcp", "unix", "shm"])
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--backend", default="null")
    ap.add_argument("--daemon-args", default="", help="more iorelayd options, one string")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="iorelay-sys-", dir="/var/tmp") as tmp:
        runs = [one_run(args, Path(tmp), n) for n in range(args.runs)]
    load = os.getloadavg()
    lines = [f"## System calls per 4 KiB pwrite over {args.transport}, {args.backend} backend, "
             f"{args.threads} threads, {time.strftime('%Y-%m-%d')}", "",
             f"Command: `python bench/syscalls_per_request.py {shlex.join(sys.argv[1:])}`", "",
             f"Load average (1, 5, 15 min) at the end: {load[0]:.1f}, {load[1]:.1f}, "
             f"{load[2]:.1f} on {os.cpu_count()} CPUs. Medians of {args.runs} runs.", "",
             "| per request | daemon | client |", "|---|---:|---:|"]  # fmt: skip
    for e in EVENTS:
        med = {s: statistics.median(r[s].get(e, 0.0) for r in runs) for s in ("daemon", "client")}
        if med["daemon"] >= 0.005 or med["client"] >= 0.005:
            lines.append(f"| {name(e)} | {med['daemon']:.2f} | {med['client']:.2f} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.out:
        Path(args.out).write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
