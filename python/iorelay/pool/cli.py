"""`iorelay pool start|status|stop|revoke`: a live pool of shared I/O-node daemons on this
machine, its controller in the foreground (docs/arbitration.md, "The live pool")."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from iorelay.pool import wire
from iorelay.pool.controller import POLICIES
from iorelay.pool.state import Settings


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
    s.add_argument("--ionodes", type=int, required=True, help="daemons (I/O nodes) to start")
    s.add_argument("--options", default="0,1,2,4,8", help="I/O nodes a job may get (0,1,2,4,8)")
    s.add_argument("--policy", choices=POLICIES, default="knapsack")
    s.add_argument("--floor", type=float, help="fairness floor: share of static (none)")
    s.add_argument("--min-interval", type=float, default=60.0, help="hysteresis, seconds (60)")
    s.add_argument("--lease", type=float, default=30.0, help="a job's lease, seconds (30)")
    s.add_argument("--transport", choices=("unix", "tcp"), default="unix",
                   help="the address jobs get: unix (shared memory) or loopback tcp")  # fmt: skip
    for action, what in (("status", "jobs, I/O nodes, leases, decisions"), ("stop", "stop")):
        a = actions.add_parser(action, help=what)
        a.add_argument("dir", type=Path, help="the pool's directory or socket")
        if action == "status":
            a.add_argument("--json", action="store_true")
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
        LivePool(args.dir, args.ionodes, settings, args.transport).serve()
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
        else:
            wire.request(args.dir, {"op": "revoke", "job": args.job})
    except wire.PoolError as e:
        print(f"iorelay pool {args.action}: {e}", file=sys.stderr)
        return 1
    return 0
