#!/usr/bin/env python3
"""Whether a job admitted at run time is served as fast as the start-time credential's: one
iorelayd per run, the client's job either given with --credential at start ("start") or admitted
through the admin channel once the daemon runs ("admitted"), alternating.

Two rows, each through the C API (build/bench/request_rate) to one daemon on TCP loopback with
the null backend (so that the daemon's own path is what is measured): the request rate of 4 KiB
pwrites from 8 threads, and the bandwidth of 4 MiB pwrites from 1 thread. Runs alternate
(start, admitted, then admitted, start, ...); medians of the runs.

    .venv/bin/python bench/shared_admit_ab.py [BUILD] [--runs 5] [--seconds 2] [--out FILE.json]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import ab_rotation

from iorelay import ionode
from iorelay.credential import create_credential
from iorelay.launch.local import LocalDaemons

REPO = Path(__file__).resolve().parents[1]

TIMEOUT_S = 120
# (row name, threads, request bytes)
ROWS = (("rate_4KiB_8threads", 8, 4096), ("bandwidth_4MiB_1thread", 1, 4 << 20))
PREFIX = "/iorelay-bench"


def one_run(build: Path, mode: str, threads: int, size: int, seconds: float, work: Path) -> dict:
    root, wd = Path(tempfile.mkdtemp(dir=work)), Path(tempfile.mkdtemp(dir=work))
    admin = create_credential(wd / "admin.key")
    extra = ("--admin-credential", str(admin))
    # The start-time export is elsewhere, so that the admitted job's root does not overlap it.
    start_root = Path(tempfile.mkdtemp(dir=work))
    with LocalDaemons(
        1, start_root if mode == "admitted" else root, PREFIX, wd, backend="null",
        extra_args=extra, daemon_binary=build / "src/iorelayd/iorelayd",
        preload_library=build / "src/preload/libiorelay_preload.so",
    ) as d:  # fmt: skip
        env = {k: v for k, v in d.env("tcp").items() if k != "LD_PRELOAD"}
        if mode == "admitted":
            key = create_credential(wd / "job.key")
            os.environ["IORELAY_BUILD_DIR"] = str(build)
            ionode.admit(
                d.addresses("unix")[0], "job", key, [f"{PREFIX}={root}"], admin_secret_file=admin
            )
            env["IORELAY_SECRET_FILE"] = str(key)
        out = subprocess.run(
            [str(build / "bench/request_rate"), f"{PREFIX}/ab.dat", str(threads), str(seconds),
             str(size)],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=TIMEOUT_S,
            check=True,
        )  # fmt: skip
        r = json.loads(out.stdout)
        r["MiB_s"] = r["requests_per_s"] * size / (1 << 20)
        return r


def main() -> int:
    return ab_rotation.main(
        __doc__.splitlines()[0], ("start", "admitted"), ROWS, ("requests_per_s", "MiB_s"), one_run
    )


if __name__ == "__main__":
    sys.exit(main())
