"""The live pool on the testbed: concurrent jobs on the compute hosts share the two I/O-node hosts
(ion1, ion2) through `iorelay pool start --testbed` (daemons over the testbed's ssh, maps on its
GlusterFS mount), each job joining with `iorelay run --pool` and running fio through srun.

One run: a fresh pool with one policy, the mix's jobs join in order (each waits for a start file
after its join, so every job's allocation is final before any I/O), then all start at once and
run fio for --runtime seconds (time_based). A job's bandwidth is its bytes / its runtime; the
global bandwidth is all bytes / the longest runtime. CPU load (load average, and the machine's
busy share from /proc/stat during the run) and the bytes through the I/O nodes' links (tc) are
recorded with every run.

  --mode compare   policies (knapsack, static) alternating, --reps each
  --mode alloc     every allocation of the mix forced (each job's values name one option)
  --mode isolated  each job alone at each option (the values the knapsack is fed)
Every run is a JSON line of OUT/runs.jsonl; `--summary` prints the tables from it.

  flock -w 3600 /tmp/testbed-measure.lock .venv/bin/python bench/pool_testbed.py \\
      --mode compare --mix main --reps 5 --runtime 20 --out bench/results/pool-testbed
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iorelay.credential import create_credential
from iorelay.testbed import cluster
from iorelay.testbed.net import link_bytes
from iorelay.testbed.plan import SHARED_PATH
from iorelay.testbed.state import State

REPO = Path(__file__).resolve().parents[1]

IORELAY = [sys.executable, "-m", "iorelay"]
SLURM_CONF = "/run/iorelay-testbed/slurm/slurm.conf"
OPTIONS = (0, 1, 2)
MiB = 1 << 20


@dataclass(frozen=True)
class JobSpec:
    """A job of a mix: its compute hosts (one srun task each), fio's arguments per task, the
    nodes it declares (static's weight) and its default values (MiB/s at 0, 1, 2 I/O nodes)."""

    name: str
    hosts: tuple[str, ...]
    fio: str  # fio arguments; {root} is the job's root, {task} its task's index
    values: dict[int, float]
    prepare_mib: int = 0  # files to lay out beforehand, per fio process (readers)
    presize: int = 0  # the shared files' size, set beforehand (a short file is laid out again)
    procs: int = 1
    shared_files: tuple[str, ...] = ("shared.dat",)  # the files presize applies to

    @property
    def compute_nodes(self) -> int:
        return len(self.hosts)


def _strided(name: str, host: str) -> JobSpec:
    procs, bs = 8, 8192
    return JobSpec(
        name, (host,),
        f"--name={name} --filename={{root}}/shared.dat --ioengine=psync --direct=1 "
        f"--rw=write:{(procs - 1) * bs} --bs={bs} --numjobs={procs} --offset_increment={bs} "
        f"--size={64 * procs * bs * 16}",
        {0: 3.6, 1: 19.4, 2: 26.9}, procs=procs, presize=64 * procs * bs * 16 + procs * bs,
    )  # fmt: skip


def _strided_2f(name: str, host: str) -> JobSpec:
    """8 processes as two groups of 4, each group 1D-strided 8 KiB writes to its own shared file:
    the files f.dat and b.dat hash to different daemons (file-hash placement), so unlike
    _strided's one file, a second I/O node can take half the job."""
    procs, bs = 4, 8192
    size = 64 * procs * bs * 16
    return JobSpec(
        name, (host,),
        f"--ioengine=psync --direct=1 --rw=write:{(procs - 1) * bs} --bs={bs} "
        f"--numjobs={procs} --offset_increment={bs} --size={size} "
        f"--name={name}-f --filename={{root}}/f.dat --name={name}-b --filename={{root}}/b.dat",
        {0: 3.6, 1: 19.4, 2: 26.9}, procs=2 * procs, presize=size + procs * bs,
        shared_files=("f.dat", "b.dat"),
    )  # fmt: skip


def _reader(name: str, hosts: tuple[str, ...]) -> JobSpec:
    """4 processes per host, each reading its own 8 MiB file in 8 KiB requests."""
    return JobSpec(
        name, hosts,
        f"--name={name} --directory={{root}} --filename_format=r.{{task}}.\\$jobnum "
        "--ioengine=psync --direct=1 --rw=read --bs=8k --numjobs=4 --size=8m",
        {0: 11.1, 1: 3.0, 2: 4.6}, prepare_mib=8, procs=4,
    )  # fmt: skip


# Default values: the medians of docs/testbed.md's 16-rank table (0, 1, 2 I/O nodes), until
# --values-from gives the isolated runs of these very jobs.
MIXES: dict[str, list[JobSpec]] = {
    "main": [
        _strided("strided-w8k", "node1"),
        _reader("contig-r8k", ("node2", "node3")),
        JobSpec(
            "contig-w1m",
            ("node3",),
            "--name=contig-w1m --directory={root} --filename_format=w.\\$jobnum "
            "--ioengine=psync --direct=1 --rw=write --bs=1m --numjobs=2 --size=64m",
            {0: 23.4, 1: 35.2, 2: 35.1},
            procs=2,
        ),
    ],
    # the mix chosen from isolated runs of 20 s (bench/results/pool-testbed-split/plan.md): the
    # reader, largest by nodes, loses through an I/O node, so static's node for it is wasted,
    # while each strided writer gains about 4x from one
    "split": [
        _strided("strided-w8k", "node1"),
        _reader("contig-r8k", ("node2", "node3")),
        _strided_2f("strided-2f", "node3"),
    ],
    # two copies of the strided job on two hosts: static and the knapsack both give each one
    # I/O node (its one shared file is on one daemon, so a second one cannot help): the null check
    "null": [_strided("strided-w8k", "node1"), _strided("strided-w8k-b", "node2")],
}


def _cpu_ticks() -> tuple[int, int]:
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    idle = vals[3] + vals[4]
    return sum(vals) - idle, sum(vals)


def _ion_bytes() -> dict[str, dict[str, int]]:
    state = State.load()
    if state is None:
        raise SystemExit("no testbed is up")
    return {h.name: link_bytes(h) for h in cluster.hosts_of(state) if h.role == "ionode"}


def _job_script(spec: JobSpec, root: Path, go: Path, out: Path, runtime: int) -> str:
    """The job's command under `iorelay run --pool`: waits for the start file, then srun's one
    task per host runs fio with the interposer (LD_PRELOAD is passed to fio, not to srun)."""
    fio = spec.fio.format(root=root, task="$SLURM_PROCID")
    # fio's job options before the first --name are global: a mix's job of two sections
    # (_strided_2f) runs both time_based (after its last --name they would be that section's)
    task = (
        f"exec fio --time_based --runtime={runtime} --group_reporting --output-format=json "
        f"--output={out}/{spec.name}.$SLURM_PROCID.json {fio}"
    )
    hosts = ",".join(spec.hosts)
    return (
        f"while [ ! -e {go} ]; do sleep 0.02; done; P=$LD_PRELOAD; unset LD_PRELOAD; "
        f"exec srun --quiet -N{len(spec.hosts)} -n{len(spec.hosts)} -w {hosts} "
        f'env LD_PRELOAD="$P" sh -c {shlex.quote(task)}'
    )


def _values_arg(values: dict[int, float]) -> str:
    return ",".join(f"{k}={v:g}" for k, v in sorted(values.items()))


def _wait_text(path: Path, text: str, timeout_s: float, procs: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return
        for p in procs:
            if p.poll() is not None and p.returncode != 0:
                raise RuntimeError(f"{p.args[-1][:60]}... exited {p.returncode}")
        time.sleep(0.05)
    raise RuntimeError(f"{path}: no {text!r} within {timeout_s:g} s")


def run_once(
    work: Path, tag: str, mix: list[JobSpec], policy: str, values: dict[str, dict[int, float]],
    runtime: int,
) -> dict[str, Any]:  # fmt: skip
    """One run of the mix under policy; its record."""
    shared = SHARED_PATH / "pool-bench"
    local = work / tag
    local.mkdir(parents=True)
    out = shared / "out" / work.name / tag  # work.name: this invocation's stamp
    out.mkdir(parents=True)
    go = local / "GO"
    env = {**os.environ, "SLURM_CONF": SLURM_CONF, "PYTHONPATH": str(REPO / "python")}
    pool_dir = local / f"pool-{tag}"  # its name names its maps' directory on GlusterFS
    pool_log = open(local / "pool.log", "w")  # noqa: SIM115 (the pool's whole life)
    pool = subprocess.Popen(
        [*IORELAY, "pool", "start", str(pool_dir), "--testbed", "--options", "0,1,2",
         "--policy", policy, "--min-interval", "0", "--lease", "30"],
        stdout=pool_log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )  # fmt: skip
    jobs: list[subprocess.Popen] = []
    try:
        deadline = time.monotonic() + 30
        while not (pool_dir / "pool.sock").exists():
            if pool.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"pool did not start: {(local / 'pool.log').read_text()}")
            time.sleep(0.1)
        for spec in mix:
            root = shared / "roots" / spec.name
            key = create_credential(local / f"{spec.name}.key")
            cmd = [*IORELAY, "run", "--pool", str(pool_dir), "--job", spec.name,
                   "--secret-file", str(key), "--job-root", str(root),
                   "--values", _values_arg(values[spec.name]),
                   "--compute-nodes", str(spec.compute_nodes), "--timeout", str(runtime + 120),
                   "--", "sh", "-c", _job_script(spec, root, go, out, runtime)]  # fmt: skip
            log = open(local / f"{spec.name}.log", "w")  # noqa: SIM115 (the job's life)
            jobs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env))
            # joined (and, given no I/O node, left again): its next step is the start file
            _wait_text(local / f"{spec.name}.log", f"job {spec.name}:", 60, jobs)
        time.sleep(0.5)
        status = json.loads(subprocess.run(
            [*IORELAY, "pool", "status", str(pool_dir), "--json"], env=env, capture_output=True,
            text=True, check=True, timeout=30).stdout)  # fmt: skip
        held = {j["name"]: j["hosts"] for j in status["jobs"]}
        alloc = {s.name: len(held.get(s.name, [])) for s in mix}
        ion_before, cpu_before, load_before = _ion_bytes(), _cpu_ticks(), os.getloadavg()
        t0 = time.time()
        go.touch()
        codes = [p.wait(timeout=runtime + 180) for p in jobs]
        wall = time.time() - t0
        ion_after, cpu_after, load_after = _ion_bytes(), _cpu_ticks(), os.getloadavg()
    finally:
        for p in jobs:
            if p.poll() is None:
                p.kill()
        subprocess.run([*IORELAY, "pool", "stop", str(pool_dir)], env=env, capture_output=True,
                       timeout=30, check=False)  # fmt: skip
        try:
            pool.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(pool.pid, 9)
        pool_log.close()
    per_job = {}
    for spec, code in zip(mix, codes, strict=True):
        tasks = [json.loads(p.read_text()) for p in sorted(out.glob(f"{spec.name}.*.json"))]
        io_bytes = runtime_ms = 0
        for t in tasks:
            j = t["jobs"][0]
            d = j["read"] if j["read"]["io_bytes"] else j["write"]
            io_bytes += d["io_bytes"]
            runtime_ms = max(runtime_ms, d["runtime"])
        ok = (
            code == 0
            and len(tasks) == len(spec.hosts)
            and all(t["jobs"][0]["error"] == 0 for t in tasks)
        )
        per_job[spec.name] = {
            "ionodes": alloc[spec.name], "ok": ok, "exit": code, "bytes": io_bytes,
            "runtime_s": runtime_ms / 1000,
            "mib_s": io_bytes / MiB / (runtime_ms / 1000) if runtime_ms else 0.0,
        }  # fmt: skip
    decisions = pool_dir / "decisions.jsonl"
    longest = max(j["runtime_s"] for j in per_job.values()) or 1.0
    busy = (cpu_after[0] - cpu_before[0]) / max(1, cpu_after[1] - cpu_before[1])
    ion_mib = {h: (ion_after[h]["received"] - ion_before[h]["received"]) / MiB for h in ion_before}
    forwarded = sum(j["bytes"] for j in per_job.values() if j["ionodes"]) / MiB
    return {
        "tag": tag, "policy": policy, "allocation": alloc, "jobs": per_job,
        "global_mib_s": sum(j["bytes"] for j in per_job.values()) / MiB / longest,
        "ok": all(j["ok"] for j in per_job.values()), "wall_s": wall,
        "values": {k: {str(o): v for o, v in vs.items()} for k, vs in values.items()},
        "load_before": load_before, "load_after": load_after, "cpu_busy": busy,
        "ion_link_received_mib": ion_mib, "forwarded_mib": forwarded,
        "decisions": [json.loads(x) for x in decisions.read_text().splitlines()],
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
    }  # fmt: skip


