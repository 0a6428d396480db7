#!/usr/bin/env python3
"""What re-mapping costs a pool job: (a) the client's map check on every call, A/B against the
same client without a map; (b) how long a live pool's moves take to reach a running job.

(a) fio (psync, 4 KiB writes, 4 files) through 2 local daemons with file-hash placement,
without IORELAY_MAP_FILE ("nomap") and with a map naming both daemons ("map"), alternating;
per run fio's bandwidth and its CPU time per request (utime + stime of the fio process and its
threads, wait4's rusage: the interposer's work included).
(b) `iorelay pool start --ionodes 2`; job B takes io0, job A (fio at 12 MiB/s, 4 files, two
placed on each daemon when A has two) gets io1; B leaves (A grows to io1+io0) and C arrives (A
shrinks back to io1). Per repetition: the time from the grow's reply to A's first write counted
at io0 (polled every 10 ms), the time the shrinking join takes (the release of A on io0
drains it), and whether fio verified.

    .venv/bin/python bench/pool_remap.py [--runs 5] [--size 32m] [--moves 3] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ab_rotation

from iorelay.credential import create_credential
from iorelay.launch.local import LocalDaemons
from iorelay.pool import wire
from iorelay.pool.job_map import placed_daemon, write_map
from iorelay.stats import query_stats

TIMEOUT_S = 300


def four_files(root: Path) -> list[str]:
    names = [f"{root}/f{i}" for i in range(64)]
    return [n for d in (0, 1) for n in [m for m in names if placed_daemon(m, 2) == d][:2]]


def map_overhead_run(mode: str, size: str, work: Path) -> dict:
    tmp = Path(tempfile.mkdtemp(dir=work))
    (tmp / "root").mkdir()
    with LocalDaemons(2, tmp / "root", str(tmp / "root"), tmp / "daemons") as d:
        env = {**d.env("unix"), "IORELAY_PLACEMENT": "file-hash"}
        if mode == "map":
            write_map(tmp / "job.map", 1, [0, 1])
            env["IORELAY_MAP_FILE"] = str(tmp / "job.map")
        job = tmp / "job.fio"
        job.write_text(f"[w]\nioengine=psync\nrw=write\nbs=4k\nsize={size}\n"
                       f"filename={':'.join(four_files(tmp / 'root'))}\n")  # fmt: skip
        # wait4 needs the child unreaped: run fio by hand.
        p = subprocess.Popen(["fio", "--output-format=json", str(job)], env={**os.environ, **env},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        assert p.stdout is not None and p.stderr is not None
        out = p.stdout.read()
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise RuntimeError(f"fio failed: {err.decode()[-2000:]}")
        text = out.decode()
        r = json.loads(text[text.index("{") :])["jobs"][0]
        ios = r["write"]["total_ios"]
        bytes_daemons = [query_stats(a, d.credential_file)["total"]["bytes_written"]
                         for a in d.addresses("unix")]  # fmt: skip
    shutil.rmtree(tmp, ignore_errors=True)
    return {
        "MiB_s": r["write"]["bw_bytes"] / (1 << 20),
        "client_cpu_us_per_request": (ru.ru_utime + ru.ru_stime) * 1e6 / ios,
        "share_on_daemon0": bytes_daemons[0] / max(1, sum(bytes_daemons)),
    }


FIO_MOVED = """\
[global]
ioengine=psync
filename={files}
size=48m
bs=64k
rate=12m
verify=crc32c
verify_fatal=1
do_verify=1

[w]
rw=write
"""

NOT_THE_JOBS = {"stats", "ping", "admit", "release", "revoke", "renew", "jobs"}


def writes(address: str, admin: Path) -> int:
    by_op = query_stats(address, admin)["total"]["by_op"]
    return sum(n for op, n in by_op.items() if "write" in op and op not in NOT_THE_JOBS)


def wait_for(cond, timeout_s: float = 60.0, poll_s: float = 0.01) -> float:
    start = time.monotonic()
    while not cond():
        if time.monotonic() - start > timeout_s:
            raise TimeoutError("condition not met")
        time.sleep(poll_s)
    return time.monotonic() - start


def moves_run(work: Path) -> dict:
    tmp = Path(tempfile.mkdtemp(dir=work))
    pool_dir = tmp / "pool"
    pool = subprocess.Popen([sys.executable, "-m", "iorelay", "pool", "start", str(pool_dir),
                             "--ionodes", "2", "--options", "0,1,2", "--min-interval", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for(lambda: (pool_dir / wire.SOCKET_NAME).exists(), poll_s=0.1)
        time.sleep(0.5)
        hosts = wire.request(pool_dir, {"op": "status"})["hosts"]
        admin = pool_dir / "admin.key"
        keys, roots = {}, {}
        for j in "ABC":
            roots[j] = tmp / j
            roots[j].mkdir()
            keys[j] = create_credential(tmp / f"{j}.key")

        def join(j: str, values: dict) -> dict:
            return wire.request(
                pool_dir,
                {
                    "op": "join",
                    "job": j,
                    "secret_file": str(keys[j]),
                    "roots": [f"{roots[j]}={roots[j]}"],
                    "values": values,
                    "compute_nodes": 1,
                },
            )

        join("B", {"0": 100, "1": 300})
        job = tmp / "job.fio"
        job.write_text(FIO_MOVED.format(files=":".join(four_files(roots["A"]))))
        fio = subprocess.Popen(
            [sys.executable, "-m", "iorelay", "run", "--pool", str(pool_dir), "--job", "A",
             "--secret-file", str(keys["A"]), "--job-root", str(roots["A"]), "--values",
             "0=100,1=300,2=450", "--", "fio", "--output-format=json", str(job)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        wait_for(lambda: writes(hosts["io1"], admin) >= 8)
        wire.request(pool_dir, {"op": "leave", "job": "B"})
        grow_s = wait_for(lambda: writes(hosts["io0"], admin) >= 1)
        time.sleep(0.5)
        t = time.monotonic()
        join("C", {"0": 100, "1": 300})
        shrink_s = time.monotonic() - t
        out, _ = fio.communicate(timeout=TIMEOUT_S)
        ok = fio.returncode == 0 and json.loads(out[out.index("{") :])["jobs"][0]["error"] == 0
        return {"grow_to_first_write_s": grow_s, "shrink_join_s": shrink_s, "verified": ok}
    finally:
        with contextlib.suppress(wire.PoolError):
            wire.request(pool_dir, {"op": "stop"})
        pool.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", default="32m", help="(a): fio's bytes")
    ap.add_argument("--moves", type=int, default=3, help="(b): repetitions")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="iorelay-remap-", dir="/tmp"))
    try:
        runs = ab_rotation.rotate(
            [("fio-4k", args.size)],
            ("nomap", "map"),
            args.runs,
            lambda mode, size: map_overhead_run(mode, size, work),
        )
        med = ab_rotation.medians(runs, ["MiB_s", "client_cpu_us_per_request"], None)
        moves = []
        for i in range(args.moves):
            moves.append(moves_run(work))
            print(f"moves run {i}: {moves[-1]}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = {
        "grow_to_first_write_s": [m["grow_to_first_write_s"] for m in moves],
        "shrink_join_s": [m["shrink_join_s"] for m in moves],
        "verified": [m["verified"] for m in moves],
    }
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"runs": runs, "medians": med, "moves": moves}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
