#!/usr/bin/env python3
"""Data-path benchmark: forwarded against direct on this machine, in one run.

Measures file-per-process bandwidth of 4 processes with 4 MiB requests, write and
read, O_DIRECT and buffered, direct and through one daemon (with the `dd` direct figure beside
it); forwarded 4 KiB pwrite requests per second per daemon with 1 and 8 client threads, null
and POSIX backends; open+fstat+close per second forwarded and direct; and the interposer's
overhead on non-forwarded calls. Writes a Markdown table and a JSON file.

    .venv/bin/python bench/datapath.py [--transport unix|tcp] [--out FILE.md] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from iorelay import paths  # noqa: E402
from iorelay.daemons import LocalDaemons  # noqa: E402

MIB = 1 << 20
TIMEOUT_S = 600


def program(name: str) -> str:
    return str(paths.find(name))


def run_json(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    out = subprocess.run(
        [str(c) for c in cmd], env={**os.environ, **(env or {})}, capture_output=True,
        text=True, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def drop_caches() -> None:
    # Only effective as root; keeps read results from being page-cache hits where intended.
    subprocess.run(["sync"], check=False)
    with contextlib.suppress(OSError):
        Path("/proc/sys/vm/drop_caches").write_text("3\n")


def fpp_bandwidth(
    dirpath: str,
    procs: int,
    size: int,
    request: int,
    op: str,
    direct: bool,
    env: dict[str, str] | None,
) -> float:
    """Aggregate MiB/s of `procs` concurrent io_worker processes: bytes / slowest time."""
    worker = program("io_worker")
    cmds = []
    for r in range(procs):
        cmd = [worker, "--file", f"{dirpath}/fpp.{r}", "--size", size, "--request", request,
               "--op", op] + (["--direct"] if direct else [])  # fmt: skip
        cmds.append([str(c) for c in cmd])
    if op == "read" and direct:
        drop_caches()
    ps = [subprocess.Popen(c, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True) for c in cmds]  # fmt: skip
    times = []
    for p in ps:
        out, err = p.communicate(timeout=TIMEOUT_S)
        if p.returncode != 0:
            raise RuntimeError(f"io_worker failed: {err.strip()}")
        times.append(json.loads(out)["seconds"])
    return procs * size / MIB / max(times)


def dd_direct(dirpath: str, size: int) -> str:
    out = subprocess.run(
        ["dd", "if=/dev/zero", f"of={dirpath}/dd.dat", "bs=4M", f"count={size // (4 * MIB)}",
         "oflag=direct"], capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
    )  # fmt: skip
    os.unlink(f"{dirpath}/dd.dat")
    return out.stderr.strip().splitlines()[-1]


def bandwidth_rows(root: Path, d: LocalDaemons, size: int, reps: int, transport: str) -> list[dict]:
    """Median MiB/s per (mode, op, path); direct and forwarded alternate within each
    repetition, so a drift of the machine (the host's cache of the virtual disk) hits both."""
    rows = []
    for direct in (True, False):
        for op in ("write", "read"):
            vals: dict[str, list[float]] = {"direct": [], "forwarded": []}
            for _ in range(reps):
                for path_kind in ("direct", "forwarded"):
                    env = d.env(transport) if path_kind == "forwarded" else None
                    where = d.prefix if path_kind == "forwarded" else str(root)
                    vals[path_kind].append(fpp_bandwidth(where, 4, size, 4 * MIB, op, direct, env))
            for path_kind, v in vals.items():
                rows.append({"mode": "O_DIRECT" if direct else "buffered", "op": op,
                             "path": path_kind, "MiB_s": sorted(v)[len(v) // 2],
                             "all": v})  # fmt: skip
    return rows


def request_rate_rows(work: Path, seconds: float, transport: str) -> list[dict]:
    # The bandwidth runs leave dirty pages behind; their write-back would share the CPU.
    subprocess.run(["sync"], check=False)
    rows = []
    for backend in ("null", "posix"):
        root = work / f"rr-{backend}"
        root.mkdir()
        with LocalDaemons(1, root, "/iorelay-bench", work / f"rrw-{backend}", backend=backend) as d:
            for threads in (1, 8):
                env = {k: v for k, v in d.env(transport).items() if k != "LD_PRELOAD"}
                r = run_json([program("request_rate"), "/iorelay-bench/rate.dat", threads,
                              seconds, 4096], env)  # fmt: skip
                rows.append({"backend": backend, "threads": threads, **r})
    return rows


def meta_rows(root: Path, d: LocalDaemons, seconds: float, transport: str) -> list[dict]:
    direct = run_json([program("meta_worker"), f"{root}/meta.dat", seconds])
    fwd = run_json([program("meta_worker"), f"{d.prefix}/meta2.dat", seconds], d.env(transport))
    return [{"path": "direct", **direct}, {"path": "forwarded", **fwd}]


def overhead_rows() -> list[dict]:
    try:
        bench = program("preload_overhead_bench")
        preload = program("libiorelay_preload.so")
    except paths.NotBuiltError:
        return []
    plain = subprocess.run([bench], capture_output=True, text=True, timeout=TIMEOUT_S)
    env = {
        **os.environ,
        "LD_PRELOAD": preload,
        "IORELAY_SERVERS": "unix:/nonexistent",
        "IORELAY_PREFIX": "/iorelay-nowhere",
        "IORELAY_SECRET_FILE": "/nonexistent",
    }
    pre = subprocess.run([bench], capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    return [{"without_preload": plain.stdout.strip(), "with_preload": pre.stdout.strip()}]


def markdown(res: dict) -> str:
    lines = [f"## Data path, {res['date']} on {res['host']}", "",
             f"Command: `{res['command']}`", "", f"dd, O_DIRECT, 4 MiB blocks: {res['dd']}", "",
             "| mode | op | direct MiB/s | forwarded MiB/s | forwarded/direct |",
             "|---|---|---|---|---|"]  # fmt: skip
    bw = res["bandwidth"]
    for i in range(0, len(bw), 2):
        a, b = bw[i], bw[i + 1]
        lines.append(f"| {a['mode']} | {a['op']} | {a['MiB_s']:.0f} | {b['MiB_s']:.0f} | "
                     f"{b['MiB_s'] / a['MiB_s']:.2f} |")  # fmt: skip
    lines += ["", "| backend | client threads | forwarded 4 KiB pwrite/s |", "|---|---|---|"]
    for r in res["request_rate"]:
        lines.append(f"| {r['backend']} | {r['threads']} | {r['requests_per_s']:.0f} |")
    lines += ["", "| path | open+fstat+close per s |", "|---|---|"]
    for r in res["meta"]:
        lines.append(f"| {r['path']} | {r['open_fstat_close_per_s']:.0f} |")
    for r in res["overhead"]:
        lines += ["", "Interposer overhead on non-forwarded calls:", "",
                  f"- without LD_PRELOAD: {r['without_preload']}",
                  f"- with LD_PRELOAD: {r['with_preload']}"]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="default: bench/results/datapath-TRANSPORT.md")
    ap.add_argument("--quick", action="store_true", help="small sizes, one repetition")
    ap.add_argument(
        "--transport",
        choices=("unix", "tcp"),
        default="unix",
        help="how clients reach the local daemon (unix)",
    )
    args = ap.parse_args()
    size = (64 if args.quick else 256) * MIB
    reps = 1 if args.quick else 5
    seconds = 1.0 if args.quick else 3.0
    work = Path(tempfile.mkdtemp(prefix="iorelay-bench-", dir="/tmp"))
    try:
        root = work / "root"
        root.mkdir()
        res: dict = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(),
                     "command": "python bench/datapath.py" + (" --quick" if args.quick else "")
                     + f" --transport {args.transport}",
                     "cpus": os.cpu_count()}  # fmt: skip
        res["dd"] = dd_direct(str(root), size)
        with LocalDaemons(1, root, "/iorelay-bench", work / "w") as d:
            res["bandwidth"] = bandwidth_rows(root, d, size, reps, args.transport)
            res["meta"] = meta_rows(root, d, seconds, args.transport)
        res["request_rate"] = request_rate_rows(work, seconds, args.transport)
        res["overhead"] = overhead_rows()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = markdown(res)
    print(text)
    out = Path(args.out or REPO / f"bench/results/datapath-{args.transport}.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
