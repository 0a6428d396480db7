#!/usr/bin/env python3
"""Sung et al.'s independent-I/O trends on Cori, checked on simulated sweeps of platforms/cori.json.

Each cell is one iorelay-sim run: NODES compute nodes with PPN ranks each write one shared file,
contiguous, REQUESTS requests of 1 MiB per rank, straight to Lustre (0 I/O nodes, as Cori's IOR
runs did), striped over OSTS targets. The trends (Sung et al.) are then tested on
the table:
  nodes  more compute nodes give more throughput (same ranks per node and OSTs);
  osts   more OSTs help up to a point: throughput never falls with more OSTs, and somewhere
         (few ranks) the largest count adds less than 5% over the one before;
  best   the best number of OSTs (the fewest within 5% of the top) grows with the number of
         nodes, at each number of ranks per node;
  ppn    with enough nodes, fewer ranks per node is better, read at a fixed number of nodes;
  spread the same read at a fixed number of processes: spread over more nodes with fewer ranks
         each, they are never slower (within 5%) and somewhere faster by more than 5%.

  python bench/sim_cori_trends.py                 # the full sweep (minutes), table + verdicts
  python bench/sim_cori_trends.py --quick         # the small sweep the tests use (seconds)
  python bench/sim_cori_trends.py --set network.storage_gateways=130 \
      --set network.storage_gateway_nic=6.8GBps      # direct access through LNET routers
"""

from __future__ import annotations

import argparse
import sys

from iorelay.cori_trends import FULL, QUICK, REQUESTS, SimulateError, sweep, table, trends


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="the small grid of the tests")
    ap.add_argument("--set", action="append", default=[], help="SECTION.KEY=VALUE, repeatable")
    args = ap.parse_args()
    try:
        cells = sweep(QUICK if args.quick else FULL, settings=args.set)
    except SimulateError as e:
        raise SystemExit(str(e)) from e
    print("GiB/s, shared file, contiguous, 1 MiB requests, "
          f"{REQUESTS} per rank, direct to Lustre:\n")  # fmt: skip
    print(table(cells))
    print()
    for name, (holds, why) in trends(cells).items():
        print(f"{name:6} {'holds' if holds else 'DOES NOT HOLD'}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
