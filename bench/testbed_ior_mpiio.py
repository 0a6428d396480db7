"""IOR's collective MPI-IO on the testbed: each MPI's defaults, direct and through one I/O node,
against the settings `iorelay hints` gives for the job (a tool we did not write judging the
collective advice, beside bench/testbed_collective.py's own iorelay-bench runs).

    .venv/bin/python bench/testbed_ior_mpiio.py --mpi ompio|romio321|mpich [--reps 5]
        [--pattern P2] [--max-minutes 18] [--tag T]
    .venv/bin/python bench/testbed_ior_mpiio.py --mpi ompio|romio321|mpich [--pattern P2] --report

The pattern is one of testbed_collective's 1D strided ones (no view: IOR's segments are that
layout), P2 unless `--pattern` names another (G2: held out for the current advice). P2 (1D
strided 256 KiB, 3 MiB per collective call, 4 calls): 12 ranks on node1-node3 (4 per host),
IOR `-a MPIIO -c -w -b 256k -t 256k -s 4 -e` on one shared file (`-e`: MPI_File_sync at the end
of the timed write phase; without `-c` where the advice makes the calls independent). Each
repetition runs, in an order rotated by one per repetition:

- `default`: no hints, no MCA parameters, direct on GlusterFS;
- `default-iorelay`: the same through ion1 (`iorelay run`, as bench/testbed_ior.py);
- `advised`: the settings of `iorelay hints --ranks 12 --ranks-per-node 4 --bytes-per-call 3MiB
  --platform testbed --mpi M --ionodes 1` (P2's job) with its own decision whether to forward
  (testbed_collective.advised_config): ROMIO's hints (OpenMPI's romio321, MPICH) in an IOR hints
  file (`--mpiio.hintsFileName`, lines `IOR_HINT__MPI__KEY=VALUE`; this IOR has no `-U`), OMPIO's
  MCA parameters as OMPI_MCA_* variables of every rank.

Every forwarded run checks the daemon's counters (bytes written >= the bytes IOR wrote), else it
is a failed run. Rows go to bench/results/NAME.jsonl, NAME = testbed-ior-mpiio-M[-PATTERN][-TAG]
(P2's without -PATTERN), as they finish (a rerun skips the (repetition, configuration) pairs
already there, failed ones are kept and tried again); --report writes NAME.md and the CSVs
`iorelay analyze --option settings` reads (NAME-advised-vs-default{,-iorelay}.csv). IOR is built
from ../shared/vendor against OpenMPI or MPICH (bench/vendor_tools.py).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import testbed_collective
import testbed_ior
import testbed_mpiio
from vendor_tools import build_ior, ior_hints_text, parse_ior

from iorelay import mpi, units
from iorelay.simulate import platform_path
from iorelay.testbed import slurm as testbed_slurm
from iorelay.testbed.plan import SHARED_PATH

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
# The 1D strided testbed patterns, by their first word ("P2"): IOR writes no other view.
PATTERNS = {p.name.split()[0]: p for p in testbed_collective.TESTBED_PATTERNS if not p.view}
DEFAULT_PATTERN = "P2"  # strided 256K: 3 hosts x 4 ranks, 4 calls of 3 MiB
Pattern = testbed_collective.Pattern
CONFIGS = ("default", "default-iorelay", "advised")
# The two comparisons `iorelay analyze --option settings` judges, each its own CSV.
COMPARISONS = {"advised-vs-default": ("default", "advised"),
               "advised-vs-default-iorelay": ("default-iorelay", "advised")}  # fmt: skip


def hosts(p: Pattern) -> list[str]:
    return testbed_collective.COMPUTE[: p.hosts]


def ior_options(p: Pattern, collective: bool = True) -> list[str]:
    """IOR's options for pattern `p`: MPI-IO writes (collective unless told), one `request` per
    rank and call, `segments` calls, fsync at the end of the write phase."""
    size = f"{p.request // 1024}k"
    return ["-a", "MPIIO", *(["-c"] if collective else []), "-w", "-b", size, "-t", size, "-s",
            str(p.segments), "-e"]  # fmt: skip


def ior_argv(
    ior: Path, p: Pattern, config: Mapping[str, Any], directory: Path, hints_file: Path | None
) -> list[str]:
    argv = [str(ior), *ior_options(p, config["collective"]), "--mpiio.showHints",
            "-o", str(directory / "ior.dat")]  # fmt: skip
    return argv + ([f"--mpiio.hintsFileName={hints_file}"] if hints_file else [])


def configurations(component: str, platform: Path, p: Pattern) -> dict[str, dict[str, Any]]:
    """name -> {ionodes, collective, hints, mca} (and for `advised` the advice's reason to
    forward or not), as bench/testbed_collective.py turns an Advice into settings."""
    base: dict[str, Any] = {"ionodes": 0, "collective": True, "hints": {}, "mca": {}}
    advice = testbed_collective.advice_for(p, 1, platform, component, keep=False)
    advised = testbed_collective.advised_config(advice, component, base)
    advised["forwarding"] = advice.forwarding
    return {"default": base, "default-iorelay": {**base, "ionodes": 1}, "advised": advised}


def one_run(
    component: str, p: Pattern, config: Mapping[str, Any], work: Path, ior: Path
) -> dict[str, Any]:
    """One IOR run of pattern `p` in `work` with `config`; its row (IOR's figures, the daemon's
    bytes for a forwarded run, which must reach the bytes IOR wrote)."""
    env = {**testbed_mpiio.COMPONENT_ENV.get(component, {}), **config["mca"]}
    hints_file = None
    if config["hints"]:
        hints_file = work / "ior-hints"
        hints_file.write_text(ior_hints_text(config["hints"]))
    if config["ionodes"]:
        root = work / "root"
        root.mkdir()
        argv = ior_argv(ior, p, config, root, hints_file)
        out, total = testbed_ior.forwarded_ranks(p.ranks, argv, work, root, hosts=hosts(p),
                                                 env=env)  # fmt: skip
        written = int(total["bytes_written"])
        if written < p.total:
            raise RuntimeError(f"the daemon wrote {written} of {p.total} bytes: not forwarded")
        return {**parse_ior(out), "daemon_bytes_written": written}
    direct = work / "direct"
    direct.mkdir()
    argv = ior_argv(ior, p, config, direct, hints_file)
    return parse_ior(testbed_ior.direct_ranks(p.ranks, argv, hosts=hosts(p), env=env))


def run_name(args: argparse.Namespace) -> str:
    """testbed-ior-mpiio-M[-PATTERN][-TAG]: a tag keeps another advice version's runs apart."""
    pattern = "" if args.pattern == DEFAULT_PATTERN else f"-{args.pattern}"
    return f"testbed-ior-mpiio-{args.mpi}{pattern}" + (f"-{args.tag}" if args.tag else "")


