"""A flood of connections that never authenticate against one iorelayd, with and without
handshake eviction, and how long a real client takes to get in meanwhile.

    .venv/bin/python bench/handshake_flood.py [--seconds 12] [--hold 15000] [--reps 1]

A flooding thread opens Unix connections to the daemon as fast as it can and sends nothing,
holding up to --hold of them (then it closes its oldest); the listener's backlog stays full.
Every half second a real client (`iorelay-ctl ping`, IORELAY_TIMEOUT_MS 8000) connects,
authenticates and pings; its wall time and exit status are recorded. The daemon runs with its
defaults (--max-handshakes 64) and --handshake-evict-ms 50 (the default) or 0 (eviction off),
alternating. Everything stays on this machine (one Unix socket) and stops by itself. Writes
the table to bench/results/handshake-flood.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from results_table import publish

from iorelay import paths
from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]

PING_TIMEOUT_MS = 8000


def flood(path: str, until: float, hold: int, opened: list[int]) -> None:
    """Connects to `path` until `until` (monotonic), never sending; holds up to `hold`."""
    held: list[socket.socket] = []
    while time.monotonic() < until:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
        try:
            s.connect(path)
        except OSError:  # (the backlog is full: EAGAIN)
            s.close()
            time.sleep(0.0005)
            continue
        held.append(s)
        opened[0] += 1
        if len(held) > hold:
            held.pop(0).close()
    for s in held:
        s.close()


def one_run(evict_ms: int, seconds: float, hold: int) -> dict:
    """The pings' wall times and exit statuses during one flood, and the daemon's counters."""
    with tempfile.TemporaryDirectory(prefix="iorflood") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        args = ["--handshake-evict-ms", str(evict_ms)]
        with LocalDaemons(1, root, "/fwd", Path(tmp) / "work", extra_args=args) as d:
            address = d.addresses("unix")[0]
            env = dict(os.environ, IORELAY_SECRET_FILE=str(d.credential_file),
                       IORELAY_TIMEOUT_MS=str(PING_TIMEOUT_MS))  # fmt: skip
            until = time.monotonic() + seconds
            opened = [0]
            flooder = threading.Thread(
                target=flood, args=(address.removeprefix("unix:"), until, hold, opened)
            )
            flooder.start()
            time.sleep(1.0)  # (the backlog fills)
            pings = []
            while time.monotonic() < until - 1:
                t0 = time.monotonic()
                done = subprocess.run([str(paths.find("iorelay-ctl")), "ping", address], env=env,
                                      capture_output=True, timeout=60, check=False)  # fmt: skip
                pings.append((time.monotonic() - t0, done.returncode))
                time.sleep(0.5)
            flooder.join()
            stats = query_stats(address, d.credential_file)
    return {"pings": pings, "opened": opened[0], "stats": stats}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=12.0, help="how long each flood lasts")
    ap.add_argument("--hold", type=int, default=15000, help="connections the flood holds at most")
    ap.add_argument("--reps", type=int, default=1, help="floods per setting, alternating")
    args = ap.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    hold = min(args.hold, hard - 256)
    runs: dict[int, list[dict]] = {50: [], 0: []}
    for _ in range(args.reps):
        for evict_ms in runs:
            runs[evict_ms].append(one_run(evict_ms, args.seconds, hold))
    cmd = " ".join(["python", "bench/handshake_flood.py", *sys.argv[1:]])
    lines = [f"Command: `{cmd}` (the flood holds up to {hold} connections; "
             f"IORELAY_TIMEOUT_MS {PING_TIMEOUT_MS})", "",
             "| --handshake-evict-ms | flood connections | pings in | median ping s | "
             "slowest ping s | evicted | closed at the handshake deadline |",
             "|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for evict_ms, results in runs.items():
        for r in results:
            ok = [t for t, rc in r["pings"] if rc == 0]
            times = [t for t, _ in r["pings"]]
            s = r["stats"]
            lines.append(
                f"| {evict_ms} | {r['opened']} | {len(ok)} of {len(times)} | "
                f"{statistics.median(times):.2f} | {max(times):.2f} | "
                f"{s['connections_closed_handshake_evicted']} | "
                f"{s['connections_closed_handshake_deadline']} |"
            )
    publish("handshake-flood.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
