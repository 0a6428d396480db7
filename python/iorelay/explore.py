"""`iorelay explore`: runs a sweep of access patterns x I/O-node counts x schedulers, for real.

The sweep (TOML; the embedded sweep_default.toml when none is given) expands to one run per
configuration and repetition, in a seeded random order. Each run starts its daemons with
`iorelay run`'s machinery in a fresh directory under /tmp and runs
`mpirun -np P ... python -m iorelay.exec_cmd -- iorelay-bench ...`; its configuration and result
become rows of OUT/results.csv (and a Parquet copy). Runs already there are skipped: resumable.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from iorelay import __version__, explore_sim, mpi, paths, units
from iorelay.explore_run import (
    Runner,
    RunOutcome,
    SweepStopped,
    bench_argv,
    bench_env,
    daemon_columns,
    settled_stats,
)
from iorelay.launch.local import DaemonError
from iorelay.results import ResultsFile, rows_from_bench, run_key
from iorelay.run import PLACEMENTS, RelayConfig, RunError, start_relay
from iorelay.simulate import SimulateError

DEFAULT_SWEEP = "sweep_default.toml"
DEFAULT_OUT = "explore-results"
PATTERN_DEFAULTS: dict[str, Any] = {
    "layout": "shared",
    "spatiality": "contiguous",
    "processes": 4,
    "ranks_per_node": 1,
    "request": "64K",
    "total": "32M",
    "stonewall_s": 0.0,
    "wearout": False,
    "odirect": False,
    "fsync": False,
    # MPI-IO (iorelay-bench --api mpiio): collective calls, a number of aggregators (0: the MPI's
    # own choice) and extra hints "key=value,key=value". POSIX runs keep none of these columns.
    "api": "posix",
    "collective": False,
    "aggregators": 0,
    "hints": "",
}
APIS = ("posix", "mpiio")
RELAY_DEFAULTS: dict[str, Any] = {"ionodes": 0, "scheduler": "fifo", "placement": "block"}
SWEEP_DEFAULTS: dict[str, Any] = {"seed": 1, "repetitions": 5, "timeout_s": 120.0}


class SweepError(ValueError):
    """The sweep file is malformed (unknown key, bad size, impossible combination)."""


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep: the runs (configurations with repetition) and how to run them."""

    runs: list[dict[str, Any]]
    operations: tuple[str, ...]
    timeout_s: float
    source: str


def parse_size(value: int | str) -> int:
    """64 → 64, "64K" → 65536, "64kB" → 64000: the units rule (iorelay.units)."""
    try:
        return units.parse_bytes(value)
    except units.UnitError as e:
        raise SweepError(str(e)) from None


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def _section(doc: Mapping[str, Any], name: str, defaults: Mapping[str, Any]) -> dict[str, Any]:
    given = dict(doc.get(name, {}))
    unknown = set(given) - set(defaults) - ({"operations"} if name == "pattern" else set())
    if unknown:
        known = sorted({*defaults, *(["operations"] if name == "pattern" else [])})
        raise SweepError(f"[{name}]: unknown keys {sorted(unknown)}; known: {known}")
    return {**defaults, **given}


def _mpiio(values: Mapping[str, Any]) -> dict[str, Any] | None:
    """The MPI-IO columns of a run ({} for POSIX), or None for a combination no run can have:
    collective calls, aggregators or hints without MPI-IO, aggregators without collective calls,
    O_DIRECT with MPI-IO (iorelay-bench refuses it)."""
    api = str(values["api"])
    if api not in APIS:
        raise SweepError(f"[pattern] api must be one of {list(APIS)}, got {api!r}")
    aggregators, hints = int(values["aggregators"]), str(values["hints"])
    if aggregators < 0:
        raise SweepError(f"[pattern] aggregators must be >= 0, got {aggregators}")
    if any("=" not in h for h in hints.split(",") if h):
        raise SweepError(f"[pattern] hints are key=value,key=value, got {hints!r}")
    collective = bool(values["collective"])
    if api == "posix":
        return None if (collective or aggregators or hints) else {}
    if values["odirect"] or (aggregators and not collective):
        return None
    return {"api": api, "collective": collective, "aggregators": aggregators, "hints": hints}


