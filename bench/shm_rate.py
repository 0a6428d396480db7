#!/usr/bin/env python3
"""4 KiB requests per second per daemon over shared memory and over the Unix socket, alternating.

One iorelayd (null, then POSIX backend; its default 2 event-loop threads and 4 workers) and one
client process of T threads (bench/request_rate: each thread pwrites 4 KiB through the C API on
its own pooled connection). Each repetition runs every row, the order rotating from one
repetition to the next (shm, unix, then unix, shm, ...); the table has the medians. With
--spin-ab, three more rows join the rotation: each transport with the client's spin for replies
off (IORELAY_SPIN_US=0: the client sleeps at once), and shared memory to a second daemon whose
event loops poll the rings for 20 us after a request (--shm-poll-us 20). With --adaptive-spin,
one more row over shared memory whose client spins only while the machine's runnable threads do
not outnumber its CPUs (IORELAY_SPIN_ADAPT=on). With --baseline-client
BUILD, one more row runs the client of another build tree (its bench/request_rate and the
libiorelay it links) over shared memory to the same daemon, in the same rotation: an A/B of a
client change. The daemons' counters, read over TCP before and after each run, check that the
run really went through the relay and through the transport it names: pwrite requests counted
by the daemon, connections moved to shared memory.
Beside the rate, the CPU time per request of the daemon (from /proc/PID/stat) and of the client
process (its rusage), which a machine shared with other work disturbs less than the rate,
and their sleeps per request (voluntary context switches: the daemon's threads from
/proc/PID/task/*/status, the client's from its rusage), the wake-ups a request costs.
With --tcp, one more row over TCP (frames sealed, as between hosts). With --floor, one more row
runs bench/wakeup_floor (the rings' sleep/wake protocol alone, 2 loops, no spin) in the rotation:
the CPU per request no change of the transport can go below without spinning. With
--ab-daemon-args ARGS, every row has a twin served by a second daemon started with ARGS, in the
same rotation: an A/B of a daemon option (with --ab-daemon-binary IORELAYD, that daemon is
another build's: an A/B of a daemon change). With --ab-build BUILD, every row has a twin whose
daemon is BUILD's iorelayd and whose client is BUILD's bench/request_rate (and libiorelay), in
the same rotation: an A/B of two builds, both sides of the connection. --daemon-args goes to
every daemon (`--delay-us 200`: slow backend calls).

    .venv/bin/python bench/shm_rate.py [--threads 8] [--seconds 3] [--runs 5] [--spin-ab]
        [--adaptive-spin] [--tcp] [--floor] [--ab-daemon-args ARGS] [--ab-daemon-binary IORELAYD]
        [--ab-build BUILD] [--daemon-args ARGS]
        [--baseline-client BUILD] [--backends null,posix] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from iorelay import paths
from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]

TIMEOUT_S = 120


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def sleeps(pid: int) -> int:
    """Voluntary context switches of all of `pid`'s threads (each is a sleep, and a wake-up)."""
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        with contextlib.suppress(OSError):
            for line in status.read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    total += int(line.split()[1])
    return total


def children_sleeps() -> int:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_nvcsw


def counters(d: LocalDaemons) -> dict:
    s = query_stats(d.addresses("tcp")[0], d.credential_file)
    return {
        "pwrite": s["total"]["by_op"].get("pwrite", 0),
        "shm_attached": s["connections_shm_attached"],
        "accepted": s["connections_accepted"],
    }


# The rows: name → IORELAY_SHM, IORELAY_SPIN_US (None: the client's default), the daemon, the
# client (this build's, or --baseline-client's). (A row named "ROW, ab" is ROW served by the
# daemon of --ab-daemon-args or --ab-build, and with --ab-build by its client.)
VARIANTS = {
    "tcp": ("off", None, "default", "this"),
    "shm": ("on", None, "default", "this"),
    "unix": ("off", None, "default", "this"),
    "shm, no spin": ("on", "0", "default", "this"),
    "unix, no spin": ("off", "0", "default", "this"),
    "shm, poll": ("on", None, "poll", "this"),
    "shm, baseline client": ("on", None, "default", "baseline"),
    "shm, adaptive spin": ("on", None, "default", "this"),
}
FLOOR = "floor (wakeup_floor, no spin)"
SPIN_AB = ["shm, no spin", "unix, no spin", "shm, poll"]
# Rows whose client sets IORELAY_SPIN_ADAPT=on (--adaptive-spin): no spin while runnable threads
# outnumber the CPUs.
ADAPTIVE = ["shm, adaptive spin"]
# The daemons of a backend: name → extra arguments.
DAEMONS = {"default": [], "poll": ["--shm-poll-us", "20"]}


