"""Collective MPI-IO on the testbed: the aggregator count of the rule with the measured k against
the best measured `cb_nodes`, and the advised settings against each MPI's defaults.

    .venv/bin/python bench/testbed_collective.py --mpi ompio|romio321|mpich [--reps 5]
        [--patterns P1,P2,...] [--platform testbed]
    .venv/bin/python bench/testbed_collective.py --local --mpi ompio|romio321|mpich
    .venv/bin/python bench/testbed_collective.py --report      # tables from the saved runs

Six collective write patterns, fixed before any run (PATTERNS), on the testbed's compute hosts
(one Slurm allocation of ion1 and node1-node3 per invocation; bench/testbed_mpiio.py). For each
pattern and MPI, every repetition runs these configurations in a rotated order:

- `default`: collective calls, no hints, no MCA parameters, direct on GlusterFS;
- `default-iorelay`: the same through one I/O node (ion1, iorelay's default settings);
- `cbA` for A = 1 .. the pattern's hosts: `cb_nodes=A` with `cb_config_list=*:1` and
  `romio_cb_write=enable` (ROMIO, OpenMPI's romio321 or MPICH), `io_ompio_num_aggregators=A`
  (OMPIO), direct;
- `advised-iorelay`: `iorelay hints`'s settings for the job (iorelay.collective_advice with
  the platform's measured k and 1 I/O node, kept: `--keep-ionodes`) through ion1;
- `advised`: the same job asking for 1 I/O node, with the advice's own decision whether to
  forward (iorelay.forwarding_cost): through ion1 where the platform's forwarding ladder for
  the MPI shows a significant gain at the job's call size, else direct.

The rule's count is `iorelay hints`'s count for the job direct (ionodes 0): Chaarawi &
Gabriel's ceil(bytes per call / k), one aggregator per host at most. Its `cbA` run is compared
with the best `cbA` (item "aggregator count on the testbed" of docs/collective.md).
Every run writes the pattern's bytes once, with MPI_File_sync in the timed phase; a forwarded
run whose daemon wrote fewer bytes is a failure. Rows go to bench/results/testbed-collective/
MPI.jsonl as they finish (a rerun skips the (repetition, pattern, configuration) already
there), then (--report) MPI-vs-default.csv, MPI-vs-default-iorelay.csv and MPI-cb-nodes.csv in the
schema `iorelay analyze` reads, the configuration in its `settings` column:
`iorelay analyze bench/results/testbed-collective/MPI-vs-default.csv --option settings`.

`--setting NAME=ITEM,...` runs a configuration of its own beside them (ROMIO hints, MCA
parameters, independent calls, I/O nodes), recorded in the rows like the others: the design
runs behind a rule, before it is one.

--local runs LOCAL_SETS (4 ranks on this machine, files in /var/tmp, one local iorelayd)
with `default`, `default-iorelay`, `advised-iorelay` and `advised` only, k from
platforms/local.json, into local-MPI.jsonl and local-MPI-*.csv.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import testbed_mpiio

from iorelay import collective_advice, units
from iorelay.analysis import compute, reader
from iorelay.simulate import platform_path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "results" / "testbed-collective"
COMPUTE = ["node1", "node2", "node3"]
IONODE = "ion1"
MPIS = testbed_mpiio.COMPONENT_LIBRARY  # the MPI-IO components measured, and their MPI


@dataclass(frozen=True)
class Pattern:
    name: str
    hosts: int
    ranks_per_host: int
    request: int
    segments: int  # requests per rank
    view: str = ""  # "", "vector" or "subarray"
    per_call: int = 1  # requests of a rank in one collective call

    @property
    def ranks(self) -> int:
        return self.hosts * self.ranks_per_host

    @property
    def interleaved(self) -> bool:
        # A view with several requests per call: a rank's requests lie `ranks` apart, so its
        # range in a call spans the others'.
        return bool(self.view) and self.per_call > 1

    @property
    def bytes_per_call(self) -> int:
        return self.ranks * self.per_call * self.request

    @property
    def total(self) -> int:
        return self.ranks * self.segments * self.request

    def options(self) -> list[str]:
        out = ["--spatiality", "strided", "--request", str(self.request),
               "--segments", str(self.segments), "--write", "--fsync"]  # fmt: skip
        if self.view:
            out += ["--view", self.view, "--requests-per-call", str(self.per_call)]
        return out


K = 1024
M = 1024 * K
# Fixed before the first run: sizes from 192 KiB to 6 MiB per call, no view, 1D vector and 2D
# subarray views, 2 and 3 hosts, 2 and 4 ranks per host; 2 to 8 calls per run (on the testbed a
# collective call costs ~0.3 s beyond its bytes: bench/results/collective-saturation-testbed-*).
PATTERNS = [
    Pattern("P1 strided 16K", 3, 4, 16 * K, 8),
    Pattern("P2 strided 256K", 3, 4, 256 * K, 4),
    Pattern("P3 vector 32K x8", 3, 4, 32 * K, 32, "vector", 8),
    Pattern("P4 subarray 8K x16", 3, 4, 8 * K, 64, "subarray", 16),
    Pattern("P5 strided 64K, 2 hosts", 2, 4, 64 * K, 8),
    Pattern("P6 strided 1M, 6 ranks", 3, 2, 1 * M, 2),
]
# Set B (`--set b`), fixed on 2026-12-06 before any of its runs, after the six above had been
# measured: the family where the advice should gain most over a default, calls of several MiB
# from 2-3 hosts. OMPIO's defaults gather such a call on one aggregator (as in P6), whose host
# link then carries every byte, while the advice puts one aggregator on each host; ROMIO's and
# MPICH's defaults already have one per host. B3 is an interleaved vector view. 2-4 calls.
PATTERNS_B = [
    Pattern("B1 strided 2M, 6 ranks", 3, 2, 2 * M, 4),
    Pattern("B2 strided 1M, 12 ranks", 3, 4, 1 * M, 3),
    Pattern("B3 vector 256K x8, 6 ranks", 3, 2, 256 * K, 16, "vector", 8),
    Pattern("B4 strided 4M, 2 hosts", 2, 2, 4 * M, 3),
]
# Set C (`--set c`), fixed on 2026-12-06 before any of its runs, the held-out check of the
# interleaved spread point (bench/collective_spread.py --interleaved, whose calibration pattern
# is none of these): interleaved calls only (a view, several requests per rank per call), new
# sizes, views, ranks and hosts, calls of 576 KiB to 3 MiB around the contiguous spread points
# (749 KiB to 1781 KiB), where the count's choice between 1 and one per host is closest. 3-4
# calls per run.
PATTERNS_C = [
    Pattern("C1 vector 12K x4", 3, 4, 12 * K, 16, "vector", 4),
    Pattern("C2 subarray 64K x4, 6 ranks", 3, 2, 64 * K, 12, "subarray", 4),
    Pattern("C3 vector 128K x2", 3, 4, 128 * K, 6, "vector", 2),
    Pattern("C4 subarray 32K x8, 2 hosts", 2, 4, 32 * K, 24, "subarray", 8),
]
# Set D (`--set d`), fixed on 2026-12-07 before any of its runs, the held-out check of the
# direct-or-forward rule that keeps the I/O nodes only on a significant gain of the forwarding
# ladder (iorelay.forwarding_cost, changed after set A-C's advice5 runs): 3 ranks per host (no
# earlier pattern has it), new sizes and views; calls of 288 KiB to 18 MiB, two of them near the
# ladders' 384 KiB step, where ROMIO's ladder shows the one significant gain. 2-12 calls per run.
PATTERNS_D = [
    Pattern("D1 strided 32K, 9 ranks", 3, 3, 32 * K, 12),
    Pattern("D2 vector 8K x4", 3, 4, 8 * K, 32, "vector", 4),
    Pattern("D3 subarray 128K x4, 2 hosts", 2, 3, 128 * K, 12, "subarray", 4),
    Pattern("D4 strided 512K, 9 ranks", 3, 3, 512 * K, 3),
    Pattern("D5 strided 3M, 2 hosts", 2, 3, 3 * M, 2),
    Pattern("D6 vector 48K x2, 6 ranks", 3, 2, 48 * K, 8, "vector", 2),
]
# Set E (`--set e`), fixed on 2026-12-07 before any of its runs, the held-out check of two rules
# added after the idle-k preview (bench/results/testbed-collective/idle-k.md) and a few runs of
# B3, P4, C4 and local L2 with other settings: independent calls on interleaved ranges without
# ROMIO's data sieving (romio_ds_write disable), and one aggregator below the spread point
# whatever k's count. New sizes and shapes: 1-2 MiB per rank per call on interleaved views
# (independent with k = 1 MiB), interleaved calls of 864 KiB and 2304 KiB below OMPIO's
# interleaved spread point, a contiguous 12 MiB call from 2 hosts and a 96 KiB one. 2-16 calls.
# With platforms/testbed.json's first-day k no call of set E is independent (2 MiB per rank at
# most, below MPICH's 4 MiB) and OMPIO's k counts 1 anyway: there set E is a held-out check of
# the current advice, and its `--idle-k` runs (idlek7e) are the held-out check of the two rules.
PATTERNS_E = [
    Pattern("E1 subarray 64K x16, 2 hosts", 2, 4, 64 * K, 64, "subarray", 16),
    Pattern("E2 vector 512K x4, 9 ranks", 3, 3, 512 * K, 8, "vector", 4),
    Pattern("E3 subarray 24K x6, 6 ranks", 3, 2, 24 * K, 24, "subarray", 6),
    Pattern("E4 strided 1536K, 2 hosts", 2, 4, 1536 * K, 3),
    Pattern("E5 vector 96K x4, 6 ranks", 3, 2, 96 * K, 16, "vector", 4),
    Pattern("E6 strided 8K", 3, 4, 8 * K, 16),
]
# Set F (`--set f`), fixed on 2026-12-07 before any of its runs, the held-out check of the
# cycle rule (collective_advice.cycle_for: each aggregator's cycle at least k and never below the
# default 16 MiB; OMPIO's io_ompio_bytes_per_agg twice it, its io_ompio_cycle_buffer_size left
# alone), added after the idle-k7 preview and design runs of P4 and C4 with OMPIO. With the
# first-day k it raises MPICH's cb_buffer_size from 4 to 16 MiB, which two-phase I/O feels
# where an aggregator's share of a call exceeds 4 MiB: F1's 24 MiB interleaved call over 3
# hosts. New shapes: 1 rank per host (F6), a rank's call of 6 MiB (independent for MPICH),
# calls of 1 to 24 MiB. 2-8 calls per run.
PATTERNS_F = [
    Pattern("F1 vector 256K x8", 3, 4, 256 * K, 16, "vector", 8),
    Pattern("F2 strided 2M", 3, 4, 2 * M, 2),
    Pattern("F3 strided 6M, 2 hosts", 2, 2, 6 * M, 2),
    Pattern("F4 subarray 32K x16, 9 ranks", 3, 3, 32 * K, 64, "subarray", 16),
    Pattern("F5 vector 16K x8, 2 hosts", 2, 4, 16 * K, 64, "vector", 8),
    Pattern("F6 strided 384K, 3 ranks", 3, 1, 384 * K, 8),
]
# Set G (`--set g`), fixed on 2026-12-07 at 13:50 before any of its runs: the held-out check
# of the advice with the idle testbed's k (`--idle-k`: 1 MiB for every MPI), which the idle-k
# previews ran on sets A-F. With it a rank's call of 1 MiB or more is independent (G2, G3, G5;
# G3 and G5 interleaved, so without ROMIO's sieving) and every cycle is the default 16 MiB.
# New shapes: 9 ranks at 1.5 MiB a call, interleaved calls of 1-1.5 MiB per rank, a 2D view
# of 16 KiB pieces over 12 ranks. 2-8 calls per run.
PATTERNS_G = [
    Pattern("G1 vector 64K x8, 2 hosts", 2, 4, 64 * K, 32, "vector", 8),
    Pattern("G2 strided 1536K, 9 ranks", 3, 3, 1536 * K, 2),
    Pattern("G3 subarray 128K x8, 6 ranks", 3, 2, 128 * K, 16, "subarray", 8),
    Pattern("G4 strided 48K, 6 ranks", 3, 2, 48 * K, 16),
    Pattern("G5 vector 768K x2, 2 hosts", 2, 3, 768 * K, 4, "vector", 2),
    Pattern("G6 subarray 16K x8", 3, 4, 16 * K, 64, "subarray", 8),
]
SETS = {"a": PATTERNS, "b": PATTERNS_B, "c": PATTERNS_C, "d": PATTERNS_D, "e": PATTERNS_E,
        "f": PATTERNS_F, "g": PATTERNS_G}  # fmt: skip
TESTBED_PATTERNS = [p for patterns in SETS.values() for p in patterns]
# With --local, 4 ranks on this machine, 8 MiB per run, against platforms/local.json's k.
LOCAL_PATTERNS = [
    Pattern("L1 strided 16K", 1, 4, 16 * K, 128),
    Pattern("L2 vector 32K x8", 1, 4, 32 * K, 64, "vector", 8),
    Pattern("L3 strided 1M", 1, 4, 1 * M, 2),
]
# `--local --set e`, fixed with set E: each rank's call at k (256 KiB) on an interleaved view
# (independent, no sieving), an interleaved call of k with each rank's 64 KiB below it, a
# contiguous call above it (3 MiB, not a step of the local forwarding ladder, whose 2 MiB step
# has the shape of 4 x 512 KiB).
LOCAL_PATTERNS_E = [
    Pattern("L4 subarray 16K x16", 1, 4, 16 * K, 128, "subarray", 16),
    Pattern("L5 vector 8K x8", 1, 4, 8 * K, 256, "vector", 8),
    Pattern("L6 strided 768K", 1, 4, 768 * K, 3),
]
# `--local --set f`, fixed with set F: collective calls (each rank's below k) of one
# aggregator, which OMPIO's earlier 256 KiB io_ompio_bytes_per_agg (128 KiB cycles) split into
# 4 and 6 cycles: an interleaved 512 KiB call and a contiguous 768 KiB one. ROMIO's and MPICH's
# earlier 1 MiB cb_buffer_size (k in whole 1 MiB stripes) took them in one cycle already.
LOCAL_PATTERNS_F = [
    Pattern("L7 vector 16K x8", 1, 4, 16 * K, 128, "vector", 8),
    Pattern("L8 strided 192K", 1, 4, 192 * K, 10),
]
LOCAL_SETS = {"a": LOCAL_PATTERNS, "e": LOCAL_PATTERNS_E, "f": LOCAL_PATTERNS_F}
ALL_LOCAL_PATTERNS = [*LOCAL_PATTERNS, *LOCAL_PATTERNS_E, *LOCAL_PATTERNS_F]


# Each MPI's defaults: collective calls, no hints, no MCA parameters, direct.
DEFAULT: dict[str, Any] = {"ionodes": 0, "collective": True, "hints": {}, "mca": {}}


def advice_for(
    p: Pattern, ionodes: int, platform: Path, mpi: str = "", keep: bool = True
) -> collective_advice.Advice:
    """The advice for `p` asking for `ionodes` I/O nodes; `keep`: forward through them whatever
    the platform's forwarding ladder says (the advice's own decision with keep False)."""
    job = collective_advice.Job(ranks=p.ranks, ranks_per_node=p.ranks_per_host,
                                bytes_per_call=p.bytes_per_call, ionodes=ionodes,
                                interleaved=p.interleaved, mpi=mpi,
                                keep_ionodes=keep)  # fmt: skip
    return collective_advice.advise(job, platform)


def advised_config(
    advice: collective_advice.Advice, component: str, base: dict[str, Any]
) -> dict[str, Any]:
    """The advice's calls, hints or MCA parameters, through its I/O nodes (or direct)."""
    if component == "ompio":
        mca = {f"OMPI_MCA_{k}": v for k, v in advice.ompio_parameters().items()}
        return {**base, "ionodes": advice.ionodes, "collective": advice.collective, "mca": mca}
    hints = advice.romio_hints() | {"cb_config_list": "*:1"}
    return {**base, "ionodes": advice.ionodes, "collective": advice.collective, "hints": hints}


