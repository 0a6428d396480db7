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
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from iorelay import paths  # noqa: E402
from iorelay.daemons import LocalDaemons  # noqa: E402


def raise_descriptor_limit(want: int) -> None:
    """Soft limit up to min(want, hard) for this process and what it starts."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(want, hard) if hard != resource.RLIM_INFINITY else want
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def daemon_sample(pid: int) -> dict:
    """RSS (KiB), threads and open descriptors of a process."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {
        "rss_kib": int(fields["VmRSS"].split()[0]),
        "threads": int(fields["Threads"]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
    }


def soak(idle: int, active: int, seconds: float, workdir: Path) -> list[dict]:
    """Runs the load against a fresh daemon; one merged sample per second."""
    raise_descriptor_limit(idle + 4096)
    root = workdir / "root"
    root.mkdir()
    with LocalDaemons(1, root, "/iorelay-soak", workdir / "d") as d:
        pid = d.daemons[0].pid
        env = {**os.environ, **d.env("unix"), "IORELAY_MAX_CONNECTIONS": str(active + 4)}
        cmd = [str(paths.find("soak_client")), str(idle), str(active), str(seconds), d.prefix]
        samples: list[dict] = []
        with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) as p:
            lines: list[dict] = []
            reader = threading.Thread(target=lambda: lines.extend(map(json.loads, p.stdout)))
            reader.start()
            while p.poll() is None:
                time.sleep(1.0)
                loads = [x for x in lines if "t" in x]
                if loads:
                    samples.append({**loads[-1], **daemon_sample(pid)})
            reader.join()
        done = next((x for x in lines if x.get("done")), {})
        if p.returncode != 0 or not done:
            raise RuntimeError(f"soak_client failed ({p.returncode}): {lines[-3:]}\n{d.logs()}")
        for s in samples:
            s["idle_connected"] = done["idle_connected"]
        return samples


def growth(samples: list[dict], key: str) -> float:
    """Median of the last fifth over the median of the first fifth (after the first sample)."""
    body = samples[1:] or samples
    n = max(1, len(body) // 5)
    first = statistics.median(s[key] for s in body[:n])
    last = statistics.median(s[key] for s in body[-n:])
    return last / first if first else float("inf")


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