AB_BUILD_CLIENT = "ab build"


def variant(name: str, ab_build: bool = False) -> tuple[str, str | None, str, str]:
    if name.endswith(", ab"):
        shm, spin, _, which = VARIANTS[name.removesuffix(", ab")]
        return shm, spin, "ab", AB_BUILD_CLIENT if ab_build else which
    return VARIANTS[name]


def floor_run(threads: int, seconds: float) -> dict:
    out = subprocess.run(
        [str(paths.find("wakeup_floor")), str(threads), "2", str(seconds)],
        capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
    )  # fmt: skip
    r = json.loads(out.stdout)
    return {**r, "daemon_sleeps_per_request": 0.0, "client_sleeps_per_request": 0.0,
            "load": os.getloadavg()[0]}  # fmt: skip


def one_run(
    d: LocalDaemons, transport: str, threads: int, seconds: float, client: Path, ab_build: bool
) -> dict:
    tcp = transport.removesuffix(", ab") == "tcp"
    env = {k: v for k, v in d.env("tcp" if tcp else "unix").items() if k != "LD_PRELOAD"}
    env["IORELAY_SHM"], spin, _, which = variant(transport, ab_build)
    if which in ("baseline", AB_BUILD_CLIENT):  # (its build's libiorelay, whatever LD_LIBRARY_PATH)
        lib = client.parent.parent / "src" / "client"
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(lib), os.environ.get("LD_LIBRARY_PATH", "")) if p
        )
    env.pop("IORELAY_SPIN_US", None)
    if spin is not None:
        env["IORELAY_SPIN_US"] = spin
    env["IORELAY_SPIN_ADAPT"] = "on" if transport in ADAPTIVE else "off"
    before = counters(d)
    pid = d.daemons[0].pid
    daemon_cpu, client_cpu = cpu_seconds(pid), children_cpu_seconds()
    daemon_sleeps, client_sleeps = sleeps(pid), children_sleeps()
    out = subprocess.run(
        [str(client), "/iorelay-bench/rate.dat", str(threads), str(seconds), "4096"],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
    )  # fmt: skip
    r = json.loads(out.stdout)
    n = max(1, r["requests"])
    r["daemon_cpu_us_per_request"] = (cpu_seconds(pid) - daemon_cpu) * 1e6 / n
    r["client_cpu_us_per_request"] = (children_cpu_seconds() - client_cpu) * 1e6 / n
    r["daemon_sleeps_per_request"] = (sleeps(pid) - daemon_sleeps) / n
    r["client_sleeps_per_request"] = (children_sleeps() - client_sleeps) / n
    r["load"] = os.getloadavg()[0]
    after = counters(d)
    relayed = after["pwrite"] - before["pwrite"]
    moved = after["shm_attached"] - before["shm_attached"]
    conns = after["accepted"] - before["accepted"] - 1  # (the stats query's own connection)
    if relayed < r["requests"]:
        raise RuntimeError(f"the daemon counted {relayed} pwrites for {r['requests']} requests")
    if (variant(transport)[0] == "on") != (moved == conns and moved > 0):
        raise RuntimeError(f"{transport}: {moved} of {conns} connections on shared memory")
    return {**r, "daemon_pwrites": relayed, "connections": conns, "shm_connections": moved}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--spin-ab",
        action="store_true",
        help="also rows with the client's spin off (IORELAY_SPIN_US=0), and the loops' poll",
    )
    ap.add_argument(
        "--baseline-client",
        type=Path,
        help="a build tree whose bench/request_rate runs one more row, over shared memory",
    )
    ap.add_argument("--backends", default="null,posix", help="the daemons' backends, in order")
    ap.add_argument(
        "--adaptive-spin",
        action="store_true",
        help="also a row over shared memory with IORELAY_SPIN_ADAPT=on",
    )
    ap.add_argument("--tcp", action="store_true", help="also a row over TCP (sealed frames)")
    ap.add_argument("--floor", action="store_true", help="also a row of bench/wakeup_floor")
    ap.add_argument(
        "--rows",
        help="only these rows, separated by ';' (e.g. 'shm;shm, no spin'), before their twins",
    )
    ap.add_argument(
        "--ab-daemon-args",
        help="a twin of every row, served by a second daemon started with these arguments",
    )
    ap.add_argument(
        "--ab-daemon-binary",
        type=Path,
        help="the second daemon of --ab-daemon-args runs this iorelayd (another build's)",
    )
    ap.add_argument(
        "--ab-build",
        type=Path,
        help="a twin of every row, served by this build tree's iorelayd to its request_rate",
    )
    ap.add_argument(
        "--daemon-args",
        default="",
        help="arguments every daemon is started with (e.g. '--delay-us 200': slow calls)",
    )
    ap.add_argument(
        "--out",
        help="default: bench/results/shm-rate.md (shm-rate-baseline.md with --baseline-client)",
    )
    args = ap.parse_args()
    if args.out is None:
        name = "shm-rate-baseline.md" if args.baseline_client else "shm-rate.md"
        args.out = str(REPO / "bench" / "results" / name)
    clients = {"this": paths.find("request_rate")}
    if args.baseline_client is not None:
        clients["baseline"] = args.baseline_client.resolve() / "bench" / "request_rate"
        if not clients["baseline"].is_file():
            ap.error(f"--baseline-client: no {clients['baseline']}")
    if args.ab_build is not None and args.ab_daemon_binary is not None:
        ap.error("--ab-build names the daemon: give it or --ab-daemon-binary, not both")
    ab_build = args.ab_build is not None
    ab_daemon = args.ab_daemon_binary
    if ab_build:
        clients[AB_BUILD_CLIENT] = args.ab_build.resolve() / "bench" / "request_rate"
        if not clients[AB_BUILD_CLIENT].is_file():
            ap.error(f"--ab-build: no {clients[AB_BUILD_CLIENT]}")
        ab_daemon = paths.find("iorelayd", environ={paths.BUILD_DIR_ENV: str(args.ab_build)})
    work = Path(tempfile.mkdtemp(prefix="iorelay-shm-rate-", dir="/tmp"))
    res: dict = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(),
                 "cpus": os.cpu_count(), "rows": [],
                 "command": f"python bench/shm_rate.py --threads {args.threads} "
                            f"--seconds {args.seconds:g} --runs {args.runs}"
                            + (" --spin-ab" if args.spin_ab else "")
                            + (" --adaptive-spin" if args.adaptive_spin else "")
                            + (" --tcp" if args.tcp else "")
                            + (" --floor" if args.floor else "")
                            + (f" --rows '{args.rows}'" if args.rows else "")
                            + (f" --ab-daemon-args='{args.ab_daemon_args}'"
                               if args.ab_daemon_args is not None else "")
                            + (f" --ab-daemon-binary {args.ab_daemon_binary}"
                               if args.ab_daemon_binary else "")
                            + (f" --ab-build {args.ab_build}" if ab_build else "")
                            + (f" --daemon-args='{args.daemon_args}'"
                               if args.daemon_args else "")
                            + (f" --backends {args.backends}"
                               if args.backends != "null,posix" else "")
                            + (f" --baseline-client {args.baseline_client}"
                               if args.baseline_client else "")}  # fmt: skip
    try:
        for backend in args.backends.split(","):
            root = work / f"root-{backend}"
            root.mkdir()
            names = ["shm", "unix", *(SPIN_AB if args.spin_ab else []),
                     *(ADAPTIVE if args.adaptive_spin else []),
                     *(["tcp"] if args.tcp else [])]  # fmt: skip
            if args.baseline_client is not None:
                names.append("shm, baseline client")
            if args.rows:
                names = [n for n in args.rows.split(";") if n in VARIANTS]
            common = args.daemon_args.split()
            daemon_args = {key: [*common, *extra] for key, extra in DAEMONS.items()}
            if args.ab_daemon_args is not None or args.ab_daemon_binary is not None or ab_build:
                daemon_args["ab"] = [*common, *(args.ab_daemon_args or "").split()]
                names = [n for name in names for n in (name, f"{name}, ab")]
            if args.floor:
                names.append(FLOOR)
            with contextlib.ExitStack() as stack:
                daemons = {key: stack.enter_context(
                               LocalDaemons(1, root, "/iorelay-bench", work / f"w-{backend}-{i}",
                                            backend=backend, extra_args=extra,
                                            daemon_binary=ab_daemon
                                            if key == "ab" else None))
                           for i, (key, extra) in enumerate(daemon_args.items())
                           if any(variant(n)[2] == key for n in names if n != FLOOR)}  # fmt: skip
                runs: dict[str, list[dict]] = {n: [] for n in names}
                for i in range(args.runs):
                    order = names[i % len(names) :] + names[: i % len(names)]
                    for transport in order:
                        if transport == FLOOR:
                            runs[transport].append(floor_run(args.threads, args.seconds))
                            continue
                        d = daemons[variant(transport)[2]]
                        client = clients[variant(transport, ab_build)[3]]
                        runs[transport].append(
                            one_run(d, transport, args.threads, args.seconds, client, ab_build)
                        )
                for transport, rs in runs.items():
                    rates = [r["requests_per_s"] for r in rs]
                    res["rows"].append({"backend": backend, "transport": transport,
                                        "threads": args.threads,
                                        "median_requests_per_s": statistics.median(rates),
                                        "daemon_cpu_us": statistics.median(
                                            r["daemon_cpu_us_per_request"] for r in rs),
                                        "client_cpu_us": statistics.median(
                                            r["client_cpu_us_per_request"] for r in rs),
                                        "daemon_sleeps": statistics.median(
                                            r["daemon_sleeps_per_request"] for r in rs),
                                        "client_sleeps": statistics.median(
                                            r["client_sleeps_per_request"] for r in rs),
                                        "load": [round(r["load"], 1) for r in rs],
                                        "all": rates, "runs": rs})  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [f"## 4 KiB pwrite requests per second, one daemon, {res['date']} on {res['host']} "
             f"({res['cpus']} CPUs)", "", f"Command: `{res['command']}`", "",
             "Layout: one iorelayd (2 event-loop threads, 4 workers) and one client process of "
             f"{args.threads} threads, each on its own pooled connection; same host."
             + (" The daemon of the 'poll' row is a second one, started with "
                "--shm-poll-us 20 (each daemon idle while the other's rows run)."
                if args.spin_ab else "")
             + (f" The 'baseline client' row runs {args.baseline_client}/bench/request_rate "
                "and its libiorelay." if args.baseline_client else "")
             + (" Rows ending ', ab' are served by a second daemon"
                + (f", {ab_daemon}," if ab_daemon else "")
                + f" started with '{args.ab_daemon_args or ''}'."
                if "ab" in daemon_args else "")
             + (f" Rows ending ', ab' run {args.ab_build}'s bench/request_rate (and "
                "libiorelay)." if ab_build else "")
             + (f" Every daemon is started with {args.daemon_args}." if args.daemon_args
                else ""), "",
             "| backend | transport | median requests/s | daemon CPU us/request | "
             "client CPU us/request | daemon sleeps/request | client sleeps/request | "
             "runs (requests/s) | load (1 min) |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in res["rows"]:
        runs_text = ", ".join(f"{v:.0f}" for v in r["all"])
        lines.append(f"| {r['backend']} | {r['transport']} | {r['median_requests_per_s']:.0f} | "
                     f"{r['daemon_cpu_us']:.1f} | {r['client_cpu_us']:.1f} | "
                     f"{r['daemon_sleeps']:.2f} | {r['client_sleeps']:.2f} | "
                     f"{runs_text} | {', '.join(f'{v:g}' for v in r['load'])} |")  # fmt: skip
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