def prepare(mix: list[JobSpec]) -> None:
    """Lays out the readers' files once (direct, through the login node's mount)."""
    for spec in mix:
        root = SHARED_PATH / "pool-bench" / "roots" / spec.name
        root.mkdir(parents=True, exist_ok=True)
        for name in spec.shared_files if spec.presize else ():
            with open(root / name, "ab"):
                pass
            os.truncate(root / name, spec.presize)
        for task in range(len(spec.hosts)):
            for n in range(spec.procs if spec.prepare_mib else 0):
                f = root / f"r.{task}.{n}"
                if not f.exists() or f.stat().st_size < spec.prepare_mib * MiB:
                    f.write_bytes(os.urandom(spec.prepare_mib * MiB))


def forced(name: str, k: int) -> dict[int, float]:
    """Values under which the knapsack gives the job option k (and only k) when it fits."""
    return {0: 1.0} if k == 0 else {0: 0.0, k: 1.0}


def allocations(n: int, pool: int = 2) -> list[tuple[int, ...]]:
    return [a for a in itertools.product(OPTIONS, repeat=n) if sum(a) <= pool]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=("compare", "alloc", "isolated"), default="compare")
    ap.add_argument("--mix", choices=sorted(MIXES), default="main")
    ap.add_argument("--policies", default="knapsack,static")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=20, help="fio's seconds per run (20)")
    ap.add_argument("--values-from", type=Path, help="runs.jsonl of --mode isolated: medians")
    ap.add_argument("--only", help="alloc: these allocations only, e.g. 110,101")
    ap.add_argument("--jobs", help="isolated: these jobs of the mix only, e.g. strided-2f")
    ap.add_argument("--out", type=Path, default=REPO / "bench/results/pool-testbed")
    ap.add_argument("--work", type=Path, default=Path("/tmp/pool-testbed"))
    ap.add_argument("--summary", action="store_true", help="OUT/summary.md from OUT/runs.jsonl")
    args = ap.parse_args(argv)
    if args.summary:
        text = summary([json.loads(x) for x in (args.out / "runs.jsonl").read_text().splitlines()])
        (args.out / "summary.md").write_text(text)
        print(text, end="")
        return 0
    mix = MIXES[args.mix]
    values = {s.name: dict(s.values) for s in mix}
    if args.values_from:
        values = isolated_values(args.values_from, values)
    prepare(mix)
    args.out.mkdir(parents=True, exist_ok=True)
    args.work.mkdir(parents=True, exist_ok=True)
    plan: list[tuple[str, list[JobSpec], str, dict[str, dict[int, float]]]] = []
    stamp = time.strftime("%H%M%S")
    for rep in range(args.reps):
        if args.mode == "compare":
            for policy in args.policies.split(","):
                plan.append((f"{args.mix}-{policy}-{rep}", mix, policy, values))
        elif args.mode == "alloc":
            allocs = allocations(len(mix))
            if args.only:
                allocs = [tuple(int(c) for c in a) for a in args.only.split(",")]
            for a in allocs:
                v = {s.name: forced(s.name, k) for s, k in zip(mix, a, strict=True)}
                plan.append((f"{args.mix}-alloc{''.join(map(str, a))}-{rep}", mix, "knapsack", v))
        else:
            names = args.jobs.split(",") if args.jobs else [s.name for s in mix]
            for spec in (s for s in mix if s.name in names):
                for k in OPTIONS:
                    plan.append((f"iso-{spec.name}-{k}-{rep}", [spec], "knapsack",
                                 {spec.name: forced(spec.name, k)}))  # fmt: skip
    for tag, jobs, policy, vals in plan:
        rec = run_once(args.work / stamp, tag, jobs, policy, vals, args.runtime)
        rec["mix"], rec["mode"] = args.mix, args.mode
        with open(args.out / "runs.jsonl", "a") as f:
            f.write(json.dumps(rec) + "\n")
        jobs_txt = ", ".join(
            f"{n} {j['ionodes']}:{j['mib_s']:.1f}{'' if j['ok'] else '!'}"
            for n, j in rec["jobs"].items()
        )
        print(f"{tag}: global {rec['global_mib_s']:.1f} MiB/s; {jobs_txt}; load "
              f"{rec['load_before'][0]:.1f}, busy {rec['cpu_busy']:.2f}; ion MiB "
              f"{rec['ion_link_received_mib']}", flush=True)  # fmt: skip
    return 0


