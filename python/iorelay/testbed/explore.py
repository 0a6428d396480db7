"""`iorelay explore --testbed`: each run of a sweep on the testbed's hosts (docs/testbed.md).

A run is one Slurm allocation of its I/O-node hosts (ion1..ionK) and compute hosts
(node1..nodeN, N = the run's `nodes`): inside it, `iorelay run`'s machinery starts one iorelayd
per I/O node as a Slurm step (none for K = 0: direct access on each host's GlusterFS mount), and
the MPI launcher starts iorelay-bench on the compute hosts only (`mpirun --host` or MPICH's
`mpiexec -hosts`), each rank through `iorelay exec`. The daemons' counters and the bytes through
each I/O node's link (tc) come back with the result; a forwarded run whose daemons carried less
than the benchmark moved is a failure, not a result.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iorelay import mpi, paths
from iorelay.explore_run import (
    RunOutcome,
    SweepStopped,
    bench_argv,
    daemon_columns,
    settled_stats,
)
from iorelay.launch.local import DaemonError
from iorelay.proc_tree import descendants, in_session, live_processes, signal_all
from iorelay.run import RelayConfig, RunError, start_relay
from iorelay.testbed import cluster
from iorelay.testbed import slurm as testbed_slurm
from iorelay.testbed.net import link_bytes
from iorelay.testbed.plan import BRIDGE, SHARED_PATH
from iorelay.testbed.state import State
from iorelay.testbed.system import TestbedError

TESTBED_SWEEP = "sweep_testbed.toml"
SPEC_NAME = "spec.json"
OUTCOME_NAME = "outcome.json"
# Beyond the run's own timeout: salloc, the daemons' 10 s readiness deadline, stopping them.
ALLOCATION_SLACK_S = 30.0


# How often a run looks whether the testbed is still up (a run on a testbed taken down ends).
WATCH_INTERVAL_S = 1.0
# How long salloc may take to give its job up (SIGTERM) before all beneath it is killed.
STOP_GRACE_S = 10.0


class TestbedRunError(RuntimeError):
    """The testbed cannot run this configuration (too few hosts)."""


def is_up() -> bool:
    state = State.load()
    return state is not None and state.doc.get("phase") == "up"


def _gone(during: str) -> SweepStopped:
    return SweepStopped(f"the testbed went down {during} (iorelay testbed down by another user?)")


def testbed_hosts(config: Mapping[str, Any]) -> tuple[list[str], list[str], dict[str, Any]]:
    """(I/O-node hosts, compute hosts, testbed facts) for a run, from the testbed's state."""
    doc = cluster.status()
    if doc is None or doc.get("phase") != "up":
        raise _gone("before the run")
    by_role: dict[str, list[str]] = {"ionode": [], "compute": []}
    for h in doc["hosts"]:
        by_role.setdefault(h["role"], []).append(h["name"])
    k, n = int(config["ionodes"]), int(config["nodes"])
    if k > len(by_role["ionode"]) or n > len(by_role["compute"]):
        raise TestbedRunError(
            f"the run needs {k} I/O-node and {n} compute hosts; the testbed has "
            f"{len(by_role['ionode'])} and {len(by_role['compute'])} (iorelay testbed up "
            "--ionodes K --compute N)"
        )
    return by_role["ionode"][:k], by_role["compute"][:n], doc["facts"]