SIZE = re.compile(r"\d+[KMG](iB)?")  # a value given as a size: 1M, 64KiB


def named_setting(text: str) -> tuple[str, dict[str, Any]]:
    """`--setting NAME=ITEM,...`: a configuration of its own beside the others, for design runs
    that are not yet a rule, from each MPI's defaults: `hint:KEY=VALUE` (a ROMIO hint),
    `mca:KEY=VALUE` (an OpenMPI MCA parameter), `independent`, `ionodes=0|1`. (OMPIO reads
    the hint cb_buffer_size too, as its io_ompio_bytes_per_agg.)"""
    name, sep, spec = text.partition("=")
    if not sep or not name or not spec:
        raise argparse.ArgumentTypeError(f"{text!r}: NAME=ITEM,...")
    if name in ("default", "default-iorelay", "advised", "advised-iorelay") or re.fullmatch(
        r"cb\d+", name
    ):
        raise argparse.ArgumentTypeError(f"{text!r}: {name} is one of the bench's own names")
    config: dict[str, Any] = {**DEFAULT, "hints": {}, "mca": {}}
    for item in spec.split(","):
        kind, _, rest = item.partition(":")
        key, eq, value = rest.partition("=")
        if item == "independent":
            config["collective"] = False
        elif item in ("ionodes=0", "ionodes=1"):  # the bench forwards through ion1 only
            config["ionodes"] = int(item[8:])
        elif kind in ("hint", "mca") and key and eq and value:
            size = str(units.parse_bytes(value)) if SIZE.fullmatch(value) else value
            if kind == "hint":
                config["hints"][key] = size
            else:
                config["mca"][f"OMPI_MCA_{key}"] = size
        else:
            raise argparse.ArgumentTypeError(f"{text!r}: {item!r} is none of hint:KEY=VALUE, "
                                             "mca:KEY=VALUE, independent, ionodes=0|1")  # fmt: skip
    return name, config


