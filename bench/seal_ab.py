#!/usr/bin/env python3
"""What sealing costs over TCP: one iorelayd build with `--seal on` and `--seal off`, alternating.

(The client asks for tags unless IORELAY_SEAL=off; the "off" runs set both.)

Two rows, each through the C API (build/bench/request_rate) to one daemon on TCP loopback
with the null backend (so that the transport and the tags are what is measured): the request
rate of 4 KiB pwrites from 8 threads, and the bandwidth of 4 MiB pwrites from 1 thread. Runs
alternate (on, off, then off, on, ...); medians of the runs, and the daemon's CPU time per
request (utime + stime from /proc/PID/stat), which a shared machine disturbs less.

    .venv/bin/python bench/seal_ab.py [BUILD] [--runs 5] [--seconds 2] [--out FILE.json]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import ab_rotation

from iorelay.launch.local import LocalDaemons

REPO = Path(__file__).resolve().parents[1]

TIMEOUT_S = 120
# (row name, threads, request bytes)
ROWS = (("rate_4KiB_8threads", 8, 4096), ("bandwidth_4MiB_1thread", 1, 4 << 20))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(build: Path, seal: str, threads: int, size: int, seconds: float, work: Path) -> dict:
    root, wd = Path(tempfile.mkdtemp(dir=work)), Path(tempfile.mkdtemp(dir=work))
    with LocalDaemons(
        1, root, "/iorelay-bench", wd, backend="null", extra_args=("--seal", seal),
        daemon_binary=build / "src/iorelayd/iorelayd",
        preload_library=build / "src/preload/libiorelay_preload.so",
    ) as d:  # fmt: skip
        pid = d.daemons[0].pid
        env = {k: v for k, v in d.env("tcp").items() if k != "LD_PRELOAD"}
        env["IORELAY_SEAL"] = seal  # both ends must agree to go without tags
        cpu0 = cpu_seconds(pid)
        out = subprocess.run(
            [str(build / "bench/request_rate"), "/iorelay-bench/seal.dat", str(threads),
             str(seconds), str(size)],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=TIMEOUT_S,
            check=True,
        )  # fmt: skip
        r = json.loads(out.stdout)
        r["daemon_cpu_us_per_request"] = (cpu_seconds(pid) - cpu0) * 1e6 / max(1, r["requests"])
        r["MiB_s"] = r["requests_per_s"] * size / (1 << 20)
        return r


def main() -> int:
    return ab_rotation.main(
        __doc__.splitlines()[0],
        ("on", "off"),
        ROWS,
        ("requests_per_s", "MiB_s", "daemon_cpu_us_per_request"),
        one_run,
    )


if __name__ == "__main__":
    sys.exit(main())
