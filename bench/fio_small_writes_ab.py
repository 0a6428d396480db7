"""fio's 4 KiB sequential buffered writes (psync) direct, through one iorelayd with write-behind,
and optionally with another build's interposer (an A/B of a client change), alternating; the
bandwidth, fio's CPU per write (rusage) and the daemon's (/proc).

    .venv/bin/python bench/fio_small_writes_ab.py [--reps 9] [--size 64m]
        [--baseline-preload OTHER_BUILD/src/preload/libiorelay_preload.so] [--perf FILE]

--perf records the last write-behind run's fio with `perf record -g` into FILE. CPU per write
includes fio's start-up; the daemon's comes in clock ticks (10 ms). Prints medians and ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
from pathlib import Path

from iorelay.launch.local import LocalDaemons

TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S


def fio(directory: str, size: str, env: dict[str, str], perf: str | None) -> tuple[float, float]:
    """MiB/s and fio's CPU seconds per write."""
    cmd = ["fio", "--name=w", f"--directory={directory}", "--ioengine=psync", "--direct=0",
           "--rw=write", "--bs=4k", f"--size={size}", "--invalidate=0",
           "--output-format=json"]  # fmt: skip
    if perf:
        cmd = ["perf", "record", "-F", "4999", "-g", "-o", perf, "--", *cmd]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True,
                         check=True, timeout=600)  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    job = json.loads(out.stdout[out.stdout.index("{") :])["jobs"][0]["write"]
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return job["bw_bytes"] / (1 << 20), cpu / job["total_ios"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--size", default="64m")
    ap.add_argument("--baseline-preload", type=Path, default=None)
    ap.add_argument("--perf", default=None)
    args = ap.parse_args()
    rows = ["direct", "write-behind"] + (["baseline"] if args.baseline_preload else [])
    runs: dict[str, list[tuple[float, float, float]]] = {r: [] for r in rows}
    with tempfile.TemporaryDirectory(prefix="iorelay-fio-ab-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        (root / "direct").mkdir(parents=True)
        (root / "fwd").mkdir()
        with LocalDaemons(1, root, "/iorelay-fio", Path(tmp) / "d") as d:
            pid = d.daemons[0].pid
            env = {**d.env("unix"), "IORELAY_WRITE_BEHIND": "on"}
            for rep in range(args.reps):
                for row in rows[rep % len(rows) :] + rows[: rep % len(rows)]:
                    if row == "direct":
                        bw, cpu = fio(str(root / "direct"), args.size, {}, None)
                        runs[row].append((bw, cpu, 0.0))
                        continue
                    e = (
                        env
                        if row == "write-behind"
                        else {**env, "LD_PRELOAD": str(args.baseline_preload)}
                    )
                    last = args.perf if row == "write-behind" and rep == args.reps - 1 else None
                    c0 = proc_cpu_s(pid)
                    bw, cpu = fio(f"{d.prefix}/fwd", args.size, e, last)
                    runs[row].append((bw, cpu, proc_cpu_s(pid) - c0))
    direct = statistics.median(r[0] for r in runs["direct"])
    for row, rs in runs.items():
        print(f"{row}: {statistics.median(r[0] for r in rs):.0f} MiB/s "
              f"({statistics.median(r[0] for r in rs) / direct:.2f}x direct; runs "
              f"{', '.join(f'{r[0]:.0f}' for r in rs)}), fio CPU "
              f"{statistics.median(r[1] for r in rs) * 1e6:.2f} us/write, daemon CPU "
              f"{statistics.median(r[2] for r in rs):.3f} s/run")  # fmt: skip
    print("load average", " ".join(Path("/proc/loadavg").read_text().split()[:3]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