def configurations(
    p: Pattern, component: str, platform: Path, local: bool = False
) -> dict[str, dict[str, Any]]:
    """name -> {ionodes, collective, hints, mca} for one pattern and MPI (`local`: without the
    cb_nodes ladder, which needs several hosts)."""
    base = DEFAULT
    out = {"default": base, "default-iorelay": {**base, "ionodes": 1}}
    for a in range(1, 0 if local else p.hosts + 1):
        if component == "ompio":
            out[f"cb{a}"] = {**base, "mca": {"OMPI_MCA_io_ompio_num_aggregators": str(a)}}
        else:
            out[f"cb{a}"] = {**base, "hints": {"cb_nodes": str(a), "cb_config_list": "*:1",
                                               "romio_cb_write": "enable"}}  # fmt: skip
    out["advised-iorelay"] = advised_config(advice_for(p, 1, platform, component), component, base)
    decided = advice_for(p, 1, platform, component, keep=False)
    out["advised"] = advised_config(decided, component, base)
    return out


def one_run(
    p: Pattern, component: str, config: dict[str, Any], work: Path, local: bool = False
) -> dict[str, Any]:
    env = {**testbed_mpiio.COMPONENT_ENV.get(component, {}), **config["mca"]}
    options = [*p.options(), *(["--collective"] if config["collective"] else [])]
    options += [a for k, v in config["hints"].items() for a in ("--hint", f"{k}={v}")]
    result, written = testbed_mpiio.bench_placed(
        MPIS[component], COMPUTE[: p.hosts], p.ranks, work, options, env,
        forwarded=bool(config["ionodes"]), local=local, ionode=IONODE, expected_bytes=p.total,
    )  # fmt: skip
    row: dict[str, Any] = {} if written is None else {"daemon_bytes_written": written}
    (phase,) = [x for x in result["phases"] if x["operation"] == "write"]
    row |= {"bandwidth_mib_s": float(phase["bandwidth_mib_s"]), "time_s": phase.get("time_s")}
    return row


def done_keys(rows: list[dict[str, Any]]) -> set[tuple[int, str, str]]:
    return {(r["repetition"], r["pattern"], r["settings"]) for r in rows if "error" not in r}


def measure(args: argparse.Namespace) -> int:
    if not args.local:
        status = testbed_mpiio.in_allocation([IONODE, *COMPUTE])
        if status is not None:
            return status
    platform = platform_path(args.platform)
    if args.local and args.set not in LOCAL_SETS:
        print(f"--local has sets {', '.join(sorted(LOCAL_SETS))}", file=sys.stderr)
        return 2
    every = LOCAL_SETS[args.set] if args.local else SETS[args.set]
    patterns = [p for p in every if not args.patterns or p.name.split()[0] in args.patterns]
    mpi, local, wanted = args.mpi, args.local, args.configs
    with tempfile.TemporaryDirectory(prefix="iorelay-platform-") as tmp:
        if args.idle_k:  # the advice's settings as they would be with IDLE_K
            platform = platform_variant(platform, Path(tmp), with_idle_k)
        if args.only_direct:  # the patterns whose advice goes direct
            patterns = [p for p in patterns
                        if advice_for(p, 1, platform, mpi, keep=False).ionodes == 0]  # fmt: skip
            print("the advice goes direct in: " + ", ".join(p.name for p in patterns), flush=True)
        named = dict(args.setting or [])
        if len(named) < len(args.setting or []):
            print("--setting: a NAME given twice", file=sys.stderr)
            return 2
        configs = {p.name: {n: c for n, c in configurations(p, mpi, platform, local).items()
                            if not wanted or n in wanted} | named for p in patterns}  # fmt: skip
    OUT.mkdir(parents=True, exist_ok=True)
    tag = f"-{args.tag}" if args.tag else ""
    rows_file = OUT / f"{'local-' if args.local else ''}{args.mpi}{tag}.jsonl"
    saved = testbed_mpiio.read_rows(rows_file)
    foreign = {r["pattern"] for r in saved} - {p.name for p in every}
    if foreign:  # the reports name a set's runs by hosts, ranks and request: one set a file
        print(f"{rows_file.name} holds runs of another set ({', '.join(sorted(foreign))}): "
              "give this set its own --tag", file=sys.stderr)  # fmt: skip
        return 2
    done = done_keys(saved)
    # A rerun goes on where the file stops, so its runs must be of the settings already there:
    # after a rule changes, the advice's runs go to another --tag.
    other = sorted({f"{r['pattern'].split()[0]} {r['settings']}" for r in saved
                    if r["pattern"] in configs and r["settings"] in configs[r["pattern"]]
                    and r["config"] != configs[r["pattern"]][r["settings"]]})  # fmt: skip
    if other:
        print(f"{rows_file.name} has runs of other settings under these names "
              f"({', '.join(other)}): give them another --tag", file=sys.stderr)  # fmt: skip
        return 2
    command = "python bench/testbed_collective.py " + shlex.join(sys.argv[1:])
    deadline = time.monotonic() + args.max_minutes * 60
    for rep in range(args.reps):
        for p in patterns:
            names = list(configs[p.name])
            shift = (rep + patterns.index(p)) % len(names)
            for name in names[shift:] + names[:shift]:
                if (rep, p.name, name) in done:
                    continue
                if time.monotonic() > deadline:
                    print(f"stopped at --max-minutes {args.max_minutes}; rerun to go on")
                    return 3
                config = configs[p.name][name]
                row: dict[str, Any] = {"repetition": rep, "pattern": p.name, "settings": name,
                                       "mpi": args.mpi, "config": config, "command": command,
                                       "date": time.strftime("%Y-%m-%d %H:%M")}  # fmt: skip
                try:
                    where = "/var/tmp" if args.local else str(testbed_mpiio.SHARED_PATH)
                    with tempfile.TemporaryDirectory(prefix="tbcoll-", dir=where) as tmp:
                        row |= one_run(p, args.mpi, config, Path(tmp), args.local)
                except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                    row["error"] = str(e)[-1500:]
                row["load"] = testbed_mpiio.load()
                with rows_file.open("a") as f:
                    f.write(json.dumps(row) + "\n")
                bw = row.get("bandwidth_mib_s")
                said = f"{bw:.1f} MiB/s" if bw else row.get("error", "")[:300]
                print(f"rep {rep} {p.name} {name}: {said}", flush=True)
    return 0


# -- the tables -------------------------------------------------------------------------------


def load_rows(name: str) -> list[dict[str, Any]]:
    return testbed_mpiio.read_rows(OUT / f"{name}.jsonl")


def recorded_config(
    rows: list[dict[str, Any]], pattern: str, settings: str = "advised"
) -> dict[str, Any] | None:
    """The configuration the runs of `settings` on `pattern` recorded (what they did, which a
    later platform file may advise otherwise); None without such a run."""
    return next((r["config"] for r in rows
                 if r["pattern"] == pattern and r["settings"] == settings), None)  # fmt: skip


