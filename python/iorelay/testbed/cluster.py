"""`iorelay testbed up|down|status`: a small cluster on this machine, made of real parts.

Hosts are network namespaces on a bridge with rate-capped links (net), GlusterFS is
served from the storage hosts and mounted on the others (gluster), Slurm runs one
slurmd per host (slurm). Every object is recorded in the state file before it is made
(state), and `down` removes exactly those. Root only; docs/testbed.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from iorelay.testbed import gluster, hold, net, slurm, ssh
from iorelay.testbed import system as tsys
from iorelay.testbed.plan import (
    DATA_DIR,
    DEFAULT_RATE_MBIT,
    RUN_DIR,
    SHARED_PATH,
    Host,
    TestbedConfig,
    make_hosts,
    slurm_hosts,
)
from iorelay.testbed.state import STATE_FILE, State
from iorelay.testbed.system import TestbedBusy, TestbedError

# The programs `up` runs, and the Debian package of each (make testbed-deps installs them).
REQUIRED_PROGRAMS = {
    "ip": "iproute2",
    "tc": "iproute2",
    "nsenter": "util-linux",
    "unshare": "util-linux",
    "glusterd": "glusterfs-server",
    "gluster": "glusterfs-server",
    "mount.glusterfs": "glusterfs-client",
    "munged": "munge",
    "slurmctld": "slurmctld (slurm-wlm)",
    "slurmd": "slurmd (slurm-wlm)",
    "srun": "slurm-client (slurm-wlm)",
}


def unmet_requirements() -> list[str]:
    """Why this machine cannot build a testbed (empty when it can)."""
    why = []
    if os.geteuid() != 0:
        why.append("not root (namespaces, bridges, mounts and slurmd need root)")
    if not Path("/dev/fuse").exists():
        why.append("no /dev/fuse (GlusterFS mounts through FUSE)")
    missing = sorted({pkg for prog, pkg in REQUIRED_PROGRAMS.items() if not _which(prog)})
    if missing:
        why.append(f"packages missing: {', '.join(missing)} (make testbed-deps)")
    return why


def _which(prog: str) -> bool:
    return any(shutil.which(prog, path=p) for p in (os.environ.get("PATH", ""), "/usr/sbin:/sbin"))


def hosts_of(state: State) -> list[Host]:
    return [Host(**h) for h in state.doc["hosts"]]


def up(config: TestbedConfig, state_file: Path = STATE_FILE) -> State:
    """Builds the testbed. On failure the partial testbed stays recorded: run `down`."""
    why = unmet_requirements()
    if why:
        raise TestbedError("cannot build a testbed here: " + "; ".join(why))
    if State.load(state_file) is not None:
        raise TestbedBusy(f"a testbed is recorded in {state_file}: `iorelay testbed down` first")
    hosts = make_hosts(config)
    if Path(f"/sys/class/net/{net.BRIDGE}").exists():
        raise TestbedError(f"interface {net.BRIDGE} exists already (not recorded by a testbed)")
    if DATA_DIR.exists():  # `down` removes it whole: it must be ours
        raise TestbedError(f"{DATA_DIR} exists already (not recorded by a testbed); remove it")
    t0 = time.monotonic()
    try:  # atomic: of two `up` at once, one gets here
        RUN_DIR.mkdir(parents=True)
    except FileExistsError as e:
        raise TestbedBusy(
            f"{RUN_DIR} exists: another testbed is up or being built (iorelay testbed status)"
        ) from e
    state = State.create(state_file, config.to_json(), [h.__dict__ for h in hosts])
    state.record("tree", path=str(RUN_DIR))
    state.record("tree", path=str(DATA_DIR))
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    SHARED_PATH.mkdir(parents=True, exist_ok=True)
    os.environ.update(slurm.env())
    # Undone after the namespaces are gone, so no glusterfsd can write there any more.
    gluster.record_outside_dirs(state)

    net.create_bridge(state, config)
    for host in hosts:
        net.create_host(state, config, host)
    state.set(ip_forward=Path("/proc/sys/net/ipv4/ip_forward").read_text().strip())

    storage = [h for h in hosts if h.role == "storage"]
    clients = slurm_hosts(hosts)
    for host in storage:
        gluster.start_glusterd(state, host)
    options = gluster.create_volume(state, storage)
    state.set(volume=gluster.VOLUME, volume_options=options)
    # Mounts before the slurmds: their mount namespaces copy the root's at creation. The root
    # namespace (the login node, where salloc and `iorelay run` run) mounts it at SHARED_PATH
    # too; each slurmd binds its host's own mount over that, so the path is the same everywhere.
    for host in clients:
        gluster.mount(state, host, storage[0], host.mount)
    gluster.mount(state, None, storage[0], SHARED_PATH)

    slurm.write_conf(config, clients)
    slurm.start_munged(state)
    slurm.start_slurmctld(state)
    for host in clients:
        slurm.start_slurmd(state, host)
    slurm.wait_nodes_idle(clients)
    if ssh.available():  # openssh-server (make testbed-deps): an sshd per host
        ssh.setup(state, config, clients)
        pids = {s["name"]: s["pid"] for s in state.steps if s["kind"] == "process"}
        for host in clients:
            ssh.start_sshd(state, host, pids[f"slurmd@{host.name}"])
        ssh.wait_ready(clients)
        state.set(ssh_config=str(ssh.SSH_CONFIG))
    state.doc["phase"] = "up"
    state.set(up_seconds=round(time.monotonic() - t0, 2), slurm_conf=str(slurm.SLURM_CONF))
    return state


def up_or_undo(config: TestbedConfig, state_file: Path = STATE_FILE) -> State:
    """`up`, and on failure `down` of what it made before the error goes on."""
    try:
        return up(config, state_file)
    except BaseException:
        if State.load(state_file) is not None:
            down(state_file)
        raise


@contextlib.contextmanager
def held(config: TestbedConfig | None = None, state_file: Path = STATE_FILE) -> Iterator[hold.Hold]:
    """Holds the testbed while the block runs (hold). With `config`, brings one up when
    none is; a testbed brought up so comes down when its last holder is done."""
    bring_up = None if config is None else (lambda: up_or_undo(config, state_file))
    h = hold.acquire(state_file, bring_up)

    def take_down() -> None:
        h.down_seconds = down(state_file)

    try:
        yield h
    finally:
        hold.release(state_file, take_down)


def _undo(step: dict[str, Any]) -> None:
    kind = step["kind"]
    if kind == "process":
        tsys.stop_process(step["pid"], step.get("started"))
    elif kind == "mount":
        tsys.unmount(Path(step["path"]))
    elif kind == "netns":
        tsys.stop_netns_processes(step["name"])
        net.delete_netns(step["name"])
    elif kind == "link":
        net.delete_link(step["name"])
    elif kind == "new_entries":
        tsys.remove_new_entries(step["path"], step["existed"], step["before"])
    elif kind == "tree":
        shutil.rmtree(step["path"], ignore_errors=True)
    else:
        raise TestbedError(f"unknown step kind {kind!r} in the state file")


def down(state_file: Path = STATE_FILE) -> float:
    """Removes what the state file records, last made first; seconds taken (0: nothing)."""
    state = State.load(state_file)
    if state is None:
        return 0.0
    t0 = time.monotonic()
    # The configuration `up` pointed this process at goes with the testbed: a Slurm command
    # run later would wait a minute for a file that is gone.
    if os.environ.get("SLURM_CONF") == slurm.env()["SLURM_CONF"]:
        del os.environ["SLURM_CONF"]
    state.doc["phase"] = "stopping"
    # Last made first: slurmds, slurmctld, munged, mounts, glusterd, then each namespace with
    # whatever still runs in it (job steps, bricks), links, directories.
    failed: list[tuple[dict[str, Any], str]] = []
    while state.steps:
        step = state.steps.pop()
        t_step = time.monotonic()
        try:
            _undo(step)
        except (TestbedError, OSError, subprocess.SubprocessError) as e:
            failed.append((step, str(e)))  # go on: remove all that can be removed
        if os.environ.get("IORELAY_TESTBED_VERBOSE"):
            what = step.get("name") or step.get("path")
            print(
                f"down: {step['kind']} {what}: {time.monotonic() - t_step:.2f} s", file=sys.stderr
            )
        if state.path.parent.exists():
            state.save()
    if failed:
        state.doc["steps"] = [step for step, _ in reversed(failed)]
        state.save()
        raise TestbedError(
            "down could not remove: "
            + "; ".join(f"{s['kind']} {s.get('name') or s.get('path')}: {e}" for s, e in failed)
            + f" (still recorded in {state.path}; run down again)"
        )
    state.path.unlink(missing_ok=True)
    return time.monotonic() - t0


def status(state_file: Path = STATE_FILE) -> dict[str, Any] | None:
    state = State.load(state_file)
    if state is None:
        return None
    hosts = hosts_of(state)
    doc: dict[str, Any] = {
        "phase": state.doc.get("phase"),
        "state_file": str(state_file),
        "facts": state.doc.get("facts", {}),
        "shared_path": str(SHARED_PATH),
        "holders": hold.doc(state_file),
        "hosts": [],
    }
    for h in hosts:
        entry: dict[str, Any] = {**h.__dict__, "netns": h.netns}
        if h.role != "storage":
            entry["mount"] = str(h.mount)
            entry["mounted"] = tsys.mounted(h.mount)
        try:
            entry["link_bytes"] = net.link_bytes(h)
        except TestbedError as e:
            entry["link_bytes"] = str(e)
        doc["hosts"].append(entry)
    doc["processes"] = [
        {"name": s["name"], "pid": s["pid"], "alive": tsys.alive(s["pid"], s.get("started"))}
        for s in state.steps
        if s["kind"] == "process"
    ]
    return doc


# -- command line -----------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "testbed",
        help="a multi-host cluster on this machine (namespaces, GlusterFS, Slurm); root",
        description="Build, inspect or remove a cluster of network namespaces on this machine: "
        "compute, I/O-node and storage hosts on a bridge with rate-capped links, GlusterFS "
        "mounted on every compute and I/O-node host, and Slurm (docs/testbed.md).",
    )
    p.add_argument(
        "action",
        choices=("up", "down", "status", "check"),
        help="check: whether this machine can build a testbed (exit 0) or why not (exit 1)",
    )
    p.add_argument("--compute", type=int, default=3, help="compute hosts (3)")
    p.add_argument("--ionodes", type=int, default=2, help="I/O-node hosts (2)")
    p.add_argument("--storage", type=int, default=1, help="storage hosts (1)")
    p.add_argument("--subnet", default=TestbedConfig.subnet, help="private IPv4 subnet")
    for role in ("compute", "ionode", "storage"):
        p.add_argument(
            f"--{role}-mbit",
            type=int,
            default=DEFAULT_RATE_MBIT[role],
            help=f"{role} link cap in Mbit/s ({DEFAULT_RATE_MBIT[role]})",
        )
    p.add_argument("--json", action="store_true", help="status as JSON")
    p.add_argument(
        "--force",
        action="store_true",
        help="down: also while runs hold the testbed (they end with an error)",
    )
    p.add_argument("--state-file", type=Path, default=STATE_FILE, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        if args.action == "up":
            config = TestbedConfig(
                args.compute,
                args.ionodes,
                args.storage,
                args.subnet,
                {r: getattr(args, f"{r}_mbit") for r in ("compute", "ionode", "storage")},
            )
            try:
                with hold.locked(args.state_file):
                    state = up(config, args.state_file)
            except (TestbedError, OSError, ValueError) as e:
                print(f"iorelay testbed up: {e}", file=sys.stderr)
                if State.load(args.state_file) is not None:
                    print("iorelay testbed up: removing what was made (down)", file=sys.stderr)
                    down(args.state_file)
                return 1
            facts = state.doc["facts"]
            print(f"testbed up in {facts['up_seconds']:.1f} s")
            print(f"export SLURM_CONF={facts['slurm_conf']}")
            if facts.get("ssh_config"):
                print(f"export IORELAY_SSH='ssh -F {facts['ssh_config']}'")
            return 0
        if args.action == "check":
            why = unmet_requirements()
            if why:
                print("iorelay testbed: cannot build a testbed here: " + "; ".join(why))
                return 1
            print("iorelay testbed: this machine can build a testbed (root, /dev/fuse, packages)")
            return 0
        if args.action == "down":
            with hold.locked(args.state_file):
                users = hold.holders(args.state_file)
                if users and not args.force:
                    state = State.load(args.state_file)
                    by_holder = state is not None and state.doc["facts"].get(hold.WITH_LAST_HOLDER)
                    then = "it comes down when they are done" if by_holder else "down again then"
                    print(
                        f"iorelay testbed down: in use by {hold.describe(users)}; {then} "
                        "(--force: now, and their runs fail)",
                        file=sys.stderr,
                    )
                    return 1
                seconds = down(args.state_file)
            print(f"testbed down in {seconds:.1f} s" if seconds else "no testbed recorded")
            return 0
        doc = status(args.state_file)
        if doc is None:
            print("no testbed recorded")
            return 3
        if args.json:
            print(json.dumps(doc, indent=2))
        else:
            _print_status(doc)
        return 0
    except (TestbedError, OSError, subprocess.SubprocessError) as e:
        print(f"iorelay testbed {args.action}: {e}", file=sys.stderr)
        return 1


def _print_status(doc: dict[str, Any]) -> None:
    facts = doc["facts"]
    print(f"testbed: {doc['phase']} (state {doc['state_file']})")
    print(
        f"SLURM_CONF={facts.get('slurm_conf', '-')}  shared path in job steps: {doc['shared_path']}"
    )
    opts = facts.get("volume_options", {})
    print(
        f"GlusterFS volume {facts.get('volume', '-')}: "
        + ", ".join(f"{k}={v}" for k, v in opts.items())
    )
    print(f"ip_forward={facts.get('ip_forward', '?')}")
    lifetime = "its last holder" if facts.get(hold.WITH_LAST_HOLDER) else "`iorelay testbed down`"
    users = ", ".join(f"pid {h['pid']} ({h['command']})" for h in doc["holders"]) or "none"
    print(f"held by: {users}; comes down with {lifetime}")
    for h in doc["hosts"]:
        link = h["link_bytes"]
        traffic = (
            f"sent {link['sent']} B, received {link['received']} B"
            if isinstance(link, dict)
            else link
        )
        mount = (
            f" mount {h['mount']} ({'mounted' if h.get('mounted') else 'NOT mounted'})"
            if "mount" in h
            else ""
        )
        where = f"{h['name']:5} {h['role']:8} {h['address']:15} {h['rate_mbit']:5} Mbit/s"
        print(f"  {where}  {traffic}{mount}")
    for p in doc["processes"]:
        print(f"  {p['name']:16} pid {p['pid']:7} {'running' if p['alive'] else 'GONE'}")
