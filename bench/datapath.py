#!/usr/bin/env python3
"""Data-path benchmark: forwarded against direct on this machine, in one run.

Measures file-per-process bandwidth of 4 processes with 4 MiB requests (--request-mib),
write and read, O_DIRECT and buffered, direct and through one daemon (with the `dd` direct
figure beside it); forwarded 4 KiB pwrite requests per second per daemon with 1 and 8 client
threads, null and POSIX backends; open+fstat+close per second forwarded and direct; and the
interposer's overhead on non-forwarded calls (--parts picks some). Writes a Markdown table and
a JSON file. Transports: the Unix socket (unix: IORELAY_SHM=off), shared memory negotiated on
it (shm), TCP to 127.0.0.1 (tcp); with shm, the daemon's counters must show every forwarded
connection moved to shared memory.

    .venv/bin/python bench/datapath.py [--transport unix|shm|tcp] [--request-mib N]
        [--parts bandwidth,meta,rate,overhead] [--modes odirect,buffered] [--reps N]
        [--out FILE.md] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ratio_interval import ratio_interval

from iorelay import paths
from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]

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


def client_env(d: LocalDaemons, transport: str) -> dict[str, str]:
    """The forwarded clients' environment: shm and unix share the socket address, and differ
    in IORELAY_SHM."""
    env = d.env("tcp" if transport == "tcp" else "unix")
    env["IORELAY_SHM"] = "on" if transport == "shm" else "off"
    return env


def shm_counters(d: LocalDaemons) -> tuple[int, int]:
    """(connections accepted, connections moved to shared memory), queried over TCP."""
    s = query_stats(d.addresses("tcp")[0], d.credential_file)
    return s["connections_accepted"], s["connections_shm_attached"]


def check_transport(d: LocalDaemons, transport: str, before: tuple[int, int]) -> None:
    """The forwarded runs since `before` really used `transport` (and really forwarded)."""
    accepted, moved = shm_counters(d)
    conns, shm = accepted - before[0] - 1, moved - before[1]  # (less the query's connection)
    if conns <= 0:
        raise RuntimeError("no forwarded connection reached the daemon")
    if (transport == "shm") != (shm == conns):
        raise RuntimeError(f"{transport}: {shm} of {conns} connections on shared memory")


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


def bandwidth_rows(
    root: Path, d: LocalDaemons, size: int, reps: int, transport: str, request: int,
    modes: list[str],
) -> list[dict]:  # fmt: skip
    """Median MiB/s per (mode, op, path); direct and forwarded alternate within each
    repetition, so a drift of the machine (the host's cache of the virtual disk) hits both."""
    rows = []
    before = shm_counters(d)
    for direct in [m == "odirect" for m in modes]:
        for op in ("write", "read"):
            vals: dict[str, list[float]] = {"direct": [], "forwarded": []}
            for _ in range(reps):
                for path_kind in ("direct", "forwarded"):
                    env = client_env(d, transport) if path_kind == "forwarded" else None
                    where = d.prefix if path_kind == "forwarded" else str(root)
                    vals[path_kind].append(fpp_bandwidth(where, 4, size, request, op, direct, env))
            for path_kind, v in vals.items():
                rows.append({"mode": "O_DIRECT" if direct else "buffered", "op": op,
                             "path": path_kind, "MiB_s": statistics.median(v),
                             "all": v})  # fmt: skip
    check_transport(d, transport, before)
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
                env = {k: v for k, v in client_env(d, transport).items() if k != "LD_PRELOAD"}
                r = run_json([program("request_rate"), "/iorelay-bench/rate.dat", threads,
                              seconds, 4096], env)  # fmt: skip
                rows.append({"backend": backend, "threads": threads, **r})
    return rows


def meta_rows(root: Path, d: LocalDaemons, seconds: float, transport: str) -> list[dict]:
    direct = run_json([program("meta_worker"), f"{root}/meta.dat", seconds])
    fwd = run_json([program("meta_worker"), f"{d.prefix}/meta2.dat", seconds],
                   client_env(d, transport))  # fmt: skip
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
             f"Requests of {res['request_mib']} MiB, 4 processes, file per process.", "",
             "| mode | op | direct MiB/s | forwarded MiB/s | forwarded/direct "
             "[95% bootstrap interval] | runs |", "|---|---|---|---|---|---|"]  # fmt: skip
    bw = res.get("bandwidth", [])
    for i in range(0, len(bw), 2):
        a, b = bw[i], bw[i + 1]
        low, high = ratio_interval(b["all"], a["all"])
        lines.append(f"| {a['mode']} | {a['op']} | {a['MiB_s']:.0f} | {b['MiB_s']:.0f} | "
                     f"{b['MiB_s'] / a['MiB_s']:.2f} [{low:.2f}, {high:.2f}] | "
                     f"{len(a['all'])} |")  # fmt: skip
    if "writes_in_place" in res:
        lines += [
            "",
            f"The daemon wrote {res['writes_in_place']} of its {res['write_requests']} "
            "write requests from the shared-memory ring in place (no copy out), and read "
            f"{res['reads_in_place']} of its {res['read_requests']} read requests into it; "
            f"it spliced {res.get('writes_piped', 0)} write requests' data from the client's "
            f"pipe to the file and {res.get('reads_piped', 0)} read requests' data (at least "
            "partly) from the file to the client's pipe.",
        ]
    lines += ["", "| backend | client threads | forwarded 4 KiB pwrite/s |", "|---|---|---|"]
    for r in res.get("request_rate", []):
        lines.append(f"| {r['backend']} | {r['threads']} | {r['requests_per_s']:.0f} |")
    lines += ["", "| path | open+fstat+close per s |", "|---|---|"]
    for r in res.get("meta", []):
        lines.append(f"| {r['path']} | {r['open_fstat_close_per_s']:.0f} |")
    for r in res.get("overhead", []):
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
        choices=("unix", "shm", "tcp"),
        default="unix",
        help="how clients reach the local daemon (unix)",
    )
    ap.add_argument("--request-mib", type=int, default=4, help="bandwidth request size (4)")
    ap.add_argument("--parts", default="bandwidth,meta,rate,overhead")
    ap.add_argument("--modes", default="odirect,buffered", help="bandwidth modes")
    ap.add_argument("--reps", type=int, default=None, help="bandwidth repetitions (5; quick 1)")
    ap.add_argument("--daemon-args", default="", help="more iorelayd options, one string")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    size = (64 if args.quick else 256) * MIB
    reps = args.reps or (1 if args.quick else 5)
    seconds = 1.0 if args.quick else 3.0
    work = Path(tempfile.mkdtemp(prefix="iorelay-bench-", dir="/tmp"))
    try:
        root = work / "root"
        root.mkdir()
        res: dict = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(),
                     "command": "python bench/datapath.py" + (" --quick" if args.quick else "")
                     + f" --transport {args.transport} --request-mib {args.request_mib}"
                     + f" --parts {args.parts} --modes {args.modes}"
                     + (f" --reps {args.reps}" if args.reps else "")
                     + (f" --daemon-args '{args.daemon_args}'" if args.daemon_args else ""),
                     "request_mib": args.request_mib, "cpus": os.cpu_count()}  # fmt: skip
        res["dd"] = dd_direct(str(root), size)
        with LocalDaemons(1, root, "/iorelay-bench", work / "w",
                          extra_args=args.daemon_args.split()) as d:  # fmt: skip
            if "bandwidth" in parts:
                res["bandwidth"] = bandwidth_rows(root, d, size, reps, args.transport,
                                                  args.request_mib * MIB,
                                                  args.modes.split(","))  # fmt: skip
                s = query_stats(d.addresses("tcp")[0], d.credential_file)
                res["write_requests"] = s["total"]["by_family"]["write"]["requests"]
                res["writes_in_place"] = s["connections_shm_writes_in_place"]
                res["read_requests"] = s["total"]["by_family"]["read"]["requests"]
                res["reads_in_place"] = s["connections_shm_reads_in_place"]
                res["writes_piped"] = s["connections_shm_writes_piped"]
                res["reads_piped"] = s["connections_shm_reads_piped"]
            if "meta" in parts:
                res["meta"] = meta_rows(root, d, seconds, args.transport)
        if "rate" in parts:
            res["request_rate"] = request_rate_rows(work, seconds, args.transport)
        if "overhead" in parts:
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