# The comparisons `iorelay analyze --option settings` judges, each its own file: the advice
# against each default, and the cb_nodes ladder.
COMPARISONS = {
    "vs-default": ("default", "advised-iorelay"),
    "vs-default-iorelay": ("default-iorelay", "advised-iorelay"),
    "cb-nodes": ("cb1", "cb2", "cb3"),
    "advised-vs-default": ("default", "advised"),
    "advised-vs-default-iorelay": ("default-iorelay", "advised"),
}


def tidy_csvs(name: str, rows: list[dict[str, Any]]) -> list[Path]:
    """NAME-COMPARISON.csv for each comparison with runs of at least two of its settings."""
    out = []
    for comparison, settings in COMPARISONS.items():
        mine = [r for r in rows if r["settings"] in settings]
        if len({r["settings"] for r in mine}) > 1:
            out.append(tidy_csv(f"{name}-{comparison}", mine))
    return out


def tidy_csv(name: str, rows: list[dict[str, Any]], directory: Path = OUT) -> Path:
    """The runs in the schema of docs/analysis.md, `settings` the option compared, as
    `directory`/NAME.csv."""
    by_name = {p.name: p for p in (*TESTBED_PATTERNS, *ALL_LOCAL_PATTERNS)}
    lines = ["schema_version,layout,spatiality,nodes,processes,request_bytes,operation,odirect,"
             "api,collective,settings,repetition,bytes,time_s,bandwidth_mib_s"]  # fmt: skip
    for r in rows:
        if "error" in r:
            continue
        p = by_name[r["pattern"]]
        lines.append(f"1,shared,strided,{p.hosts},{p.ranks},{p.request},write,False,mpiio,True,"
                     f"{r['settings']},{r['repetition']},{p.total},{r['time_s']},"
                     f"{r['bandwidth_mib_s']}")  # fmt: skip
    out = directory / f"{name}.csv"
    out.write_text("\n".join(lines) + "\n")
    return out


def sorted_loads(rows: list[dict[str, Any]]) -> list[str]:
    """The load averages the runs recorded, by the 1-minute one (as numbers, not strings)."""
    return sorted({r["load"] for r in rows},
                  key=lambda load: (tuple(float(x) for x in load.split()), load))  # fmt: skip


