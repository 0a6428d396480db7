#!/usr/bin/env python3
"""Sung et al.'s independent-I/O trends on Cori, checked on simulated sweeps of platforms/cori.json.

Each cell is one iorelay-sim run: NODES compute nodes with PPN ranks each write one shared file,
contiguous, REQUESTS requests of 1 MiB per rank, straight to Lustre (0 I/O nodes, as Cori's IOR
runs did), striped over OSTS targets. The trends (ALGORITHMS.md, section 6) are then tested on
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
import itertools
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))


from iorelay import paths
from iorelay.simulate import SimulateError, apply_settings
from iorelay.tools import run_json_tool

PLATFORM = paths.REPO_ROOT / "platforms" / "cori.json"
FULL = {"nodes": [8, 32, 128], "ppn": [1, 8, 32, 68], "osts": [8, 32, 128, 248]}
QUICK = {"nodes": [8, 32], "ppn": [1, 8, 32], "osts": [8, 32, 128, 248]}
REQUESTS = 16
# A top cell's neighbours within this fraction count as best too (simulated noise is off, but
# saturated cells differ in the last digits).
BEST_TOLERANCE = 0.05


def simulate(tool: Path, platform: dict, nodes: int, ppn: int, osts: int) -> float:
    """GiB/s of one run with the platform's stripe count set to `osts`."""
    p = json.loads(json.dumps(platform))
    p["storage"]["stripe_count"] = osts
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(p, f)
        f.flush()
        argv = [str(tool), "--platform", f.name, "--layout", "shared"]
        argv += ["--spatiality", "contiguous", "--request", "1MiB", "--block", f"{REQUESTS}MiB"]
        argv += ["--ranks", str(nodes * ppn), "--nodes", str(nodes), "--ionodes", "0"]
        out = run_json_tool(argv, error=SimulateError, timeout_s=3600)
    return out["bandwidth_MiBps"] / 1024


def sweep(
    grid: dict[str, list[int]], tool: Path | None = None, settings: list[str] | None = None
) -> dict[tuple[int, int, int], float]:
    """(nodes, ppn, osts) -> GiB/s for every cell of the grid, on platforms/cori.json with
    `settings` (SECTION.KEY=VALUE) applied."""
    tool = tool or paths.find("iorelay-sim")
    platform = apply_settings(json.loads(PLATFORM.read_text()), settings or [])
    return {
        (n, r, o): simulate(tool, platform, n, r, o)
        for n in grid["nodes"]
        for r in grid["ppn"]
        for o in grid["osts"]
    }


def _axis(cells: dict, key: int) -> list[int]:
    return sorted({c[key] for c in cells})


def trends(cells: dict[tuple[int, int, int], float]) -> dict[str, tuple[bool, str]]:
    """Each trend: whether it holds on the table, and the cells that say so or not."""
    nodes, ppns, osts = _axis(cells, 0), _axis(cells, 1), _axis(cells, 2)
    out: dict[str, tuple[bool, str]] = {}

    falls = [
        f"{a}->{b} nodes at ppn {r}, {o} OSTs"
        for r in ppns
        for o in osts
        for a, b in itertools.pairwise(nodes)
        if cells[(b, r, o)] < cells[(a, r, o)]
    ]
    out["nodes"] = (not falls, "falls: " + "; ".join(falls) if falls else "rises everywhere")

    falls, flat = [], []
    for n in nodes:
        for r in ppns:
            bw = [cells[(n, r, o)] for o in osts]
            if any(y < x * (1 - BEST_TOLERANCE) for x, y in itertools.pairwise(bw)):
                falls.append(f"falls at {n} nodes ppn {r}")
            if bw[-1] < bw[-2] * (1 + BEST_TOLERANCE):
                flat.append(f"{n} nodes ppn {r}")
    out["osts"] = (
        not falls and bool(flat),
        "; ".join(falls)
        if falls
        else "never falls; flat at the top for: " + ", ".join(flat)
        if flat
        else "never falls, but never flattens either",
    )

    # the fewest OSTs within BEST_TOLERANCE of the best, per (nodes, ppn)
    best = {
        (n, r): min(
            o
            for o in osts
            if cells[(n, r, o)] >= max(cells[(n, r, x)] for x in osts) * (1 - BEST_TOLERANCE)
        )
        for n in nodes
        for r in ppns
    }
    grows = all(best[(a, r)] <= best[(b, r)] for r in ppns for a, b in itertools.pairwise(nodes))
    grows = grows and any(best[(nodes[0], r)] < best[(nodes[-1], r)] for r in ppns)
    out["best"] = (
        grows,
        "best OSTs (nodes, ppn): " + ", ".join(f"({n}, {r}): {o}" for (n, r), o in best.items()),
    )

    n, o = nodes[-1], osts[-1]
    bw = {r: cells[(n, r, o)] for r in ppns}
    fewer_better = max(bw, key=bw.get) != ppns[-1]
    out["ppn"] = (
        fewer_better,
        f"at {n} nodes, {o} OSTs: " + ", ".join(f"ppn {r}: {bw[r]:.1f}" for r in ppns),
    )

    # (fewer nodes, more nodes) with the same number of processes, at every OST count
    pairs = [
        ((a, r), (b, q))
        for a, b in itertools.combinations(nodes, 2)
        for r in ppns
        for q in ppns
        if a * r == b * q
    ]
    slower = [
        f"{b}x{q} < {a}x{r} at {o} OSTs"
        for (a, r), (b, q) in pairs
        for o in osts
        if cells[(b, q, o)] < cells[(a, r, o)] * (1 - BEST_TOLERANCE)
    ]
    faster = [
        f"{b}x{q}: {cells[(b, q, o)]:.1f} against {a}x{r}: {cells[(a, r, o)]:.1f} at {o} OSTs"
        for (a, r), (b, q) in pairs
        for o in osts
        if cells[(b, q, o)] > cells[(a, r, o)] * (1 + BEST_TOLERANCE)
    ]
    out["spread"] = (
        bool(pairs) and not slower and bool(faster),
        "no two cells with the same number of processes"
        if not pairs
        else "slower: " + "; ".join(slower)
        if slower
        else "faster: " + "; ".join(faster)
        if faster
        else "equal everywhere",
    )
    return out


def table(cells: dict[tuple[int, int, int], float]) -> str:
    osts = _axis(cells, 2)
    lines = ["| nodes | ranks/node | " + " | ".join(f"{o} OSTs" for o in osts) + " |"]
    lines.append("|---:|---:|" + "---:|" * len(osts))
    for n in _axis(cells, 0):
        for r in _axis(cells, 1):
            row = " | ".join(f"{cells[(n, r, o)]:.1f}" for o in osts)
            lines.append(f"| {n} | {r} | {row} |")
    return "\n".join(lines)


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
