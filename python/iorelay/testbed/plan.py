"""What `iorelay testbed up` builds: the hosts (name, role, address, link rate) and the paths.

Pure: no system calls, so the plan can be printed, tested and stored in the state file.
"""

from __future__ import annotations

import ipaddress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROLES = ("compute", "ionode", "storage")
# Host names by role: Slurm sorts a job's node list by name, so the I/O nodes (ion*) come before
# the compute nodes (node*) in SLURM_JOB_NODELIST, where `iorelay run --ionodes K` takes the
# first K.
NAME_PREFIX = {"compute": "node", "ionode": "ion", "storage": "st"}
# Link caps (Mbit/s) by role, scaled down so that two cores can fill the links (docs/testbed.md).
DEFAULT_RATE_MBIT = {"compute": 200, "ionode": 1000, "storage": 2000}
RUN_DIR = Path("/run/iorelay-testbed")  # state, configuration, sockets, logs, mount points
DATA_DIR = Path("/var/lib/iorelay-testbed")  # bricks and glusterd's working directories
BRIDGE = "iorelay-tb0"
NETNS_PREFIX = "iorelay-tb-"
VETH_PREFIX = "tbv-"  # root-namespace end of each host's veth pair; the host end is eth0
VOLUME = "iorelay"
# The shared mount: each host's FUSE mount is RUN_DIR/mnt/HOST in the root mount namespace and
# SHARED_PATH inside the mount namespace of that host's slurmd (so in every job step).
SHARED_PATH = RUN_DIR / "shared"


@dataclass(frozen=True)
class Host:
    name: str
    role: str
    address: str  # IPv4, on the testbed bridge
    rate_mbit: int

    @property
    def netns(self) -> str:
        return NETNS_PREFIX + self.name

    @property
    def veth(self) -> str:
        return VETH_PREFIX + self.name

    @property
    def mount(self) -> Path:
        """Where this host's GlusterFS mount is, in the root mount namespace."""
        return RUN_DIR / "mnt" / self.name


@dataclass
class TestbedConfig:
    compute: int = 3
    ionode: int = 2
    storage: int = 1
    subnet: str = "10.199.77.0/24"
    rate_mbit: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_RATE_MBIT))

    def validate(self) -> None:
        for role, n in (("compute", self.compute), ("ionode", self.ionode)):
            if not 0 <= n <= 16:
                raise ValueError(f"{role} hosts: {n} is not in 0..16")
        if not 1 <= self.storage <= 4:
            raise ValueError(f"storage hosts: {self.storage} is not in 1..4")
        if self.compute + self.ionode == 0:
            raise ValueError("no compute and no I/O-node host")
        net = ipaddress.ip_network(self.subnet)
        if net.num_addresses < 64 or not net.is_private:
            raise ValueError(
                f"subnet {self.subnet}: need a private IPv4 network of >= 64 addresses"
            )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def bridge_address(config: TestbedConfig) -> str:
    """The root namespace's address on the bridge (slurmctld listens there)."""
    return str(ipaddress.ip_network(config.subnet)[1])


def prefix_len(config: TestbedConfig) -> int:
    return ipaddress.ip_network(config.subnet).prefixlen


def make_hosts(config: TestbedConfig) -> list[Host]:
    """Storage hosts first (.10+), then I/O nodes (.20+... by order), then compute hosts."""
    config.validate()
    net = ipaddress.ip_network(config.subnet)
    hosts = []
    offset = 10
    for role, count in (
        ("storage", config.storage),
        ("ionode", config.ionode),
        ("compute", config.compute),
    ):
        for i in range(1, count + 1):
            hosts.append(
                Host(
                    f"{NAME_PREFIX[role]}{i}",
                    role,
                    str(net[offset]),
                    config.rate_mbit[role],
                )
            )
            offset += 1
    return hosts


def slurm_hosts(hosts: list[Host]) -> list[Host]:
    """Hosts that run a slurmd (and mount the file system): compute and I/O nodes."""
    return [h for h in hosts if h.role != "storage"]


def tbf_burst_bytes(rate_mbit: int) -> int:
    """tbf bucket: 1/200 s of traffic (the kernel ticks at 250 Hz here), at least 32 KiB."""
    return max(32 * 1024, rate_mbit * 1_000_000 // 8 // 200)
