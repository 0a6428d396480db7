"""Soak: one iorelayd holding many connections for a long time, some of them busy.

    .venv/bin/python bench/soak.py [--idle 10000] [--active 8] [--minutes 10] [--out FILE.md]

Starts one daemon (raising the descriptor limit for it and the load), then soak_client:
IDLE authenticated connections that stay open and ACTIVE threads doing 4 KiB pwrite/pread at
random offsets. Every second it records the load's operations and p50/p99 latency, and the
daemon's RSS, threads and open descriptors (/proc). Writes a Markdown summary (first minute
against the last: does anything grow?) to bench/results/soak.md and the series as JSON beside
it. `soak(...)` is also what the short CI test (python/tests/test_soak.py) runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from iorelay.paths import REPO_ROOT as REPO
from iorelay.soak import growth, soak


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", type=int, default=10000)
    ap.add_argument("--active", type=int, default=8)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "soak.md"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="iorelay-soak-", dir="/var/tmp") as tmp:
        samples = soak(args.idle, args.active, args.minutes * 60, Path(tmp))
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(samples, indent=1) + "\n")
    cmd = "python bench/soak.py " + " ".join(sys.argv[1:])
    ops = [s["ops"] for s in samples]
    lines = [f"## Soak, {time.strftime('%Y-%m-%d')}: {samples[0]['idle_connected']} idle "
             f"connections, {args.active} busy threads, {args.minutes:g} min", "",
             f"Command: `{cmd}`", "",
             "| quantity | first | last | last / first (medians of fifths) |",
             "|---|---:|---:|---:|"]  # fmt: skip
    for key in ("rss_kib", "threads", "fds", "ops", "p99_us"):
        lines.append(f"| {key} | {samples[1][key]} | {samples[-1][key]} | "
                     f"{growth(samples, key):.2f} |")  # fmt: skip
    lines += ["", f"Operations per second: median {statistics.median(ops):.0f}; p99 latency "
              f"median {statistics.median(s['p99_us'] for s in samples):.0f} us."]  # fmt: skip
    table = "\n".join(lines) + "\n"
    print(table)
    out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
