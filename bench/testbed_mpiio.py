"""`iorelay-bench --api mpiio` on the testbed's compute hosts, from inside one Slurm allocation:
the shared launcher of bench/collective_saturation.py --testbed and bench/testbed_collective.py.

A caller re-executes itself under `salloc` (`in_allocation`) so that a batch of runs shares one
allocation; each run then starts its ranks with the MPI's launcher on the hosts it names
(OpenMPI `mpirun --host`, MPICH `mpiexec -hosts`, as `iorelay explore --testbed`), each rank
through `iorelay exec`, and, when asked, one iorelayd per I/O-node host as a Slurm step. The
files go to the testbed's GlusterFS (SHARED_PATH, the same path on every host).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iorelay import mpi, paths
from iorelay.run import RelayConfig, start_relay
from iorelay.testbed import slurm as testbed_slurm
from iorelay.testbed.explore import mpi_argv, mpi_env
from iorelay.testbed.plan import SHARED_PATH

RUN_TIMEOUT_S = 300.0
COMPONENT_ENV = {"ompio": {"OMPI_MCA_io": "ompio"}, "romio321": {"OMPI_MCA_io": "romio321"}}


def in_allocation(hosts: Sequence[str]) -> int | None:
    """Outside an allocation: runs this very command again under `salloc` of `hosts` and returns
    its exit status. Inside one: None (go on)."""
    if os.environ.get("SLURM_JOB_ID"):
        return None
    if not testbed_slurm.SLURM_CONF.exists():
        raise SystemExit("no testbed up (iorelay testbed status)")
    argv = ["salloc", f"--nodes={len(hosts)}", f"--nodelist={','.join(hosts)}", "--quiet",
            sys.executable, *sys.argv]  # fmt: skip
    return subprocess.run(argv, env={**os.environ, **testbed_slurm.env()}, check=False).returncode


def work_dir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix=prefix, dir=SHARED_PATH)


# The MPI library each MPI-IO component runs in (bench_on_hosts' `mpi_name`): OpenMPI's
# OMPIO and ROMIO, MPICH's ROMIO.
COMPONENT_LIBRARY = {"ompio": "openmpi", "romio321": "openmpi", "mpich": "mpich"}


def bench_on_hosts(
    mpi_name: str,
    hosts: Sequence[str],
    ranks: int,
    directory: str,
    options: Sequence[str],
    env: Mapping[str, str],
) -> dict[str, Any]:
    """One `iorelay-bench --api mpiio` run of `ranks` ranks spread evenly over `hosts`, with the
    files in `directory`; its JSON result. `env` goes to every rank (and selects OpenMPI's io
    component); `mpi_name` is openmpi or mpich."""
    os.environ[mpi.ENV] = mpi_name
    launcher = mpi.launcher()
    output = Path(directory) / f"bench-{os.getpid()}.json"
    output.unlink(missing_ok=True)
    program = [str(paths.find(launcher.bench)), "--api", "mpiio", "--dir", directory,
               "--output", str(output), *options]  # fmt: skip
    argv = mpi_argv(hosts, ranks, list(env), program)
    return run_bench(argv, {**os.environ, **mpi_env(), **env}, output)


def run_bench(argv: Sequence[str], env: Mapping[str, str], output: Path) -> dict[str, Any]:
    """Runs one iorelay-bench command line and returns the JSON it wrote to `output` (then
    removed); a failed run or a result that is not ok raises with the command and its output."""
    proc = subprocess.run(list(argv), env=dict(env), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                          check=False)  # fmt: skip
    if proc.returncode != 0 or not output.exists():
        raise RuntimeError(f"{shlex.join(argv)}\n{proc.stderr[-2000:]}{proc.stdout[-1000:]}")
    result = json.loads(output.read_text())
    output.unlink()
    if not result["ok"]:
        raise RuntimeError(f"not ok: {shlex.join(argv)}\n{proc.stderr[-2000:]}")
    return result


def forwarded_bench(
    mpi_name: str,
    hosts: Sequence[str],
    ionode_hosts: Sequence[str],
    ranks: int,
    work: Path,
    options: Sequence[str],
    env: Mapping[str, str],
) -> tuple[dict[str, Any], int]:
    """The same run through one iorelayd per host of `ionode_hosts` (Slurm steps of this
    allocation), rooted in `work`/root; the result and the bytes the daemons wrote."""
    config = RelayConfig(ionodes=len(ionode_hosts), hosts=list(ionode_hosts),
                         compute_hosts=list(hosts), root=work / "root",
                         ranks_per_node=max(1, ranks // len(hosts)))  # fmt: skip
    (work / "root").mkdir(exist_ok=True)
    with start_relay(config, work / "relay") as relay:
        result = bench_on_hosts(mpi_name, hosts, ranks, relay.prefix, options,
                                {**env, **relay.env(preload=False)})  # fmt: skip
        stats = [s for _, s in relay.stats()]
    if not all(isinstance(s, dict) for s in stats):
        raise RuntimeError(f"no counters from an I/O node: {stats}")
    return result, sum(int(s["total"]["bytes_written"]) for s in stats)


def phase_mib_s(result: Mapping[str, Any], operation: str = "write") -> float:
    (phase,) = [p for p in result["phases"] if p["operation"] == operation]
    return float(phase["bandwidth_mib_s"])


def load() -> str:
    """The 1-, 5- and 15-minute load averages, as /proc/loadavg gives them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def add_quiet_options(ap: argparse.ArgumentParser) -> None:
    """--max-load and --wait-minutes, for a bench that measures only on a quiet machine."""
    ap.add_argument("--max-load", type=float, default=2.0,
                    help="start only at or below this 1-minute load average")  # fmt: skip
    ap.add_argument("--wait-minutes", type=float, default=5.0,
                    help="how long to wait for it before refusing")  # fmt: skip


