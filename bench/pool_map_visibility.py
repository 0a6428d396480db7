"""How soon a compute host sees a job map the pool's controller rewrote on the testbed's GlusterFS
(the controller on the login node, through its mount; the reader on a compute host, through its
own mount and capped link), as the client re-reads it: open, read, close by path, here every
10 ms (the client: every 0.1 s at most). The delay of each new epoch: the first time the reader
saw it minus the time the rename returned (one clock: one machine).

  flock -w 3600 /tmp/testbed-measure.lock .venv/bin/python bench/pool_map_visibility.py \\
      [--host node1] [--maps 20] [--every 0.5]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from iorelay.pool.job_map import write_map
from iorelay.testbed.plan import SHARED_PATH
from iorelay.testbed.ssh import ssh_env

READER = r"""
import json, sys, time
path, until = sys.argv[1], float(sys.argv[2])
last = None
while time.time() < until:
    try:
        with open(path) as f:
            epoch = json.loads(f.read())["epoch"]
    except (OSError, ValueError, KeyError):
        epoch = None
    if epoch != last:
        print(f"{time.time():.6f} {epoch}", flush=True)
        last = epoch
    time.sleep(0.01)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="node1")
    ap.add_argument("--maps", type=int, default=20)
    ap.add_argument("--every", type=float, default=0.5)
    ap.add_argument("--out", type=Path, help="append the result as a JSON line here")
    args = ap.parse_args()
    path = SHARED_PATH / "pool-bench" / f"mapvis-{os.getpid()}.map"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_map(path, 0, [0], 0)
    time.sleep(2)
    until = time.time() + 3 + args.maps * args.every + 3
    ssh = shlex.split(ssh_env()["IORELAY_SSH"])
    reader = subprocess.Popen(
        [*ssh, args.host, shlex.join([sys.executable, "-c", READER, str(path), str(until)])],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(3)  # the reader has started and seen epoch 0
    written = {}
    for epoch in range(1, args.maps + 1):
        write_map(path, epoch, [epoch % 2], 0)
        written[epoch] = time.time()
        time.sleep(args.every)
    out, _ = reader.communicate(timeout=60)
    path.unlink(missing_ok=True)
    seen: dict[int, float] = {}
    for line in out.splitlines():
        t, e = line.split()
        if e != "None":
            seen.setdefault(int(e), float(t))
    delays = [seen[e] - written[e] for e in written if e in seen]
    missed = [e for e in written if e not in seen]
    result = {
        "host": args.host,
        "maps": args.maps,
        "every_s": args.every,
        "seen": len(delays),
        "missed": missed,
        "median_s": statistics.median(delays) if delays else None,
        "max_s": max(delays) if delays else None,
        "min_s": min(delays) if delays else None,
        "load": os.getloadavg(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(json.dumps(result))
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