def medians(rows: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if "error" not in r:
            groups.setdefault((r["pattern"], r["settings"]), []).append(r["bandwidth_mib_s"])
    return {key: statistics.median(v) for key, v in groups.items()}


def verdicts(
    csv: Path, patterns: list[Pattern], alpha: float = 0.05, advised: str = "advised-iorelay"
) -> dict[str, tuple[float, str]]:
    """Per pattern name: `advised`'s median over the other setting's, and what
    `iorelay analyze --option settings` says of the pair (Kruskal-Wallis, Dunn against the best).
    `patterns`: the set the CSV's runs come from, told apart by hosts, ranks and request size
    (analyze's pattern columns; P4 and D2 share them, in different sets)."""
    runs = reader.read_results([csv])
    options = compute.analyze(runs, "settings", "bandwidth", alpha).options
    names = {(p.hosts, p.ranks, p.request): p.name for p in patterns}
    if len(names) < len(patterns):
        raise ValueError(f"{csv.name}: two patterns of one set share hosts, ranks and request")
    out = {}
    for key, rows in options.groupby(["nodes", "processes", "request_bytes"]):
        by = rows.set_index("settings")
        others = [x for x in by.index if x != advised]
        if advised not in by.index or not others:  # a pattern still being measured
            continue
        other = others[0]
        adv, base = by.loc[advised], by.loc[other]
        ratio = float(adv["median"] / base["median"])
        if bool(base["worse"]):
            said = f"advised better (p {base['p_vs_best']:.3f})"
        elif bool(adv["worse"]):
            said = f"advised WORSE (p {adv['p_vs_best']:.3f})"
        else:
            said = f"no significant difference (p {float(adv['kw_p']):.2f})"
        out[names[tuple(int(v) for v in key)]] = (ratio, said)
    return out


def verdict_lines(name: str, patterns: list[Pattern]) -> list[str]:
    """The two comparisons of the advice for NAME (an MPI, or local-MPI), as table rows."""
    found = {c: verdicts(OUT / f"{name}-{c}.csv", patterns)
             for c in ("vs-default", "vs-default-iorelay")
             if (OUT / f"{name}-{c}.csv").exists()}  # fmt: skip
    if len(found) < 2:
        return []
    lines = ["", "`iorelay analyze --option settings` on the advice against each default "
             f"({name}-vs-default*.csv, alpha 0.05):", "",
             "| pattern | advised / default | analyze | advised / default-iorelay | analyze |",
             "|---|---:|---|---:|---|"]  # fmt: skip
    for pattern, (r1, v1) in sorted(found["vs-default"].items()):
        r2, v2 = found["vs-default-iorelay"].get(pattern, (math.nan, "-"))
        lines.append(f"| {pattern} | {r1:.2f} | {v1} | {r2:.2f} | {v2} |")
    return lines


def describe(config: dict[str, Any]) -> str:
    """A configuration's calls, hints and MCA parameters in one cell."""
    words = ["collective" if config["collective"] else "independent"]
    words += [f"{k}={v}" for k, v in config["hints"].items() if k != "romio_cb_read"]
    words += [f"{k.removeprefix('OMPI_MCA_io_ompio_')}={v}" for k, v in config["mca"].items()]
    return ", ".join(words)


def plain_rule_count(p: Pattern, k: int) -> int:
    """Chaarawi & Gabriel's count alone: ceil(bytes per call / k), one per host at most."""
    return min(p.hosts, -(-p.bytes_per_call // k))


def testbed_section(
    mpi: str, tag: str, patterns: list[Pattern], platform: Path, k: int
) -> list[str]:
    """The table of MPI-TAG.jsonl; the cb_nodes ladder from the same file, else, for the six
    patterns, from MPI.jsonl and for set C from MPI-setc.jsonl (-advice2 and later tags
    re-measure the defaults and the advice only). `k` is the MPI's own where the platform has
    it; the advice's count is the MPI's."""
    rows = load_rows(f"{mpi}{tag}")
    if not rows:
        return []
    # the saved cb_nodes ladder of the set: P1-P6's first runs, set C's -setc runs
    ladder_tag = {id(PATTERNS): "", id(PATTERNS_C): "-setc"}.get(id(patterns))
    ladder = load_rows(f"{mpi}{ladder_tag}") if ladder_tag not in (None, tag) else []
    med = medians([r for r in ladder if r["settings"].startswith("cb")]) | medians(rows)
    errors = [r for r in rows if "error" in r]
    reps = sorted({r["repetition"] for r in rows if "error" not in r})
    lines = [f"## {mpi}{tag}", "", f"Command: `{rows[0]['command']}`; runs {rows[0]['date']} to "
             f"{rows[-1]['date']}, load {rows[0]['load']} .. {rows[-1]['load']}; "
             f"{len(errors)} failed run(s); repetitions {len(reps)} "
             f"({len(rows) - len(errors)} runs)", "",
             "| pattern | bytes/call | C&G A | A advised now | cb1 | cb2 | cb3 | C&G / best | "
             "A advised now / best | default | default-iorelay | advised-iorelay | "
             "advised / default | advised / default-iorelay |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    hits = {"C&G": 0, "advice": 0}
    total = 0
    measured_here = {r["pattern"] for r in rows}
    for p in (p for p in patterns if p.name in measured_here):
        plain, advised = plain_rule_count(p, k), advice_for(p, 0, platform, mpi).aggregators
        cbs = {n: med.get((p.name, f"cb{n}")) for n in (1, 2, 3)}
        measured = [v for v in cbs.values() if v is not None]
        share = {}
        for name, a in (("C&G", plain), ("advice", advised)):
            if measured and cbs.get(a) is not None:
                share[name] = cbs[a] / max(measured)
                hits[name] += share[name] >= 0.9
        total += bool(measured)
        d, di, adv = (med.get((p.name, s), math.nan) for s in
                      ("default", "default-iorelay", "advised-iorelay"))  # fmt: skip
        cells = " | ".join("-" if v is None else f"{v:.3g}" for v in cbs.values())
        shares = " | ".join(f"{share[n]:.2f}" if n in share else "-" for n in ("C&G", "advice"))
        lines.append(f"| {p.name} | {units.format_bytes(p.bytes_per_call)} | {plain} | {advised} "
                     f"| {cells} | {shares} | {d:.3g} | {di:.3g} | {adv:.3g} | {adv / d:.2f} | "
                     f"{adv / di:.2f} |")  # fmt: skip
    tidy_csvs(f"{mpi}{tag}", rows)
    said = sorted({(r["pattern"], describe(r["config"])) for r in rows
                   if r["settings"] == "advised-iorelay"})  # fmt: skip
    lines += ["", "Advised settings measured: " + "; ".join(f"{n.split()[0]} {d}" for n, d in said)]
    if total:
        lines += ["", f"Of the best measured cb_nodes, >= 0.9 reached by C&G's count (ceil(bytes "
                  f"per call / k), k = {units.format_bytes(k)}) in {hits['C&G']} of {total} "
                  f"patterns, by the advice's count ({mpi}'s k, one per host from its spread "
                  f"point) in {hits['advice']} of {total}."]  # fmt: skip
    return [*lines, *verdict_lines(f"{mpi}{tag}", patterns), ""]


# The saved runs, in the report's order: the first runs (with the cb_nodes ladder), the advice
# of 2026-12-06 17:00 (advice2), set B; then the advice with each MPI's own k and spread point
# (advice3, set B: setb3).
TAGS = (("", PATTERNS), ("-advice2", PATTERNS), ("-setb", PATTERNS_B), ("-advice3", PATTERNS),
        ("-setb3", PATTERNS_B), ("-setc", PATTERNS_C), ("-count4", PATTERNS),
        ("-setc4", PATTERNS_C))  # fmt: skip


def platform_variant(platform: Path, work: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of `platform` in `work`, its `collective` section changed by `edit`."""
    doc = json.loads(platform.read_text())
    edit(doc.setdefault("collective", {}))
    out = work / f"{edit.__name__}-{platform.name}"
    out.write_text(json.dumps(doc))
    return out


def without_interleaved_point(collective: dict[str, Any]) -> None:
    """The advice's old rule: the contiguous spread point for every call."""
    collective.pop("spread_point_interleaved_by_mpi", None)


# k of every MPI on the idle testbed, three times on 2026-12-07 (collective-saturation-testbed-M-
# day2-repeat.md, -repeat2.md, -repeat3.md), platforms/testbed.json's since the runs of set G;
# `--idle-k` set it for the previews and set G, while the platform had the first day's.
IDLE_K = "1MiB"
# The first day's k (2026-12-06, a loaded machine), which the advice up to the eighth used: the
# count section and the eighth advice's page compare with it.
FIRST_DAY_K = {"ompio": "64MiB", "romio321": "16MiB", "mpich": "4MiB"}


def with_idle_k(collective: dict[str, Any]) -> None:
    collective["saturation_point"] = IDLE_K
    collective["saturation_point_by_mpi"] = {
        m: IDLE_K for m in collective.get("saturation_point_by_mpi", {})}  # fmt: skip


def with_first_day_k(collective: dict[str, Any]) -> None:
    collective["saturation_point"] = FIRST_DAY_K["ompio"]  # OMPIO's was the platform's default
    collective["saturation_point_by_mpi"] = dict(FIRST_DAY_K)


def interleaved_count_section(platform: Path) -> list[str]:
    """The count on interleaved calls: per MPI and pattern set, how often each rule's count
    reaches >= 0.9 of the best measured cb_nodes (set c held out; P1-P6 not: P3 and P4 are
    the misses the interleaved spread point was measured for), beside simple baselines."""
    sets = (("P1-P6 (not held out)", PATTERNS, ""), ("set C (held out)", PATTERNS_C, "-setc"))
    lines = ["## The count with the interleaved spread point", "",
             "Share of patterns where a rule's count reaches >= 0.9 of the best measured "
             "cb_nodes (medians of 5). New: the interleaved spread point for interleaved calls "
             "(collective.spread_point_interleaved_by_mpi); old: the contiguous one for all "
             "calls; first-day k: the new rule with the first day's k (" + ", ".join(
                 f"{m} {k}" for m, k in FIRST_DAY_K.items()) + ", a loaded machine); C&G: "
             "ceil(bytes per call / k) alone; baselines: always 1, always one aggregator per "
             "host.", "",
             "| MPI | patterns | new | old | first-day k | C&G | always 1 | one per host | misses "
             "of the new | misses with first-day k |",
             "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    detail = ["", "| MPI | pattern | bytes/call | cb1 | cb2 | cb3 | new A | old A | new / best |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="iorelay-old-rule-") as tmp:
        old_platform = platform_variant(platform, Path(tmp), without_interleaved_point)
        first_day = platform_variant(platform, Path(tmp), with_first_day_k)
        for mpi in MPIS:
            k = collective_advice.measured_saturation_point(platform, mpi)
            for label, patterns, tag in sets:
                rows = load_rows(f"{mpi}{tag}")
                med = medians([r for r in rows if r["settings"].startswith("cb")])
                hits = {n: 0 for n in ("new", "old", "first-day k", "C&G", "1", "hosts")}
                misses: dict[str, list[str]] = {"new": [], "first-day k": []}
                total = 0
                for p in patterns:
                    cbs = {a: med[(p.name, f"cb{a}")] for a in range(1, p.hosts + 1)
                           if (p.name, f"cb{a}") in med}  # fmt: skip
                    if len(cbs) < p.hosts:
                        continue
                    total += 1
                    best = max(cbs.values())
                    counts = {"new": advice_for(p, 0, platform, mpi).aggregators,
                              "old": advice_for(p, 0, old_platform, mpi).aggregators,
                              "first-day k": advice_for(p, 0, first_day, mpi).aggregators,
                              "C&G": plain_rule_count(p, k), "1": 1, "hosts": p.hosts}  # fmt: skip
                    for name, a in counts.items():
                        hits[name] += cbs[a] / best >= 0.9
                    for name, missed in misses.items():
                        if cbs[counts[name]] / best < 0.9:
                            missed.append(f"{p.name.split()[0]} {cbs[counts[name]] / best:.2f}")
                    if tag:
                        cells = " | ".join(f"{cbs[a]:.3g}" if a in cbs else "-" for a in (1, 2, 3))
                        detail.append(f"| {mpi} | {p.name} | {units.format_bytes(p.bytes_per_call)}"
                                      f" | {cells} | {counts['new']} | {counts['old']} | "
                                      f"{cbs[counts['new']] / best:.2f} |")  # fmt: skip
                if total:
                    said = " | ".join(f"{hits[n]} of {total}" for n in hits)
                    missed = " | ".join(", ".join(m) or "-" for m in misses.values())
                    lines.append(f"| {mpi} | {label} | {said} | {missed} |")
    return [*lines, *detail, ""]


def decision_section(name: str, title: str, patterns: list[Pattern]) -> list[str]:
    """NAME.jsonl's `default` against `advised` (the advice's own I/O-node decision), with the
    decision's reason and what `iorelay analyze` says of each pair."""
    rows = load_rows(name)
    if not rows:
        return []
    med = medians(rows)
    errors = [r for r in rows if "error" in r]
    loads = sorted_loads(rows)
    csvs = tidy_csvs(name, rows)
    judged = {}
    if any(c.name.endswith("-advised-vs-default.csv") for c in csvs):
        judged = verdicts(OUT / f"{name}-advised-vs-default.csv", patterns, advised="advised")
    lines = [f"## {title}", "", f"Command: `{rows[0]['command']}`; runs {rows[0]['date']} to "
             f"{rows[-1]['date']}, load averages {loads[0]} .. {loads[-1]}; {len(errors)} failed "
             "run(s)", "", "| pattern | bytes/call | advised: I/O nodes, why | default | advised | "
             "advised / default | analyze |", "|---|---:|---|---:|---:|---:|---|"]  # fmt: skip
    for p in patterns:
        if (p.name, "advised") not in med:
            continue
        config = recorded_config(rows, p.name)
        why = f"{config['ionodes']}, {describe(config)}" if config else "-"
        d, adv = med.get((p.name, "default"), math.nan), med[(p.name, "advised")]
        ratio, said = judged.get(p.name, (adv / d, "-"))
        lines.append(f"| {p.name} | {units.format_bytes(p.bytes_per_call)} | {why} | {d:.3g} | "
                     f"{adv:.3g} | {ratio:.2f} | {said} |")  # fmt: skip
    return [*lines, ""]


# The judged runs of an advice version (its own decision whether to forward): one file per
# MPI and set, every pattern, `default`, `default-iorelay` and `advised` alternating. advice5:
# only a significant loss of the forwarding ladder went direct; advice6 (the current rule):
# only a significant gain forwards, judged again on sets A-C and on set D, held out.
Judged = tuple[tuple[str, list[Pattern]], ...]


def tagged(tag: str, sets: str, local: bool = False) -> Judged:
    """The runs of one advice version on `sets` ("abc": sets A-C), one file per set as the tag
    names it: TAG for set a, TAGb for set b, ..."""
    by = LOCAL_SETS if local else SETS
    return tuple((tag if s == "a" else tag + s, by[s]) for s in sets)


JUDGED_5 = tagged("advice5", "abc")
JUDGED_6 = tagged("advice6", "abc")
JUDGED_6_HELD_OUT = tagged("advice6", "d")
# advice7: independent calls on interleaved ranges without ROMIO's data sieving, and one
# aggregator below the spread point. With the platform's k they changed no pattern of sets A-D
# (checked at f2259b9) nor of set E; set E was held out for the advice as it was, L4-L6 for the
# sieving rule (L2 changed too); IDLE_K_7 below for both rules.
JUDGED_7_HELD_OUT = tagged("advice7", "e")
JUDGED_7_LOCAL = tagged("advice7", "ae", local=True)
# advice8 (the current rules): each aggregator's cycle at least k and never below the default
# 16 MiB, OMPIO's io_ompio_bytes_per_agg twice it (collective_advice.cycle_for). With the
# platform's k it raises MPICH's cb_buffer_size from 4 to 16 MiB, OMPIO's cycle from 32 to
# 64 MiB (no judged call is that large) and drops its io_ompio_cycle_buffer_size, and changes no
# ROMIO setting: MPICH and OMPIO are judged again on sets A-E, ROMIO by the runs of its unchanged
# settings (same_as checks it); set F and L7-L8 are held out for all three. Locally (k = 256 KiB)
# every MPI's cycle grows to 16 MiB, which only OMPIO's calls reach (L5, L7, L8).
JUDGED_8_AGAIN = tagged("advice8", "abcde")
JUDGED_8_HELD_OUT = tagged("advice8", "f")
JUDGED_8_LOCAL = tagged("advice8", "aef", local=True)
# The idle-k previews (`--idle-k`): the sixth advice's rules on sets A-D, the seventh's on A-E,
# the eighth's on A-F.
IDLE_K_6 = tagged("idlek", "abcd")
IDLE_K_7 = tagged("idlek7", "abcde")
IDLE_K_8 = tagged("idlek8", "abcdef")
# Set G, held out for the eighth advice's rules with the idle k, against both defaults; sets
# A-F again against the defaults through ion1 (idle-k8 has them against the direct defaults).
IDLE_K_8_HELD_OUT: Judged = (("idlek-g", PATTERNS_G),)
IDLE_K_8_FORWARDED = tagged("idlek8r", "abcdef")


def judged_section(mpi: str, judged: Judged, where: str = "") -> list[str]:
    """An advice version against both defaults, every pattern of `judged`, as `iorelay analyze`
    judges each pair; the advice's decision and settings as the runs recorded them. `where`:
    "local-" for the runs on this machine."""
    lines = [f"## {mpi}{', on this machine' if where else ''}: the advice against the defaults",
             "",
             "| pattern | advised: I/O nodes, settings | default | default-iorelay | advised | "
             "advised / default | analyze | advised / default-iorelay | analyze |",
             "|---|---|---:|---:|---:|---:|---|---:|---|"]  # fmt: skip
    said = []
    for tag, patterns in judged:
        name = f"{where}{mpi}-{tag}"
        rows = load_rows(name)
        if not rows:
            continue
        med, csvs = medians(rows), tidy_csvs(name, rows)
        by_comparison = {c: verdicts(OUT / f"{name}-{c}.csv", patterns, advised="advised")
                         for c in ("advised-vs-default", "advised-vs-default-iorelay")
                         if OUT / f"{name}-{c}.csv" in csvs}  # fmt: skip
        loads = sorted_loads(rows)
        errors = sum("error" in r for r in rows)
        said.append(f"`{rows[0]['command']}`: {rows[0]['date']} to {rows[-1]['date']}, load "
                    f"averages {loads[0]} .. {loads[-1]}, {errors} failed run(s)")  # fmt: skip
        for p in patterns:
            config = recorded_config(rows, p.name)
            if config is None:
                continue
            cells = " | ".join(f"{med.get((p.name, s), math.nan):.3g}"
                               for s in ("default", "default-iorelay", "advised"))  # fmt: skip
            pairs = " | ".join(
                "{:.2f} | {}".format(*by_comparison[c][p.name])
                if p.name in by_comparison.get(c, {}) else "- | -"
                for c in ("advised-vs-default", "advised-vs-default-iorelay"))  # fmt: skip
            lines.append(f"| {p.name} | {config['ionodes']}, {describe(config)} | {cells} | "
                         f"{pairs} |")  # fmt: skip
    return [*lines, "", *(f"- {s}" for s in said), ""] if said else []


def decision_score(judged: Judged, title: str) -> list[str]:
    """The advice's direct-or-forward decision against two baselines, on the judged runs: per
    pattern the path that was faster with each MPI's defaults (`default` direct against
    `default-iorelay`, the same settings through ion1, by medians) is the right answer; each
    miss with the two-sided Mann-Whitney p of those runs."""
    from scipy import stats

    lines = [f"## Direct or forward{title}: the decision against always-direct and "
             "always-forward", "",
             "A pattern counts for a rule when the rule picks the path whose median was faster "
             "with the MPI's defaults (default against default-iorelay, same runs).", "",
             "| MPI | patterns | the advice's decision | always direct | always forward | "
             "misses of the decision (direct / forwarded MiB/s, p) |",
             "|---|---:|---:|---:|---:|---|"]  # fmt: skip
    for mpi in MPIS:
        hits = {"advice": 0, "direct": 0, "forward": 0}
        total, misses = 0, []
        for tag, patterns in judged:
            rows = load_rows(f"{mpi}-{tag}")
            med = medians(rows)
            for p in patterns:
                config = recorded_config(rows, p.name)
                direct = med.get((p.name, "default"))
                forwarded = med.get((p.name, "default-iorelay"))
                if config is None or direct is None or forwarded is None:
                    continue
                total += 1
                direct_faster = direct >= forwarded
                hits["direct"] += direct_faster
                hits["forward"] += not direct_faster
                if (config["ionodes"] == 0) == direct_faster:
                    hits["advice"] += 1
                    continue
                runs = [[r["bandwidth_mib_s"] for r in rows if r["pattern"] == p.name
                         and r["settings"] == s and "error" not in r]
                        for s in ("default", "default-iorelay")]  # fmt: skip
                p_value = stats.mannwhitneyu(*runs, alternative="two-sided").pvalue
                misses.append(f"{p.name.split()[0]} ({direct:.3g} / {forwarded:.3g}, "
                              f"p {p_value:.2f})")  # fmt: skip
        if total:
            lines.append(f"| {mpi} | {total} | {hits['advice']} | {hits['direct']} | "
                         f"{hits['forward']} | {', '.join(misses) or '-'} |")  # fmt: skip
    return [*lines, ""]


def same_as(platform: Path, mpis: tuple[str, ...], judged: Judged, which: str) -> list[str]:
    """Whether the current rules give each pattern of `judged` the settings its runs recorded
    (`which`: the sets and pages they are on): those runs then judge the current advice too."""
    same, changed = 0, []
    for mpi in mpis:
        for tag, patterns in judged:
            rows = load_rows(f"{mpi}-{tag}")
            for p in patterns:
                now = advised_config(advice_for(p, 1, platform, mpi, keep=False), mpi, DEFAULT)
                recorded = recorded_config(rows, p.name)
                if recorded == now:
                    same += 1
                else:
                    changed.append(f"{mpi} {p.name.split()[0]}{'' if recorded else ' (no runs)'}")
    return [f"{which}: the current rules give {same} of {same + len(changed)} pairs (pattern, "
            "MPI) the settings their runs recorded, so those runs judge them; changed: "
            f"{', '.join(changed) or 'none'}.", ""]  # fmt: skip


def judged_page(title: str, rule: str, sets: tuple[tuple[Judged, str], ...]) -> list[str]:
    """An advice version's judged runs against each MPI's defaults, and its decision score per
    group of sets (`sets`: the judged runs, and the title of their score)."""
    lines = [f"# {title} against each MPI's defaults, every testbed pattern", "",
             "write MiB/s, medians of the repetitions (5); `advised` with the advice's own "
             f"decision whether to forward (I/O nodes 0: direct; {rule}); `iorelay analyze "
             "--option settings` judges each pair.", ""]  # fmt: skip
    for mpi in MPIS:
        lines += judged_section(mpi, tuple(j for judged, _ in sets for j in judged))
    for judged, which in sets:
        lines += decision_score(judged, which)
    return lines


def summary_table(sources: tuple[tuple[Judged, str], ...]) -> list[str]:
    """One row per pattern, one cell per MPI: the advice over the direct defaults, then over the
    defaults through ion1, each as `iorelay analyze` judged it (bold: significantly better,
    italic: significantly worse), "-> ion1" where the advice forwarded; the counts below it.
    `sources`: the judged runs and the comparison (a CSV suffix) each holds."""
    comparisons = ("advised-vs-default", "advised-vs-default-iorelay")
    found: dict[tuple[str, str, str], tuple[float, str]] = {}
    forwarded: set[tuple[str, str]] = set()
    order: dict[str, Pattern] = {}
    for judged, comparison in sources:
        for tag, patterns in judged:
            order |= {p.name: p for p in patterns}
            for mpi in MPIS:
                csv = OUT / f"{mpi}-{tag}-{comparison}.csv"
                if not csv.exists():
                    continue
                for name, v in verdicts(csv, patterns, advised="advised").items():
                    found[name, mpi, comparison] = v
                rows = load_rows(f"{mpi}-{tag}")
                forwarded |= {(p.name, mpi) for p in patterns
                              if (recorded_config(rows, p.name) or {}).get("ionodes")}  # fmt: skip

    def cell(name: str, mpi: str, comparison: str) -> str:
        if (name, mpi, comparison) not in found:
            return "-"
        ratio, said = found[name, mpi, comparison]
        mark = "**" if said.startswith("advised better") else "*" if "WORSE" in said else ""
        return f"{mark}{ratio:.2f}{mark}"

    lines = ["| pattern (bytes per call) | " + " | ".join(MPIS) + " |",
             "|---|" + "---|" * len(MPIS)]  # fmt: skip
    for name, p in order.items():
        cells = [("-> ion1: " if (name, mpi) in forwarded else "")
                 + ", ".join(cell(name, mpi, c) for c in comparisons) for mpi in MPIS]  # fmt: skip
        lines.append(f"| {name} ({units.format_bytes(p.bytes_per_call)}) | {' | '.join(cells)} |")
    lines.append("")
    for c in comparisons:
        said = [v for (_, _, comparison), v in found.items() if comparison == c]
        worse = sum("WORSE" in x for _, x in said)
        better = sum(x.startswith("advised better") for _, x in said)
        high = sum(r >= 1.5 for r, _ in said)
        lines.append(f"- {c}: {len(said)} pairs, {worse} significantly worse, {better} "
                     f"significantly better, {high} at >= 1.5x")  # fmt: skip
    return [*lines, ""]


def idle_k_page(platform: Path) -> list[str]:
    """The eighth advice with the idle k: set G (held out) against both defaults, whether the
    rules still give sets A-F their idle-k8 runs' settings, and A-F against the defaults through
    ion1."""
    idle = judged_page(
        "The eighth advice with the idle testbed's k (the current advice)",
        f"`--idle-k`: k = {IDLE_K} for every MPI, as platforms/testbed.json now has it",
        ((IDLE_K_8_HELD_OUT, " (set G, held out)"),),
    )
    idle += ["# Every testbed pattern: advised / direct defaults, advised / defaults through ion1",
             "", "Sets A-F against the direct defaults from idle-k8.md's runs, against the "
             "defaults through ion1 from the idlek8r runs below; set G both from its own runs.",
             ""]  # fmt: skip
    idle += summary_table(((IDLE_K_8, "advised-vs-default"),
                           (IDLE_K_8_FORWARDED, "advised-vs-default-iorelay"),
                           (IDLE_K_8_HELD_OUT, "advised-vs-default"),
                           (IDLE_K_8_HELD_OUT, "advised-vs-default-iorelay")))  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="iorelay-idle-k-") as tmp:
        idle += same_as(
            platform_variant(platform, Path(tmp), with_idle_k),
            MPIS,
            (*IDLE_K_8, *IDLE_K_8_FORWARDED, *IDLE_K_8_HELD_OUT),
            "Sets A-F against each default (idle-k8.md and below) and set G",
        )
    idle += ["# Sets A-F against the defaults through ion1", "",
             "`--configs default-iorelay,advised --idle-k --tag idlek8r[b-f]`.", ""]  # fmt: skip
    for mpi in MPIS:
        idle += judged_section(mpi, IDLE_K_8_FORWARDED)
    idle += ["# The two pairs judged significantly worse, again with 10 runs a side", "",
             "ROMIO E6 against the direct defaults (`--set e --patterns E6 --configs "
             "default,advised --reps 10 --tag idlek8e-repeat`) and D1 against the defaults "
             "through ion1 (`--set d --patterns D1 --configs default-iorelay,advised --reps 10 "
             "--tag idlek8rd-repeat`), with the platform's k.", ""]  # fmt: skip
    idle += judged_section("romio321", (("idlek8e-repeat", PATTERNS_E),
                                        ("idlek8rd-repeat", PATTERNS_D)))  # fmt: skip
    return idle


def report(args: argparse.Namespace) -> int:
    platform = platform_path(args.platform)
    ks = {mpi: collective_advice.measured_saturation_point(platform, mpi) for mpi in MPIS}
    lines = ["# Collective MPI-IO on the testbed: aggregator count and advice", "",
             "k = " + ", ".join(f"{units.format_bytes(k)} ({mpi})" for mpi, k in ks.items())
             + f" ({platform.name}, each MPI's own where measured); patterns fixed in "
             "bench/testbed_collective.py (PATTERNS) before the runs; write MiB/s, medians of "
             "the repetitions, configurations rotated within each repetition.", ""]  # fmt: skip
    for mpi in MPIS:
        for tag, patterns in TAGS:
            lines += testbed_section(mpi, tag, patterns, platform, ks[mpi])
    lines += interleaved_count_section(platform)
    local_k = collective_advice.measured_saturation_point(platform_path("local"))
    for mpi, tag in ((m, t) for t in ("", "-advice3") for m in MPIS):
        name = f"local-{mpi}{tag}"
        rows = load_rows(name)
        if not rows:
            continue
        med = medians(rows)
        lines += [f"## {mpi}{tag}, on this machine (k = {units.format_bytes(local_k)}, "
                  "local.json)", "", f"Command: `{rows[0]['command']}`; runs {rows[0]['date']} "
                  f"to {rows[-1]['date']}, load {rows[0]['load']} .. {rows[-1]['load']}", "",
                  "| pattern | bytes/call | default | default-iorelay | advised-iorelay | "
                  "advised settings |", "|---|---:|---:|---:|---:|---|"]  # fmt: skip
        for p in LOCAL_PATTERNS:
            adv = recorded_config(rows, p.name, "advised-iorelay")
            cells = " | ".join(f"{med.get((p.name, s), math.nan):.1f}" for s in
                               ("default", "default-iorelay", "advised-iorelay"))  # fmt: skip
            said = "" if adv is None else describe(adv)
            lines.append(f"| {p.name} | {units.format_bytes(p.bytes_per_call)} | {cells} | "
                         f"{said} |")  # fmt: skip
        tidy_csvs(name, rows)
        lines += [*verdict_lines(name, LOCAL_PATTERNS), ""]
    # The advice's own decision whether to forward (advice4): default against advised where
    # it goes direct; also on its own page.
    decided = ["# Direct or through I/O nodes, as advised, against each MPI's defaults", "",
               "Where the advice (iorelay.forwarding_cost with the platform's forwarding ladder, "
               "bench/collective_forwarding.py) sends a judged pattern direct: write MiB/s, "
               "medians of the repetitions, `default` and `advised` alternating.", "",
               "| MPI | the current testbed advice goes direct in | the current local advice goes "
               "direct in |",
               "|---|---|---|"]  # fmt: skip
    for mpi in MPIS:
        where = [", ".join(p.name.split()[0] for p in pats
                           if advice_for(p, 1, pl, mpi, keep=False).ionodes == 0) or "none"
                 for pats, pl in ((TESTBED_PATTERNS, platform),
                                  (ALL_LOCAL_PATTERNS, platform_path("local")))]  # fmt: skip
        decided.append(f"| {mpi} | {where[0]} | {where[1]} |")
    decided.append("")
    for mpi in MPIS:
        title = f"{mpi}-advice4: direct or through ion1, as advised"
        both = [*PATTERNS, *PATTERNS_B]
        decided += decision_section(f"{mpi}-advice4", title, both)
        decided += decision_section(f"local-{mpi}-advice4", f"{mpi}-advice4, on this machine",
                                    LOCAL_PATTERNS)  # fmt: skip
    (OUT / "advice4.md").write_text("\n".join(decided) + "\n")
    lines += decided[2:]
    fifth = judged_page("The fifth advice", "only a significant loss of the forwarding ladder "
                        "went direct", ((JUDGED_5, ""),))  # fmt: skip
    current = judged_page(
        "The sixth advice",
        "only a significant gain of the forwarding ladder keeps the I/O nodes",
        ((JUDGED_6, " (sets A-C)"), (JUDGED_6_HELD_OUT, " (set D, held out)")),
    )
    for mpi in MPIS:
        current += judged_section(mpi, (("advice6", LOCAL_PATTERNS),), "local-")
    current += ["# The three pairs judged significantly worse, again with 10 runs a side", "",
                "ROMIO D4 (the advised settings are ROMIO's defaults), P4 and L2.", ""]  # fmt: skip
    current += judged_section("romio321", (("advice6-repeat", PATTERNS),
                                           ("advice6d-repeat", PATTERNS_D)))  # fmt: skip
    current += judged_section("romio321", (("advice6-repeat", LOCAL_PATTERNS),), "local-")
    seventh = judged_page(
        "The seventh advice",
        "the sixth's rules; independent calls on interleaved ranges with romio_ds_write disable; "
        "one aggregator below the spread point",
        ((JUDGED_7_HELD_OUT, " (set E, held out)"),),
    )
    seventh += ["Sets A-D: the seventh advice's rules gave 60 of 60 pairs (pattern, MPI) the "
                "settings their advice6 runs recorded (advice6.md), so those runs judge them "
                "(--report at f2259b9).", ""]  # fmt: skip
    for mpi in MPIS:
        seventh += judged_section(mpi, JUDGED_7_LOCAL, "local-")
    seventh += ["# The two pairs judged significantly worse, again with 10 runs a side", "",
                "MPICH E4 and OMPIO L4 (`--patterns E4|L4 --configs default,advised --reps 10 "
                "--tag advice7e-repeat`).", ""]  # fmt: skip
    seventh += judged_section("mpich", (("advice7e-repeat", PATTERNS_E),))
    seventh += judged_section("ompio", (("advice7e-repeat", LOCAL_PATTERNS_E),), "local-")
    eighth = judged_page(
        "The eighth advice",
        "the seventh's rules; each aggregator's cycle at least k and never below the "
        "default 16 MiB, OMPIO's io_ompio_bytes_per_agg twice it",
        ((JUDGED_8_AGAIN, " (sets A-E, MPICH and OMPIO again)"),
         (JUDGED_8_HELD_OUT, " (set F, held out)")),
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="iorelay-first-day-k-") as tmp:
        eighth += same_as(
            platform_variant(platform, Path(tmp), with_first_day_k),
            ("romio321",),
            (*JUDGED_6, *JUDGED_6_HELD_OUT, *JUDGED_7_HELD_OUT),
            "ROMIO on sets A-E (advice6.md, advice7.md), with the first day's k",
        )
    for mpi in MPIS:
        eighth += judged_section(mpi, JUDGED_8_LOCAL, "local-")
    eighth += ["# The pairs judged significantly worse, again with 10 runs a side", "",
               "`--patterns X --configs default,advised --reps 10 --tag TAG-repeat`; MPICH E3 a "
               "third time beside other settings (`--tag e3-design`, `--setting`: not a judged "
               "run).", ""]  # fmt: skip
    eighth += judged_section("ompio", (("advice8e-repeat", PATTERNS_E),
                                       ("advice8f-repeat", PATTERNS_F)))  # fmt: skip
    eighth += judged_section("mpich", (("advice8-repeat", PATTERNS),
                                       ("advice8e-repeat", PATTERNS_E)))  # fmt: skip
    eighth += judged_section("ompio", (("advice8e-repeat", LOCAL_PATTERNS_E),), "local-")
    eighth += judged_section("mpich", (("e3-design", PATTERNS_E),))
    design = load_rows("mpich-e3-design")
    eighth += [
        "MPICH E3, every setting of the design run (MiB/s, medians of 10): "
        + ", ".join(f"{name} {value:.3g}" for (_, name), value in sorted(medians(design).items()))
        + "; "
        + "; ".join(sorted({f"{r['settings']}: {describe(r['config'])}" for r in design})),
        "",
    ]
    for page, text in (("advice5.md", fifth), ("advice6.md", current), ("advice7.md", seventh),
                       ("advice8.md", eighth)):  # fmt: skip
        (OUT / page).write_text("\n".join(text) + "\n")
        lines += text[2:]
    if any(load_rows(f"{mpi}-{tag}") for mpi in MPIS for tag, _ in IDLE_K_8_HELD_OUT):
        idle = idle_k_page(platform)
        (OUT / "idle-k-g.md").write_text("\n".join(idle) + "\n")
        lines += idle[2:]
    for page, advice, rules, judged in (
        ("idle-k.md", "the advice", "the rules unchanged", IDLE_K_6),
        ("idle-k7.md", "the seventh advice", "with the seventh advice's rules", IDLE_K_7),
        ("idle-k8.md", "the eighth advice", "with the eighth advice's rules", IDLE_K_8),
    ):
        preview = [f"# A preview: {advice} with the idle testbed's k", "",
                   f"`--idle-k`: k = {IDLE_K} for every MPI instead of the first day's values "
                   f"platforms/testbed.json had then, {rules}; `default` and `advised` "
                   "alternating, 5 repetitions.", ""]  # fmt: skip
        for mpi in MPIS:
            for tag, patterns in judged:
                preview += decision_section(f"{mpi}-{tag}", f"{mpi}-{tag}", patterns)
        if len(preview) > 5:
            (OUT / page).write_text("\n".join(preview) + "\n")
            lines += preview[2:]
    text = "\n".join(lines) + "\n"
    (OUT / "README.md").write_text(text)
    print(text)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi", choices=sorted(MPIS))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--patterns", type=lambda s: s.split(","), help="e.g. P1,P2 (default all)")
    ap.add_argument("--platform", help="k from here (default: testbed, with --local: local)")
    ap.add_argument(
        "--configs",
        type=lambda s: s.split(","),
        help="only these configurations, e.g. default,advised-iorelay (default all)",
    )
    ap.add_argument("--tag", help="rows to MPI-TAG.jsonl (another advice version, another set)")
    ap.add_argument("--setting", action="append", type=named_setting,
                    help="NAME=ITEM,... another configuration run beside --configs; ITEM: "
                    "hint:KEY=VALUE, mca:KEY=VALUE (sizes as 1M), independent, ionodes=0|1; "
                    "e.g. bpa1m=mca:io_ompio_bytes_per_agg=1M")  # fmt: skip
    ap.add_argument("--set", choices=sorted(SETS), default="a",
                    help="a: P1-P6, b: B1-B4, c: C1-C4, d: D1-D6, e: E1-E6, f: F1-F6, g: G1-G6 "
                    "(--local: a: L1-L3, e: L4-L6, f: L7-L8)")  # fmt: skip
    ap.add_argument("--local", action="store_true", help="LOCAL_SETS on this machine")
    ap.add_argument("--only-direct", action="store_true",
                    help="only the patterns where the advice goes direct")  # fmt: skip
    ap.add_argument("--idle-k", action="store_true",
                    help=f"the advice with k = {IDLE_K} for every MPI (the idle testbed's, now "
                    "also platforms/testbed.json's), whatever the platform file says; the file "
                    "is not changed")  # fmt: skip
    ap.add_argument("--max-minutes", type=float, default=19.0, help="stop starting runs after")
    ap.add_argument("--report", action="store_true", help="tables from the saved runs")
    args = ap.parse_args()
    args.platform = args.platform or ("local" if args.local else "testbed")
    if args.report:
        return report(args)
    if not args.mpi:
        ap.error("--mpi is needed to measure")
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