def _configuration(values: Mapping[str, Any]) -> dict[str, Any] | None:
    """One run's effective configuration in results-column names; None if impossible."""
    if values["layout"] == "fpp" and values["spatiality"] == "strided":
        return None  # file per process is only contiguous
    mpiio = _mpiio(values)
    if mpiio is None:
        return None
    processes, rpn = int(values["processes"]), int(values["ranks_per_node"])
    return mpiio | {
        "layout": values["layout"],
        "spatiality": values["spatiality"],
        "nodes": -(-processes // rpn),
        "processes": processes,
        "ranks_per_node": rpn,
        "request_bytes": parse_size(values["request"]),
        "total_bytes": parse_size(values["total"]),
        "odirect": bool(values["odirect"]),
        "fsync": bool(values["fsync"]),
        "stonewall_s": float(values["stonewall_s"]),
        "wearout": bool(values["wearout"]),
        "ionodes": int(values["ionodes"]),
        "scheduler": str(values["scheduler"]),
        "placement": str(values["placement"]),
    }


def check_relay_values(runs: list[dict[str, Any]]) -> None:
    """SweepError for a [relay] value no run could use, before any run: a negative I/O-node
    count, an unknown placement, a scheduler spec the daemon refuses (asked of the built
    iorelayd's --print-config; not checked without a build)."""
    for r in runs:
        if r["ionodes"] < 0:
            raise SweepError(f"[relay] ionodes must be >= 0, got {r['ionodes']}")
        if r["placement"] not in PLACEMENTS and not r["placement"].startswith("map:"):
            raise SweepError(
                f"[relay] unknown placement {r['placement']!r}: {', '.join(PLACEMENTS)} or map:F"
            )
    specs = sorted({r["scheduler"] for r in runs if r["ionodes"] > 0})
    try:
        daemon = paths.find("iorelayd")
    except paths.NotBuiltError:
        return
    for spec in specs:
        argv = [str(daemon), "--scheduler", spec, "--print-config"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        if done.returncode != 0:
            why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "refused"
            raise SweepError(f"[relay] scheduler {spec!r}: {why}")


def parse_sweep(text: str, source: str = "<sweep>") -> Sweep:
    """Expands a sweep document into its runs, shuffled with the sweep's seed."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"{source}: {e}") from e
    unknown = set(doc) - {"sweep", "pattern", "relay"}
    if unknown:
        raise SweepError(f"{source}: unknown sections {sorted(unknown)}")
    sweep = _section(doc, "sweep", SWEEP_DEFAULTS)
    pattern = _section(doc, "pattern", PATTERN_DEFAULTS)
    operations = tuple(_as_list(pattern.pop("operations", ["write", "read"])))
    if not operations or set(operations) - {"write", "read"} or "write" not in operations:
        raise SweepError(f"{source}: operations must be ['write'] or ['write', 'read']")
    dims = {**pattern, **_section(doc, "relay", RELAY_DEFAULTS)}
    keys = list(dims)
    configs: list[dict[str, Any]] = []
    for combo in itertools.product(*(_as_list(dims[k]) for k in keys)):
        config = _configuration(dict(zip(keys, combo, strict=True)))
        if config is not None and config not in configs:
            configs.append(config)
    runs = [{**c, "repetition": rep} for rep in range(int(sweep["repetitions"])) for c in configs]
    random.Random(sweep["seed"]).shuffle(runs)
    return Sweep(runs, operations, float(sweep["timeout_s"]), source)


def load_sweep(path: str | os.PathLike[str] | None, default: str = DEFAULT_SWEEP) -> Sweep:
    """The sweep in `path`, or the embedded sweep `default`."""
    if path is None:
        text = resources.files("iorelay").joinpath(default).read_text()
        return parse_sweep(text, f"(default) {default}")
    return parse_sweep(Path(path).read_text(), str(path))


# -- one run ----------------------------------------------------------------------------------


def mpirun_prefix(processes: int, env_names: Sequence[str] = ()) -> list[str]:
    """The MPI launcher for one machine (IORELAY_MPI, python/iorelay/mpi.py), carrying
    `env_names`. Run it with the launcher's run_env in the environment."""
    return mpi.launcher().prefix(processes, env_names)


def mpirun_argv(processes: int, env_names: list[str], program: list[str]) -> list[str]:
    """mpirun ... python -m iorelay.exec_cmd -- PROGRAM: each rank gets the interposer."""
    return [*mpirun_prefix(processes, env_names), sys.executable, "-m", "iorelay.exec_cmd", "--",
            *program]  # fmt: skip


def run_one(config: Mapping[str, Any], operations: tuple[str, ...], timeout_s: float) -> RunOutcome:
    """One run in a fresh disk-backed directory under /tmp (not /dev/shm: O_DIRECT). A
    forwarded run's daemons' counters become columns; a run they did not carry fails."""
    start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="iorelay-explore-", dir="/tmp"))
    relay_config = RelayConfig(
        ionodes=config["ionodes"],
        scheduler=config["scheduler"],
        placement=config["placement"],
        ranks_per_node=config["ranks_per_node"],
        root=work / "root",
    )
    command = ""
    try:
        with start_relay(relay_config, work) as relay:
            env = relay.env(preload=False) | bench_env(config)
            argv = mpirun_argv(
                config["processes"], list(env), bench_argv(config, operations, relay.root)
            )
            command = shlex.join(argv)
            proc = subprocess.run(
                argv,
                env={**os.environ, **mpi.launcher().run_env, **env},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
            stats = settled_stats(relay.stats, work / "bench.json")
            daemons = [{"host": addr, "stats": s} for addr, s in stats]
        out = work / "bench.json"
        bench = json.loads(out.read_text()) if out.exists() else None
        if proc.returncode != 0 or bench is None:
            tail = (proc.stderr or proc.stdout).strip()[-2000:]
            return RunOutcome(bench, time.monotonic() - start, f"exit {proc.returncode}: {tail}")
        info, error = daemon_columns(daemons, bench) if daemons else ({}, "")
        if not error and any(code != 0 for code in relay.daemon_exit_codes):
            error = f"daemons exited with {relay.daemon_exit_codes} on SIGTERM (expected 0)"
        return RunOutcome(bench, time.monotonic() - start, error, command, info)
    except subprocess.TimeoutExpired:
        return RunOutcome(None, time.monotonic() - start, f"timeout after {timeout_s:g} s", command)
    except (DaemonError, RunError, paths.NotBuiltError, OSError, ValueError) as e:
        return RunOutcome(None, time.monotonic() - start, str(e), command)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- the sweep --------------------------------------------------------------------------------


def _label(c: Mapping[str, Any]) -> str:
    return (
        f"{c['layout']}/{c['spatiality']} t={c['request_bytes'] // 1024}K "
        f"ionodes={c['ionodes']} rep={c['repetition']}"
    )


@dataclass(frozen=True)
class Simulated:
    """Run the sweep on a simulated platform instead (iorelay.explore_sim)."""

    platform: str
    requests_per_rank: int


def _simulated_sweep(sweep: Sweep, sim: Simulated) -> Sweep:
    # The platform and the request cap belong to a simulated run's configuration (and run_key).
    extra = {"platform": sim.platform, "requests_per_rank": sim.requests_per_rank}
    return Sweep([{**r, **extra} for r in sweep.runs], sweep.operations, sweep.timeout_s,
                 sweep.source)  # fmt: skip


def _run_rows(
    config: dict[str, Any], sweep: Sweep, runner: Runner, sim: Simulated | None
) -> tuple[list[dict[str, Any]], RunOutcome]:
    """Rows of one run, simulated or real (by `runner`), and its outcome (error, seconds,
    command)."""
    if sim is not None:
        start = time.monotonic()
        try:
            rows = explore_sim.simulate_run(config, sweep.operations, sim.platform,
                                            sim.requests_per_rank)  # fmt: skip
        except SimulateError as e:
            return [], RunOutcome(None, time.monotonic() - start, str(e))
        return rows, RunOutcome(None, time.monotonic() - start, "", rows[0]["command"])
    outcome = runner(config, sweep.operations, sweep.timeout_s)
    if outcome.error or outcome.bench is None:
        return [], outcome
    return rows_from_bench(config, outcome.bench, {"source": "measured"}), outcome


def explore(
    sweep: Sweep,
    out_dir: Path,
    dry_run: bool,
    console: Console,
    runner: Runner | None = None,
    sim: Simulated | None = None,
) -> int:
    """Runs the sweep's runs that are not in out_dir's results yet (each with `runner`, default
    run_one: on this machine; or simulated with `sim`). Returns an exit status; a runner that
    cannot go on raises SweepStopped, which ends the sweep (the runs done so far are kept)."""
    runner = runner or run_one
    if sim is not None:
        sweep = _simulated_sweep(sweep, sim)
    results = ResultsFile(out_dir)
    done = results.done_keys()
    todo = [r for r in sweep.runs if run_key(r) not in done]
    console.print(
        f"sweep {sweep.source}: {len(sweep.runs)} runs, {len(sweep.runs) - len(todo)} already "
        f"in {results.csv_path}, {len(todo)} to run"
    )
    cpus = os.cpu_count() or 1
    if dry_run:
        for r in todo:
            console.print(f"  {_label(r)}  [dim]{run_key(r)}[/dim]")
        return 0
    extra = {"host": os.uname().nodename, "cpus": cpus, "iorelay_version": __version__}
    failures = 0
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("explore", total=len(todo))
        for config in todo:
            progress.update(task, description=_label(config))
            rows, outcome = _run_rows(config, sweep, runner, sim)
            info = {
                **extra,
                # more runnable processes than cores: MPI ranks poll and compete with daemons
                "oversubscribed": config["processes"] + config["ionodes"] > cpus,
                "run_seconds": round(outcome.seconds, 3),
                "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": outcome.command,
                **outcome.info,
            }
            if outcome.error:
                failures += 1
                progress.console.print(f"[red]failed[/red] {_label(config)}: {outcome.error}")
                results.append_failure({"run_key": run_key(config), **config, **info,
                                        "error": outcome.error})  # fmt: skip
            else:
                results.append([{**row, **info, "command": row.get("command") or info["command"]}
                                for row in rows])  # fmt: skip
            progress.advance(task)
    parquet = results.write_parquet()
    console.print(
        f"{len(todo) - failures} runs done, {failures} failed; results: {results.csv_path}"
        + (f" and {parquet}" if parquet else "")
    )
    if failures:
        console.print(f"failed runs are in {results.failures_path}; run again to retry them")
    crowded = 0 if sim else sum(r["processes"] + r["ionodes"] > cpus for r in todo)
    if crowded:
        console.print(
            f"note: {crowded} runs had more ranks + daemons than the {cpus} cores (column "
            "oversubscribed): polling MPI ranks competed with the daemons for the CPU"
        )
    return 1 if failures else 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "explore",
        help="run a sweep of patterns x I/O nodes x schedulers (resumable)",
        description="Run every configuration of SWEEP.toml (default: the embedded sweep) with "
        "iorelay-bench under mpirun, in random order, skipping runs already in OUT.",
    )
    p.add_argument("sweep", nargs="?", help="sweep file (TOML); default: the embedded sweep")
    p.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), help="results directory")
    p.add_argument("--dry-run", action="store_true", help="list the runs to do, run nothing")
    p.add_argument(
        "--testbed",
        action="store_true",
        help="run on the testbed's hosts through Slurm (iorelay testbed up; default sweep: "
        "the embedded sweep_testbed.toml)",
    )
    p.add_argument(
        "--simulate",
        metavar="PLATFORM",
        help="run the sweep on a simulated platform (platforms/NAME.json or a path) instead",
    )
    p.add_argument(
        "--requests-per-rank",
        type=int,
        default=explore_sim.DEFAULT_REQUESTS_PER_RANK,
        help="with --simulate: at most this many requests per rank (0: the pattern's total)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    runner: Runner | None = None
    default = DEFAULT_SWEEP
    if getattr(args, "testbed", False):
        from iorelay.testbed import (
            explore as testbed_explore,  # imports the testbed's modules only when asked
        )

        runner, default = testbed_explore.run_one, testbed_explore.TESTBED_SWEEP
        if not args.dry_run and not testbed_explore.is_up():  # (not once per run)
            print("iorelay explore: no testbed is up: `iorelay testbed up` first (root)",
                  file=sys.stderr)  # fmt: skip
            return 2
    sim = None
    try:
        sweep = load_sweep(args.sweep, default)
        check_relay_values(sweep.runs)
        if getattr(args, "simulate", None) is not None:
            if runner is not None:
                raise SweepError("--simulate and --testbed exclude each other")
            sim = Simulated(args.simulate, args.requests_per_rank)
            explore_sim.check_sweep(sweep.runs, args.simulate)
    except (SweepError, SimulateError, OSError) as e:
        print(f"iorelay explore: {e}", file=sys.stderr)
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        try:
            if runner is None or args.dry_run:
                return explore(sweep, args.out, args.dry_run, console, runner, sim)
            return _explore_on_the_testbed(sweep, args.out, console, runner)
        except SweepStopped as e:
            print(f"iorelay explore: {e}; run again to resume", file=sys.stderr)
            return 1
    print("iorelay explore: interrupted; run again to resume", file=sys.stderr)
    return 130


def _explore_on_the_testbed(sweep: Sweep, out: Path, console: Console, runner: Runner) -> int:
    """The sweep while this process holds the testbed: nobody takes it down under the runs."""
    from iorelay.testbed import cluster
    from iorelay.testbed.system import TestbedError

    try:
        with cluster.held():
            return explore(sweep, out, False, console, runner)
    except TestbedError as e:
        raise SweepStopped(str(e)) from None


def main() -> int:
    """`python -m iorelay.explore`, for use before the subcommand is registered."""
    parser = argparse.ArgumentParser(prog="iorelay explore")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    return run(parser.parse_args(["explore", *sys.argv[1:]]))


if __name__ == "__main__":
    sys.exit(main())
