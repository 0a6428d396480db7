"""fio for the benchmarks: the strided-writes command they share, and one run's group-reported
job as fio's JSON gives it."""

from __future__ import annotations

import json
import os
import subprocess


def strided_write_cmd(
    path: str, jobs: int, bs: int, writes: int, ioengine: str = "psync", iodepth: int = 1
) -> list[str]:
    """Job j writes `bs` bytes at j * bs, then skips (jobs - 1) * bs, `writes` times, in O_DIRECT
    writes (`ioengine=psync`: pwrite; `libaio` or `posixaio` with `iodepth` in flight per job),
    with no barrier between the jobs: IOR's strided pattern."""
    return ["fio", "--name=strided", f"--filename={path}", f"--ioengine={ioengine}",
            f"--iodepth={iodepth}", "--direct=1",
            f"--rw=write:{(jobs - 1) * bs}", f"--bs={bs}", f"--numjobs={jobs}",
            f"--offset_increment={bs}", f"--size={writes * jobs * bs}",
            f"--io_size={writes * bs}"]  # fmt: skip


def run(cmd: list[str], env: dict[str, str], timeout_s: float = 600) -> dict:
    """Runs fio `cmd` with `env` added to this environment, all jobs reported as one; that job's
    JSON (its "write" and "read" sections hold bw_bytes, total_ios, ...)."""
    out = subprocess.run([*cmd, "--group_reporting", "--output-format=json"],
                         env={**os.environ, **env}, capture_output=True, text=True,
                         timeout=timeout_s, check=False)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"fio failed: {out.stderr[-1500:]}")
    # (the interposer or the daemon may print a line before fio's JSON)
    return json.loads(out.stdout[out.stdout.index("{") :])["jobs"][0]
