"""Runs on an I/O node (as a Slurm step): picks the address iorelayd binds and advertises, checks
the binary, then becomes iorelayd.
`python -m iorelay.launch.node_daemon [--interface IF] IORELAYD ARGS`.

Address rule (docs/exploration.md, Multi-node deployment): with --interface, that interface's
first IPv4 address; otherwise the interface of the default route; without a default route (the
testbed's hosts), the first IPv4 address of global scope. Never loopback.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys


class AddressError(RuntimeError):
    """No usable address on this node."""


def _ip(*args: str) -> str:
    return subprocess.run(
        ["ip", "-o", *args], capture_output=True, text=True, timeout=10, check=True
    ).stdout


def _first_ipv4(out: str) -> str | None:
    for line in out.splitlines():
        words = line.split()
        if "inet" in words:
            return words[words.index("inet") + 1].split("/")[0]
    return None


def node_address(interface: str | None) -> str:
    if interface:
        try:
            addr = _first_ipv4(_ip("-4", "addr", "show", "dev", interface))
        except subprocess.CalledProcessError as e:
            raise AddressError(f"no interface {interface} on this node") from e
        if addr is None:
            raise AddressError(f"interface {interface} has no IPv4 address")
        return addr
    route = _ip("-4", "route", "show", "default").split()
    if "dev" in route:
        addr = _first_ipv4(_ip("-4", "addr", "show", "dev", route[route.index("dev") + 1]))
        if addr:
            return addr
    addr = _first_ipv4(_ip("-4", "addr", "show", "scope", "global"))
    if addr is None:
        raise AddressError("no global IPv4 address (use --ionode-interface)")
    return addr


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="iorelay.launch.node_daemon")
    p.add_argument("--interface")
    p.add_argument("daemon", help="path of iorelayd (a shared install prefix)")
    p.add_argument("args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    host = socket.gethostname()
    if not os.access(args.daemon, os.X_OK):
        print(f"iorelayd not found on {host}: tried {args.daemon}", file=sys.stderr)
        return 127
    try:
        addr = node_address(args.interface)
    except (AddressError, subprocess.SubprocessError, OSError) as e:
        print(f"iorelayd on {host}: {e}", file=sys.stderr)
        return 2
    argv_daemon = [args.daemon, "--listen", f"tcp:{addr}:0", *args.args]
    sys.stdout.flush()
    os.execv(args.daemon, argv_daemon)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