def rows_path(args: argparse.Namespace) -> Path:
    return RESULTS / f"{run_name(args)}.jsonl"


def measure(args: argparse.Namespace) -> int:
    if not testbed_slurm.SLURM_CONF.exists():
        print("no testbed up (iorelay testbed up)", file=sys.stderr)
        return 1
    ior = build_ior(testbed_mpiio.COMPONENT_LIBRARY[args.mpi]) / "ior"
    p = PATTERNS[args.pattern]
    configs = configurations(args.mpi, platform_path(args.platform), p)
    path = rows_path(args)
    rows = testbed_mpiio.read_rows(path)
    done = {(r["repetition"], r["settings"]) for r in rows if "error" not in r}
    command = ".venv/bin/python bench/testbed_ior_mpiio.py " + shlex.join(sys.argv[1:])
    deadline = time.monotonic() + args.max_minutes * 60
    for rep in range(args.reps):
        shift = rep % len(CONFIGS)
        for name in CONFIGS[shift:] + CONFIGS[:shift]:
            if (rep, name) in done:
                continue
            if time.monotonic() > deadline:
                print(f"stopped at --max-minutes {args.max_minutes}; rerun to go on")
                return 3
            row: dict[str, Any] = {"repetition": rep, "pattern": p.name, "settings": name,
                                   "mpi": args.mpi, "config": configs[name], "command": command,
                                   "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                                   "load_before": testbed_mpiio.load()}  # fmt: skip
            try:
                with tempfile.TemporaryDirectory(prefix="tbiormpi-", dir=SHARED_PATH) as tmp:
                    row |= one_run(args.mpi, p, configs[name], Path(tmp), ior)
            except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
                row["error"] = str(e)[-1500:]
            row["load"] = testbed_mpiio.load()
            with path.open("a") as f:
                f.write(json.dumps(row) + "\n")
            bw = row.get("bandwidth_mib_s")
            said = f"{bw:.1f} MiB/s" if bw else "FAILED " + row["error"][:300]
            print(f"{time.strftime('%H:%M:%S')} rep {rep} {name}: {said}", flush=True)
    return 0


# -- the report -------------------------------------------------------------------------------


def analyze_text(csv: Path) -> str:
    """What `iorelay analyze CSV --option settings` says, up to its first table."""
    iorelay = Path(sys.executable).with_name("iorelay")
    proc = subprocess.run([str(iorelay), "analyze", str(csv), "--option", "settings"],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "COLUMNS": "400"})  # fmt: skip
    text = proc.stdout.split(" Choices that matter")[0].rstrip()
    return text if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr[-500:]}"