def quiet(bench: str, what: str, args: argparse.Namespace) -> bool:
    """True once the 1-minute load average is at most args.max_load, polling for
    args.wait_minutes; else says why `bench` will not measure `what` now, and False. (On the
    testbed the hosts share this machine's cores: a busy machine's figures measure its load.)"""
    deadline = time.monotonic() + args.wait_minutes * 60
    while float(load().split()[0]) > args.max_load:
        if time.monotonic() > deadline:
            print(f"{bench}: the 1-minute load average stayed above --max-load {args.max_load} "
                  f"for {args.wait_minutes} minutes ({load()}); {what} measured on a busy "
                  "machine measures its load. Stop what runs, or raise --max-load and say so "
                  "beside the result.", file=sys.stderr)  # fmt: skip
            return False
        time.sleep(5)
    return True


def bench_local(
    mpi_name: str, ranks: int, directory: str, options: Sequence[str], env: Mapping[str, str]
) -> dict[str, Any]:
    """The same run with every rank on this machine (shared-memory transport)."""
    launcher = mpi.LAUNCHERS[mpi_name]
    output = Path(directory) / f"bench-{os.getpid()}.json"
    output.unlink(missing_ok=True)
    program = [str(paths.find(launcher.bench)), "--api", "mpiio", "--dir", directory,
               "--output", str(output), *options]  # fmt: skip
    argv = [*launcher.prefix(ranks, list(env)), sys.executable, "-m", "iorelay.exec_cmd", "--",
            *program]  # fmt: skip
    return run_bench(argv, {**os.environ, **launcher.run_env, **env}, output)


def forwarded_local(
    mpi_name: str, ranks: int, work: Path, options: Sequence[str], env: Mapping[str, str]
) -> tuple[dict[str, Any], int]:
    """bench_local through one local iorelayd rooted in `work`/root; the result and the bytes
    the daemon wrote."""
    config = RelayConfig(ionodes=1, root=work / "root", ranks_per_node=ranks)
    (work / "root").mkdir(exist_ok=True)
    with start_relay(config, work / "relay") as relay:
        result = bench_local(mpi_name, ranks, relay.prefix, options,
                             {**env, **relay.env(preload=False)})  # fmt: skip
        stats = [s for _, s in relay.stats()]
    if not all(isinstance(s, dict) for s in stats):
        raise RuntimeError(f"no counters from the I/O node: {stats}")
    return result, sum(int(s["total"]["bytes_written"]) for s in stats)


def bench_placed(
    mpi_name: str,
    hosts: Sequence[str],
    ranks: int,
    work: Path,
    options: Sequence[str],
    env: Mapping[str, str],
    *,
    forwarded: bool,
    local: bool,
    ionode: str,
    expected_bytes: int,
) -> tuple[dict[str, Any], int | None]:
    """One run where a measurement puts it: on this machine (`local`) or on `hosts`, direct in
    `work`/direct or through one iorelayd (here, or on the testbed host `ionode`). The result,
    and for a forwarded run the bytes the daemon wrote, which must reach `expected_bytes` (else
    the run did not go through the relay); None for a direct run."""
    if forwarded:
        if local:
            result, written = forwarded_local(mpi_name, ranks, work, options, env)
        else:
            result, written = forwarded_bench(mpi_name, hosts, [ionode], ranks, work, options, env)
        if written < expected_bytes:
            raise RuntimeError(
                f"the I/O node wrote {written} of {expected_bytes} bytes: not forwarded"
            )
        return result, written
    (work / "direct").mkdir(exist_ok=True)
    where = str(work / "direct")
    if local:
        return bench_local(mpi_name, ranks, where, options, env), None
    return bench_on_hosts(mpi_name, hosts, ranks, where, options, env), None


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a measurement's JSON-lines file (none when it does not exist yet)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
