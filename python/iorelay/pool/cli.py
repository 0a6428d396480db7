"""`iorelay pool start|status|stop|measured|revoke`: a live pool of shared I/O-node daemons on this
machine, its controller in the foreground (docs/arbitration.md, "The live pool")."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from iorelay.pool import wire
from iorelay.pool.state import POLICIES, Settings

if TYPE_CHECKING:
    from iorelay.pool.live import Remote


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "pool",
        help="a pool of shared I/O-node daemons that running jobs join and leave",
        description="start: run the pool's controller (and its daemons) in the foreground until "
        "`iorelay pool stop` or SIGTERM; jobs join with `iorelay run --pool DIR`. status: the "
        "jobs, their I/O nodes, leases and the last decisions. revoke: end a job at once.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = actions.add_parser("start", help="start the daemons and the controller")
    s.add_argument("dir", type=Path, help="the pool's directory (socket, maps, decision log)")
    s.add_argument("--ionodes", type=int, help="local daemons (I/O nodes) to start")
    s.add_argument("--options", default="0,1,2,4,8", help="I/O nodes a job may get (0,1,2,4,8)")
    s.add_argument("--policy", choices=POLICIES, default="knapsack")
    s.add_argument("--floor", type=float, help="fairness floor: share of static (none)")
    s.add_argument("--min-interval", type=float, default=60.0, help="hysteresis, seconds (60)")
    s.add_argument("--lease", type=float, default=30.0, help="a job's lease, seconds (30)")
    s.add_argument("--transport", choices=("unix", "tcp"), default="unix",
                   help="the address jobs get: unix (shared memory) or loopback tcp")  # fmt: skip
    s.add_argument("--hosts", help="I/O-node hosts (H1,H2,...): a daemon on each over ssh "
                   "($IORELAY_SSH) instead of --ionodes local daemons")  # fmt: skip
    s.add_argument("--testbed", action="store_true", help="the testbed's I/O-node hosts over its "
                   "ssh; export and maps on its shared mount (DIR/../ unless given)")  # fmt: skip
    s.add_argument("--export-dir", type=Path, help="--hosts: each daemon's export (a shared path)")
    s.add_argument("--map-dir", type=Path, help="--hosts: the jobs' maps (a path every host sees)")
    s.add_argument("--scheduler", default="aioli", help="--hosts: the daemons' scheduler (aioli)")
    for action, what in (("status", "jobs, I/O nodes, leases, decisions"), ("stop", "stop")):
        a = actions.add_parser(action, help=what)
        a.add_argument("dir", type=Path, help="the pool's directory or socket")
        if action == "status":
            a.add_argument("--json", action="store_true")
    m = actions.add_parser("measured", help="a job's bandwidth measured at the I/O nodes it "
                           "holds (the anchored policy's input)")  # fmt: skip
    m.add_argument("dir", type=Path)
    m.add_argument("job")
    m.add_argument("mib_s", type=float, help="MiB/s the job moved at its current I/O nodes")
    m.add_argument("--ionodes", type=int, help="the I/O nodes it was measured at: the report "
                   "is dropped when the job holds another number now")  # fmt: skip
    r = actions.add_parser("revoke", help="revoke a job on its I/O nodes at once")
    r.add_argument("dir", type=Path)
    r.add_argument("job")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "start":
        from iorelay.pool.live import LivePool

        settings = Settings(
            options=tuple(int(k) for k in args.options.split(",")),
            policy=args.policy,
            floor_share=args.floor,
            min_interval_s=args.min_interval,
            lease_s=args.lease,
            keep_forwarded=True,  # a running job's clients cannot go direct mid-run
        )
        try:
            remote = _remote(args)
        except ValueError as e:
            print(f"iorelay pool start: {e}", file=sys.stderr)
            return 2
        if remote is None and not args.ionodes:
            print("iorelay pool start: give --ionodes, --hosts or --testbed", file=sys.stderr)
            return 2
        count = args.ionodes if remote is None else len(remote.hosts)
        LivePool(args.dir, count, settings, args.transport, remote).serve()
        return 0
    try:
        if args.action == "status":
            st = wire.request(args.dir, {"op": "status"})
            if args.json:
                print(json.dumps(st, indent=2))
                return 0
            print(f"free: {' '.join(st['free']) or '-'}")
            for j in st["jobs"]:
                lease = j["lease_left_s"]
                print(f"{j['name']}\t{','.join(j['hosts']) or 'direct'}\tlease_left="
                      + ("-" if lease is None else f"{lease:.1f}s"))  # fmt: skip
            for d in st["decisions"][-5:]:
                print(f"t={d['time_s']:.1f}s {d['event']}: ionodes {d['ionodes']}, "
                      f"held {d['held']}, actions {len(d['actions'])}")  # fmt: skip
        elif args.action == "stop":
            wire.request(args.dir, {"op": "stop"})
        elif args.action == "measured":
            msg = {"op": "measured", "job": args.job, "mib_s": args.mib_s}
            if args.ionodes is not None:
                msg["ionodes"] = args.ionodes
            reply = wire.request(args.dir, msg)
            print(json.dumps({k: reply[k] for k in ("applied", "ionodes")}))
            return 0 if reply["applied"] else 3
        else:
            wire.request(args.dir, {"op": "revoke", "job": args.job})
    except wire.PoolError as e:
        print(f"iorelay pool {args.action}: {e}", file=sys.stderr)
        return 1
    return 0


def _remote(args: argparse.Namespace) -> Remote | None:
    """The daemons on other hosts (--hosts over $IORELAY_SSH, or --testbed), or None (local)."""
    from iorelay.pool.live import Remote

    if not args.hosts and not args.testbed:
        return None
    environ = dict(os.environ)
    export, maps = args.export_dir, args.map_dir
    if args.testbed:
        from iorelay.testbed import cluster, ssh
        from iorelay.testbed.plan import SHARED_PATH

        doc = cluster.status()
        if doc is None or doc.get("phase") != "up":
            raise ValueError("no testbed is up (iorelay testbed status)")
        hosts = [h["name"] for h in doc["hosts"] if h["role"] == "ionode"]
        environ.update(ssh.ssh_env())
        base = SHARED_PATH / "pool" / Path(args.dir).resolve().name
        export, maps = export or base / "export", maps or base / "maps"
    else:
        hosts = [h for h in args.hosts.split(",") if h]
    if export is None or maps is None:
        raise ValueError("--hosts needs --export-dir and --map-dir (paths the hosts share)")
    if args.ionodes and args.ionodes != len(hosts):
        raise ValueError(f"--ionodes {args.ionodes} but {len(hosts)} hosts")
    return Remote(tuple(hosts), Path(export), Path(maps), args.scheduler, environ)