def hints_cli(component: str, platform: str, p: Pattern) -> tuple[str, dict[str, Any]]:
    """The `iorelay hints` command for pattern `p`'s job and its JSON answer."""
    argv = ["hints", "--ranks", str(p.ranks), "--ranks-per-node", str(p.ranks_per_host),
            "--bytes-per-call", units.format_bytes(p.bytes_per_call).replace(" ", ""),
            "--platform", platform,
            "--mpi", component, "--ionodes", "1"]  # fmt: skip
    iorelay = Path(sys.executable).with_name("iorelay")
    out = subprocess.run([str(iorelay), *argv, "--json"], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    return "iorelay " + shlex.join(argv), json.loads(out)


def cli_settings(answer: Mapping[str, Any], component: str) -> dict[str, str]:
    """The settings of `iorelay hints --json`'s answer that `component` takes."""
    return dict(answer["ompio_parameters" if component == "ompio" else "romio_hints"])


def report(args: argparse.Namespace) -> int:
    rows = testbed_mpiio.read_rows(rows_path(args))
    if not rows:
        print(f"no runs in {rows_path(args)}", file=sys.stderr)
        return 1
    ok = [r for r in rows if "error" not in r]
    failed = [r for r in rows if "error" in r]
    runs = {c: [r["bandwidth_mib_s"] for r in ok if r["settings"] == c] for c in CONFIGS}
    med = {c: statistics.median(v) if v else math.nan for c, v in runs.items()}
    commands = sorted({r["command"] for r in rows})
    loads = sorted(float(r["load"].split()[0]) for r in rows)  # the 1-minute load average
    p = PATTERNS[args.pattern]
    cli, answer = hints_cli(args.mpi, args.platform, p)
    advised = next(r["config"] for r in rows if r["settings"] == "advised")
    name = run_name(args)
    lines = [f"# IOR collective MPI-IO on the testbed, {args.mpi}: each MPI's defaults against "
             "`iorelay hints`", "",
             f"IOR `{shlex.join(ior_options(p))}` ({p.name} of bench/testbed_collective.py: "
             f"{p.ranks} ranks on {','.join(hosts(p))}, {p.ranks_per_host} per host, "
             f"{units.format_bytes(p.bytes_per_call)} per collective call, "
             f"{p.segments} calls, {units.format_bytes(p.total)} to one shared file "
             "on GlusterFS), IOR built from ../shared/vendor against "
             f"{testbed_mpiio.COMPONENT_LIBRARY[args.mpi]}; I/O node {testbed_ior.IONODE}. "
             + ("" if advised["collective"] else "The advised runs without `-c`: independent "
                "calls, as advised. ")
             + "Write MiB/s as IOR reports it (open to close, with the fsync); configurations "
             "rotated within each repetition.", "",
             "Command: " + "; ".join(f"`{c}`" for c in commands), "",
             f"Runs {rows[0]['date']} to {rows[-1]['date']}; 1-minute load average after each "
             f"run {loads[0]:.2f} to {loads[-1]:.2f}; {len(ok)} runs, {len(failed)} failed.",
             "", f"Advice: `{cli}` (its own decision whether to forward) -> "
             f"{testbed_collective.describe(advised)}, I/O nodes {advised['ionodes']}: "
             f"{advised.get('forwarding', '')}.", ""]  # fmt: skip
    same = (answer["ionodes"], answer["collective"]) == (advised["ionodes"], advised["collective"])
    same = same and cli_settings(answer, args.mpi) == {
        **{k.removeprefix("OMPI_MCA_"): v for k, v in advised["mca"].items()},
        **{k: v for k, v in advised["hints"].items() if k != "cb_config_list"},
    }
    lines += [f"The CLI's JSON answer now {'matches' if same else 'DIFFERS FROM'} the settings "
              "measured" + ("" if args.mpi == "ompio" else " (beside them, cb_config_list=*:1, "
              "as bench/testbed_collective.py sets with every advised hint set)") + ".", "",
              "| configuration | MiB/s (runs, in repetition order) | median | failed |",
              "|---|---|---:|---:|"]  # fmt: skip
    for c in CONFIGS:
        n_failed = sum(r["settings"] == c for r in failed)
        lines.append(f"| {c} | {', '.join(f'{x:.1f}' for x in runs[c])} | {med[c]:.1f} | "
                     f"{n_failed} |")  # fmt: skip
    counters = [r["daemon_bytes_written"] for r in ok if "daemon_bytes_written" in r]
    lines += ["", f"Daemon counters: {len(counters)} forwarded runs, bytes written "
              f"{min(counters, default=0)} to {max(counters, default=0)} (IOR wrote "
              f"{p.total} each; a run below that would have failed).", ""]  # fmt: skip
    hints_seen = sorted({json.dumps(r.get("file_hints", {}), sort_keys=True)
                         for r in ok if r["settings"] == "advised"})  # fmt: skip
    lines += ["Hints the advised runs' file reported (IOR --mpiio.showHints, rank 0): "
              + "; ".join(f"`{h}`" for h in hints_seen), ""]  # fmt: skip
    lines += ["| comparison | ratio of medians | `iorelay analyze --option settings` |",
              "|---|---:|---|"]  # fmt: skip
    texts = []
    for comparison, settings in COMPARISONS.items():
        mine = [r for r in ok if r["settings"] in settings]
        csv = testbed_collective.tidy_csv(f"{name}-{comparison}", mine, RESULTS)
        judged = (testbed_collective.verdicts(csv, [p], advised="advised")
                  if len(mine) > 2 else {})  # fmt: skip
        ratio, said = judged.get(p.name, (med["advised"] / med[settings[0]], "-"))
        lines.append(f"| advised / {settings[0]} | {ratio:.2f} | {said} |")
        texts += ["", f"`.venv/bin/iorelay analyze bench/results/{csv.name} --option settings`:",
                  "", "```", analyze_text(csv), "```"]  # fmt: skip
    lines += texts
    if failed:
        lines += ["", "Failed runs:", ""]
        lines += [f"- rep {r['repetition']} {r['settings']} ({r['date']}): "
                  f"{' '.join(r['error'].split())[:400]}" for r in failed]  # fmt: skip
    text = "\n".join(lines) + "\n"
    (RESULTS / f"{name}.md").write_text(text)
    print(text)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi", choices=sorted(testbed_mpiio.COMPONENT_LIBRARY), required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pattern", choices=sorted(PATTERNS), default=DEFAULT_PATTERN,
                    help="a 1D strided pattern of bench/testbed_collective.py")  # fmt: skip
    ap.add_argument("--platform", default="testbed", help="the advice's platform file")
    ap.add_argument("--max-minutes", type=float, default=18.0, help="stop starting runs after")
    ap.add_argument("--tag", help="rows to testbed-ior-mpiio-M[-PATTERN]-TAG.jsonl (another "
                    "advice version)")  # fmt: skip
    ap.add_argument("--report", action="store_true", help="the tables from the saved runs")
    args = ap.parse_args()
    os.environ[mpi.ENV] = testbed_mpiio.COMPONENT_LIBRARY[args.mpi]
    return report(args) if args.report else measure(args)


if __name__ == "__main__":
    sys.exit(main())