def mpi_argv(
    compute: Sequence[str], processes: int, env_names: Sequence[str], program: Sequence[str]
) -> list[str]:
    """The MPI launcher for ranks on `compute` only (IORELAY_MPI), each through iorelay exec."""
    launcher = mpi.launcher()
    per_host = -(-processes // len(compute))
    hosts = ",".join(f"{h}:{per_host}" for h in compute)
    names = sorted(env_names)
    if launcher.name == "mpich":
        # Hydra's proxies (srun steps) connect back to mpiexec: on the bridge's address, since
        # this machine's host name resolves to an address the hosts cannot reach.
        argv = ["mpiexec.mpich", "-iface", BRIDGE, "-hosts", hosts, "-n", str(processes)]
        argv += ["-genvlist", ",".join(names)] if names else []
    else:
        argv = ["mpirun", "--host", hosts, "-np", str(processes), "--oversubscribe"]
        argv += ["--allow-run-as-root"] if os.geteuid() == 0 else []
        for name in names:
            argv += ["-x", name]
    return [*argv, sys.executable, "-m", "iorelay.exec_cmd", "--", *program]


def mpi_env() -> dict[str, str]:
    """Ranks on several hosts: OpenMPI needs its TCP transport besides shared memory."""
    if mpi.launcher().name == "mpich":
        return {}
    return {"OMPI_MCA_btl": "self,vader,tcp", "OMPI_MCA_pml": "ob1"}


# -- inside the allocation --------------------------------------------------------------------


def inside(work: Path) -> int:
    """Runs in the allocation: daemons on the I/O nodes, the benchmark on the compute hosts;
    writes OUTCOME_NAME (exit status, counters per daemon, command) into `work`."""
    spec = json.loads((work / SPEC_NAME).read_text())
    config = spec["config"]
    relay_config = RelayConfig(
        ionodes=len(spec["ionode_hosts"]),
        scheduler=config["scheduler"],
        placement=config["placement"],
        ranks_per_node=config["ranks_per_node"],
        root=work / "root",
        hosts=spec["ionode_hosts"],
        compute_hosts=spec["compute_hosts"],
    )
    outcome: dict[str, Any] = {"returncode": None, "stderr": "", "command": "", "daemons": []}
    try:
        with start_relay(relay_config, work / "relay") as relay:
            env = relay.env(preload=False)
            argv = mpi_argv(
                spec["compute_hosts"],
                config["processes"],
                list(env),
                bench_argv(config, tuple(spec["operations"]), relay.root),
            )
            outcome["command"] = shlex.join(argv)
            proc = subprocess.run(
                argv,
                env={**os.environ, **mpi_env(), **env},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=spec["timeout_s"],
                check=False,
            )
            outcome["returncode"] = proc.returncode
            outcome["stderr"] = (proc.stderr or proc.stdout).strip()[-2000:]
            counters = settled_stats(relay.stats, relay_config.root.parent / "bench.json")
            for host, (addr, stats) in zip(spec["ionode_hosts"], counters, strict=True):
                outcome["daemons"].append({"host": host, "address": addr, "stats": stats})
        outcome["daemon_exit_codes"] = relay.daemon_exit_codes
    except subprocess.TimeoutExpired:
        outcome["error"] = f"timeout after {spec['timeout_s']:g} s"
    except (DaemonError, RunError, paths.NotBuiltError, OSError, ValueError) as e:
        outcome["error"] = str(e)
    (work / OUTCOME_NAME).write_text(json.dumps(outcome, indent=1) + "\n")
    return 0


# -- the run, from the login namespace --------------------------------------------------------


def _allocation(hosts: Sequence[str], work: Path, timeout_s: float) -> tuple[int, str]:
    argv = ["salloc", f"--nodes={len(hosts)}", f"--nodelist={','.join(hosts)}", "--quiet",
            sys.executable, "-m", "iorelay.testbed.explore", "--inside", str(work)]  # fmt: skip
    proc = subprocess.Popen(
        argv,
        env={**os.environ, **testbed_slurm.env()},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            out, _ = proc.communicate(timeout=WATCH_INTERVAL_S)
            return proc.returncode, out.strip()[-2000:]
        except subprocess.TimeoutExpired:
            pass
        if not is_up():
            _stop(proc)
            raise _gone("during the run")
        if time.monotonic() > deadline:
            _stop(proc)
            return -1, f"allocation not done within {timeout_s:g} s"


def _stop(proc: subprocess.Popen[str]) -> None:
    """salloc (started in a session of its own) gives its job up on SIGTERM; if it has not
    ended within STOP_GRACE_S, everything of its session is killed. salloc runs its command in
    a process group of its own, and mpirun its srun in another; each holds salloc's output pipe
    until it ends. A process stuck on a mount that went away may not die even then: its pipe is
    left behind rather than waited for."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.communicate(timeout=STOP_GRACE_S)
        return
    except subprocess.TimeoutExpired:
        pass
    deadline = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < deadline:  # until none is left: one may fork while being killed
        now = live_processes()
        left = {*in_session(proc.pid, now), *descendants(proc.pid, now)}
        if not left:
            break
        signal_all(sorted(left), signal.SIGKILL)
        time.sleep(0.05)
    try:
        proc.communicate(timeout=1)
    except subprocess.TimeoutExpired:
        if proc.stdout is not None:
            proc.stdout.close()
        proc.kill()
        proc.wait()


def run_one(config: Mapping[str, Any], operations: tuple[str, ...], timeout_s: float) -> RunOutcome:
    """One run on the testbed, in a fresh directory on GlusterFS (SHARED_PATH)."""
    start = time.monotonic()
    try:
        ion, compute, facts = testbed_hosts(config)
    except TestbedRunError as e:
        return RunOutcome(None, time.monotonic() - start, str(e))
    try:
        work = Path(tempfile.mkdtemp(prefix="explore-", dir=SHARED_PATH))
    except OSError:
        if not is_up():
            raise _gone("before the run") from None
        raise
    try:
        outcome = _run_in(work, config, operations, timeout_s, (ion, compute, facts), start)
    except (TestbedError, OSError) as e:  # a link or mount that is gone
        outcome = RunOutcome(None, time.monotonic() - start, str(e))
    finally:
        if is_up():  # else `down` removed it (and an rm on a mount going away may block)
            subprocess.run(["rm", "-rf", str(work)], check=False, timeout=120)
    if outcome.error and not is_up():  # not the configuration's failure: the testbed's
        raise _gone("during the run")
    return outcome


def _run_in(
    work: Path,
    config: Mapping[str, Any],
    operations: tuple[str, ...],
    timeout_s: float,
    hosts_facts: tuple[list[str], list[str], dict[str, Any]],
    start: float,
) -> RunOutcome:
    ion, compute, facts = hosts_facts
    spec = {"config": dict(config), "operations": list(operations), "timeout_s": timeout_s,
            "ionode_hosts": ion, "compute_hosts": compute}  # fmt: skip
    (work / SPEC_NAME).write_text(json.dumps(spec, indent=1) + "\n")
    state = State.load()
    if state is None:
        raise _gone("before the run")
    hosts = {h.name: h for h in cluster.hosts_of(state)}
    before = {h: link_bytes(hosts[h]) for h in ion}
    code, out = _allocation([*ion, *compute], work, timeout_s + ALLOCATION_SLACK_S)
    after = {h: link_bytes(hosts[h]) for h in ion}
    seconds = time.monotonic() - start
    try:
        outcome = json.loads((work / OUTCOME_NAME).read_text())
    except (OSError, json.JSONDecodeError):
        return RunOutcome(None, seconds, f"salloc exit {code}, no outcome: {out}")
    bench_path = work / "bench.json"
    bench = json.loads(bench_path.read_text()) if bench_path.exists() else None
    command = outcome.get("command", "")
    if outcome.get("error") or outcome["returncode"] != 0 or bench is None:
        why = outcome.get("error") or f"exit {outcome['returncode']}: {outcome['stderr']}"
        return RunOutcome(bench, seconds, why, command)
    info: dict[str, Any] = {
        "platform": "testbed",
        "compute_hosts": len(compute),
        "ionode_hosts": ",".join(ion),
        "mpi": mpi.launcher().name,
        "volume_options": ";".join(f"{k}={v}" for k, v in facts.get("volume_options", {}).items()),
        "ionode_link_mib": round(
            sum(after[h]["received"] - before[h]["received"] for h in ion) / 2**20, 2
        ),
    }
    if ion:
        cols, error = daemon_columns(outcome["daemons"], bench)
        info.update(cols)
        codes = outcome.get("daemon_exit_codes") or []
        if not error and any(c != 0 for c in codes):
            error = f"daemons exited with {codes} on SIGTERM (expected 0)"
        if error:
            return RunOutcome(bench, seconds, error, command)
    return RunOutcome(bench, seconds, "", command, info)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m iorelay.testbed.explore")
    p.add_argument("--inside", type=Path, required=True, help="run directory (in an allocation)")
    args = p.parse_args(argv)
    return inside(args.inside)


if __name__ == "__main__":
    sys.exit(main())
