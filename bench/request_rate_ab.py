#!/usr/bin/env python3
"""Request rate of two iorelayd builds, alternating: did a daemon change cost requests per second?

The rows of bench/datapath.py's request rate (4 KiB pwrites through the C API, one daemon,
Unix socket, null and POSIX backends), run with the OLD and NEW build directories' iorelayd and
request_rate in alternating order (old, new, then new, old, ...), with the medians of the runs
and the daemon's CPU time per request (utime + stime from /proc/PID/stat), which a machine
shared with other work disturbs less than the rate. `--transport tcp` runs them over loopback
TCP (sealed), `--size` changes the request (4 MiB with 1 thread: bandwidth), and each run also
times `--connects` new connections (`iorelay-ctl ping`: connect and handshake, then the first
request's round trip).

    .venv/bin/python bench/request_rate_ab.py OLD_BUILD NEW_BUILD [--threads 8] [--seconds 2]
        [--runs 5] [--transport unix|tcp] [--size 4096] [--connects 20]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from iorelay.launch.local import LocalDaemons

REPO = Path(__file__).resolve().parents[1]

TIMEOUT_S = 120


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def connect_us(build: Path, address: str, secret: str, n: int) -> float:
    """Median over `n` `iorelay-ctl ping`s of connect+handshake plus the first round trip (us)."""
    times = []
    for _ in range(n):
        out = subprocess.run(
            [str(build / "src/client/iorelay-ctl"), "--secret-file", secret, "ping", address],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
        ).stdout  # fmt: skip
        m = re.search(r"connect\+auth (\d+) us, ping (\d+) us", out)
        if m is None:
            raise RuntimeError(f"iorelay-ctl ping printed {out!r}")
        times.append(int(m.group(1)) + int(m.group(2)))
    return statistics.median(times)


def one_run(build: Path, backend: str, work: Path, opts: argparse.Namespace) -> dict:
    root, wd = Path(tempfile.mkdtemp(dir=work)), Path(tempfile.mkdtemp(dir=work))
    with LocalDaemons(
        1, root, "/iorelay-bench", wd, backend=backend,
        daemon_binary=build / "src/iorelayd/iorelayd",
        preload_library=build / "src/preload/libiorelay_preload.so",
    ) as d:  # fmt: skip
        pid = d.daemons[0].pid
        env = {k: v for k, v in d.env(opts.transport).items() if k != "LD_PRELOAD"}
        cpu0 = cpu_seconds(pid)
        out = subprocess.run(
            [str(build / "bench/request_rate"), "/iorelay-bench/rate.dat", str(opts.threads),
             str(opts.seconds), str(opts.size)],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=TIMEOUT_S,
            check=True,
        )  # fmt: skip
        r = json.loads(out.stdout)
        r["daemon_cpu_us_per_request"] = (cpu_seconds(pid) - cpu0) * 1e6 / max(1, r["requests"])
        r["MiB_s"] = r["requests_per_s"] * opts.size / (1 << 20)
        if opts.connects > 0:
            address = env["IORELAY_SERVERS"].split(",")[0]
            r["connect_us"] = connect_us(build, address, env["IORELAY_SECRET_FILE"], opts.connects)
        return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="build directory of the old version")
    ap.add_argument("new", type=Path, help="build directory of the new version")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--transport", choices=("unix", "tcp"), default="unix")
    ap.add_argument("--size", type=int, default=4096, help="bytes per request")
    ap.add_argument("--connects", type=int, default=0, help="new connections timed per run")
    ap.add_argument("--backends", default="null,posix")
    args = ap.parse_args()
    builds = {"old": args.old.resolve(), "new": args.new.resolve()}
    rows: dict[tuple[str, str], list[dict]] = {}
    work = Path(tempfile.mkdtemp(prefix="iorelay-rr-ab-", dir="/tmp"))
    try:
        for backend in args.backends.split(","):
            for run in range(args.runs):
                for name in ("old", "new") if run % 2 == 0 else ("new", "old"):
                    r = one_run(builds[name], backend, work, args)
                    rows.setdefault((backend, name), []).append(r)
                    print(
                        f"{backend} {name} run {run}: {r['requests_per_s']:.0f} req/s", flush=True
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for (backend, name), runs in sorted(rows.items()):
        rate = statistics.median(r["requests_per_s"] for r in runs)
        cpu = statistics.median(r["daemon_cpu_us_per_request"] for r in runs)
        mib = statistics.median(r["MiB_s"] for r in runs)
        line = f"{backend:5} {name}: median {rate:.0f} req/s ({mib:.0f} MiB/s), "
        line += f"{cpu:.1f} us daemon CPU per request"
        if args.connects > 0:
            line += (
                f", {statistics.median(r['connect_us'] for r in runs):.0f} us per new connection"
            )
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