Values = dict[str, dict[int, float]]


def isolated_values(path: Path, default: Values) -> Values:
    """Each job's median MiB/s alone at each option, from --mode isolated's runs."""
    runs: dict[tuple[str, int], list[float]] = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("mode") != "isolated" or not rec["ok"]:
            continue
        for name, j in rec["jobs"].items():
            runs.setdefault((name, j["ionodes"]), []).append(j["mib_s"])
    out = {}
    for name, vals in default.items():
        like = name.removesuffix("-b")  # the null mix's second copy: the same job's values
        got = {k: statistics.median(runs[(like, k)]) for k in OPTIONS if (like, k) in runs}
        out[name] = got if len(got) == len(OPTIONS) else vals
    return out


def _alloc_text(alloc: dict[str, int]) -> str:
    return ", ".join(f"{n} {k}" for n, k in alloc.items())


def summary(runs: list[dict[str, Any]]) -> str:
    """The tables of docs/arbitration.md ("The live pool on the testbed") from the runs."""
    med = statistics.median
    lines = ["# The live pool on the testbed (bench/pool_testbed.py)", ""]
    iso = [r for r in runs if r["mode"] == "isolated" and r["ok"]]
    if iso:
        lines += ["## Each job alone (MiB/s, median (range); the values the knapsack is fed)", "",
                  "| job | 0 | 1 | 2 | runs |", "|---|---|---|---|---|"]  # fmt: skip
        by: dict[tuple[str, int], list[float]] = {}
        for r in iso:
            for n, j in r["jobs"].items():
                by.setdefault((n, j["ionodes"]), []).append(j["mib_s"])
        for n in dict.fromkeys(n for n, _ in by):
            cells = [
                f"{med(by[(n, k)]):.1f} ({min(by[(n, k)]):.1f}-{max(by[(n, k)]):.1f})"
                if (n, k) in by
                else "-"
                for k in OPTIONS
            ]
            lines.append(f"| {n} | {' | '.join(cells)} | {len(by.get((n, 0), []))} |")
        lines.append("")
    for mix in dict.fromkeys(r["mix"] for r in runs if r["mode"] == "compare"):
        cmp_ = [r for r in runs if r["mode"] == "compare" and r["mix"] == mix]
        policies = list(dict.fromkeys(r["policy"] for r in cmp_))
        names = list(cmp_[0]["jobs"])
        lines += [f"## Mix {mix}: {' vs '.join(policies)}, median of the repetitions", "",
                  "| policy | runs (failed) | allocation | global MiB/s (runs) | "
                  + " | ".join(names) + " | load average | busy |",
                  "|---" * (6 + len(names)) + "|"]  # fmt: skip
        medians: dict[str, dict[str, float]] = {}
        for pol in policies:
            rs = [r for r in cmp_ if r["policy"] == pol and r["ok"]]
            failed = sum(1 for r in cmp_ if r["policy"] == pol and not r["ok"])
            if not rs:
                continue
            allocs = {_alloc_text(r["allocation"]) for r in rs}
            medians[pol] = {n: med(r["jobs"][n]["mib_s"] for r in rs) for n in names}
            medians[pol]["global"] = med(r["global_mib_s"] for r in rs)
            loads = [r["load_before"][0] for r in rs]
            lines.append(
                f"| {pol} | {len(rs)} ({failed}) | {'; '.join(sorted(allocs))} | "
                f"{medians[pol]['global']:.1f} ("
                + ", ".join(f"{r['global_mib_s']:.1f}" for r in rs) + ") | "
                + " | ".join(f"{medians[pol][n]:.1f}" for n in names)
                + f" | {min(loads):.1f}-{max(loads):.1f} | {med(r['cpu_busy'] for r in rs):.2f} |"
            )  # fmt: skip
        if "knapsack" in medians and "static" in medians:
            k, st = medians["knapsack"], medians["static"]
            lines += ["", f"knapsack / static: global {k['global'] / st['global']:.2f}; per job "
                      + ", ".join(f"{n} {k[n] / st[n]:.2f}" for n in names)]  # fmt: skip
        lines.append("")
    for mix in dict.fromkeys(r["mix"] for r in runs if r["mode"] == "alloc"):
        alloc_runs = [r for r in runs if r["mode"] == "alloc" and r["mix"] == mix and r["ok"]]
        lines += [f"## Every allocation of the {mix} mix (forced), global MiB/s", "",
                  "| allocation | runs | global MiB/s |", "|---|---|---|"]  # fmt: skip
        by_alloc: dict[str, list[float]] = {}
        for r in alloc_runs + [r for r in runs if r["mode"] == "compare" and r["mix"] == mix
                               and r["ok"]]:  # fmt: skip
            by_alloc.setdefault(_alloc_text(r["allocation"]), []).append(r["global_mib_s"])
        ranked = sorted(by_alloc.items(), key=lambda kv: -med(kv[1]))
        for a, g in ranked:
            lines.append(f"| {a} | {len(g)} | {med(g):.1f} |")
        lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
