"""Slurm on the testbed: munged and slurmctld in the root namespace (on the bridge address),
one slurmd per compute and I/O-node host in that host's network namespace, with its own host
name (UTS namespace) and mount namespace, in which the host's GlusterFS mount is bound at the
common path SHARED_PATH. Job steps run as children of their node's slurmd, so they inherit
its namespaces.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable
from pathlib import Path

from iorelay.testbed.plan import RUN_DIR, SHARED_PATH, Host, TestbedConfig, bridge_address
from iorelay.testbed.state import State
from iorelay.testbed.system import TestbedError, exited, in_netns, sh, spawn, start_time

SLURM_DIR = RUN_DIR / "slurm"
SLURM_CONF = SLURM_DIR / "slurm.conf"
MUNGE_DIR = RUN_DIR / "munge"
MUNGE_SOCKET = MUNGE_DIR / "munge.socket.2"
LOG_DIR = RUN_DIR / "log"
# Not Slurm's default ports, so the testbed does not collide with a Slurm of the machine.
SLURMCTLD_PORT = 16817
SLURMD_PORT = 16818
READY_TIMEOUT_S = 60.0


def env() -> dict[str, str]:
    """What `srun`, `salloc`, `sinfo` need to talk to the testbed's Slurm."""
    return {"SLURM_CONF": str(SLURM_CONF)}


def start_munged(state: State) -> None:
    MUNGE_DIR.mkdir(parents=True, exist_ok=True)
    os.chmod(MUNGE_DIR, 0o755)  # munged refuses a socket directory others cannot search
    key = MUNGE_DIR / "munge.key"
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o400)
    with os.fdopen(fd, "wb") as f:
        f.write(secrets.token_bytes(1024))
    pid = spawn(
        ["munged", "--foreground", "--force", f"--socket={MUNGE_SOCKET}", f"--key-file={key}",
         f"--pid-file={MUNGE_DIR}/munged.pid", f"--seed-file={MUNGE_DIR}/munged.seed",
         f"--log-file={LOG_DIR}/munged.log"],
        LOG_DIR / "munged.out",
    )  # fmt: skip
    state.record("process", name="munged", pid=pid, started=start_time(pid))
    _wait(lambda: MUNGE_SOCKET.exists(), pid, "munged", LOG_DIR / "munged.log", 10.0)


def write_conf(config: TestbedConfig, hosts: list[Host]) -> None:
    SLURM_DIR.mkdir(parents=True, exist_ok=True)
    lines = [
        "# iorelay testbed (iorelay testbed up); removed by iorelay testbed down",
        "ClusterName=iorelaytb",
        f"SlurmctldHost={socket.gethostname()}({bridge_address(config)})",
        f"SlurmctldPort={SLURMCTLD_PORT}",
        f"SlurmdPort={SLURMD_PORT}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={MUNGE_SOCKET}",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"StateSaveLocation={SLURM_DIR}/ctld",
        f"SlurmdSpoolDir={SLURM_DIR}/%n",
        f"SlurmctldPidFile={SLURM_DIR}/slurmctld.pid",
        f"SlurmdPidFile={SLURM_DIR}/%n/slurmd.pid",
        f"SlurmctldLogFile={LOG_DIR}/slurmctld.log",
        f"SlurmdLogFile={LOG_DIR}/%n/slurmd.log",
        # No cgroups here (slurmd runs in namespaces): track processes by parentage.
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "SwitchType=switch/none",
        "MpiDefault=none",
        "ReturnToService=2",
        "SchedulerType=sched/builtin",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SlurmdParameters=config_overrides",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=30",
        "InactiveLimit=0",
        "KillWait=5",
        "MinJobAge=30",
        "TmpFS=/tmp",
    ]
    for h in hosts:
        lines.append(
            f"NodeName={h.name} NodeAddr={h.address} NodeHostname={h.name} CPUs=4 "
            f"Feature={h.role} State=UNKNOWN"
        )
    names = ",".join(h.name for h in hosts)
    lines.append(f"PartitionName=testbed Nodes={names} Default=YES MaxTime=INFINITE State=UP "
                 "OverSubscribe=YES")  # fmt: skip
    SLURM_CONF.write_text("\n".join(lines) + "\n")
    (SLURM_DIR / "ctld").mkdir(exist_ok=True)
    for h in hosts:
        (SLURM_DIR / h.name).mkdir(exist_ok=True)
        (LOG_DIR / h.name).mkdir(parents=True, exist_ok=True)


def start_slurmctld(state: State) -> None:
    pid = spawn(["slurmctld", "-D", "-i", "-f", str(SLURM_CONF)], LOG_DIR / "slurmctld.out")
    state.record("process", name="slurmctld", pid=pid, started=start_time(pid))
    _wait(_ctld_answers, pid, "slurmctld", LOG_DIR / "slurmctld.log", READY_TIMEOUT_S)


def start_slurmd(state: State, host: Host) -> None:
    """slurmd in the host's network, with its host name and the shared mount at SHARED_PATH."""
    script = (
        f"hostname {host.name} && mount --bind {host.mount} {SHARED_PATH} && "
        f"exec slurmd -D -N {host.name} -f {SLURM_CONF}"
    )
    pid = spawn(
        [*in_netns(host.netns), "unshare", "--uts", "--mount", "--propagation", "slave",
         "sh", "-c", script],
        LOG_DIR / host.name / "slurmd.out",
    )  # fmt: skip
    state.record("process", name=f"slurmd@{host.name}", pid=pid, started=start_time(pid))


def wait_nodes_idle(hosts: list[Host]) -> None:
    names = {h.name for h in hosts}
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        out = sh(["sinfo", "-h", "-N", "-o", "%N %t"], check=False, timeout_s=10)
        states = dict(line.split()[:2] for line in out.splitlines() if len(line.split()) >= 2)
        if all(states.get(n) == "idle" for n in names):
            return
        if time.monotonic() > deadline:
            raise TestbedError(
                f"Slurm nodes not idle within {READY_TIMEOUT_S:g} s: {states}; see {LOG_DIR}/*/"
            )
        time.sleep(0.5)


def _ctld_answers() -> bool:
    return "UP" in sh(["scontrol", "ping"], check=False, timeout_s=10)


def _wait(
    ready: Callable[[], bool],
    pid: int,
    name: str,
    log: Path,
    timeout_s: float,
) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        code = exited(pid)
        if code is not None:
            raise TestbedError(f"{name} exited with status {code}; see {log}")
        if time.monotonic() > deadline:
            raise TestbedError(f"{name} not ready within {timeout_s:g} s; see {log}")
        time.sleep(0.2)
