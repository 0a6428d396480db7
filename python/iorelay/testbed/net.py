"""The testbed's network: a bridge, one network namespace per host joined to it by a veth pair,
and a `tc tbf` rate cap on both ends of each host's link. No default route, no forwarding:
the addresses exist only on this machine.
"""

from __future__ import annotations

import re
from pathlib import Path

from iorelay.testbed.plan import (
    BRIDGE,
    Host,
    TestbedConfig,
    bridge_address,
    prefix_len,
    tbf_burst_bytes,
)
from iorelay.testbed.state import State
from iorelay.testbed.system import sh

TBF_LATENCY = "50ms"  # how long a packet may wait in the bucket before it is dropped


def create_bridge(state: State, config: TestbedConfig) -> None:
    state.record("link", name=BRIDGE)
    sh(["ip", "link", "add", BRIDGE, "type", "bridge"])
    sh(["ip", "addr", "add", f"{bridge_address(config)}/{prefix_len(config)}", "dev", BRIDGE])
    sh(["ip", "link", "set", BRIDGE, "up"])


def _tbf(prefix: list[str], dev: str, rate_mbit: int) -> None:
    burst = tbf_burst_bytes(rate_mbit)
    sh([*prefix, "tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", f"{rate_mbit}mbit",
        "burst", str(burst), "latency", TBF_LATENCY])  # fmt: skip


def create_host(state: State, config: TestbedConfig, host: Host) -> None:
    """The host's namespace, its veth pair (eth0 inside), address, loopback and rate caps."""
    ns = ["ip", "netns", "exec", host.netns]
    state.record("netns", name=host.netns)
    sh(["ip", "netns", "add", host.netns])
    state.record("link", name=host.veth)
    sh(["ip", "link", "add", host.veth, "type", "veth", "peer", "name", "eth0", "netns",
        host.netns])  # fmt: skip
    sh(["ip", "link", "set", host.veth, "master", BRIDGE])
    sh(["ip", "link", "set", host.veth, "up"])
    sh([*ns, "ip", "addr", "add", f"{host.address}/{prefix_len(config)}", "dev", "eth0"])
    sh([*ns, "ip", "link", "set", "lo", "up"])
    sh([*ns, "ip", "link", "set", "eth0", "up"])
    _tbf(ns, "eth0", host.rate_mbit)  # what the host sends
    _tbf([], host.veth, host.rate_mbit)  # what the host receives


def delete_link(name: str) -> None:
    if Path(f"/sys/class/net/{name}").exists():
        sh(["ip", "link", "del", name])


def delete_netns(name: str) -> None:
    if Path(f"/run/netns/{name}").exists():
        sh(["ip", "netns", "del", name])


_SENT = re.compile(r"Sent (\d+) bytes (\d+) pkt")


def link_bytes(host: Host) -> dict[str, int]:
    """Bytes through the host's caps, from `tc -s`: "sent" leaves the host, "received" enters."""
    out_ns = sh(["ip", "netns", "exec", host.netns, "tc", "-s", "qdisc", "show", "dev", "eth0"])
    out_br = sh(["tc", "-s", "qdisc", "show", "dev", host.veth])
    sent = _SENT.search(out_ns)
    received = _SENT.search(out_br)
    return {
        "sent": int(sent.group(1)) if sent else 0,
        "received": int(received.group(1)) if received else 0,
    }
