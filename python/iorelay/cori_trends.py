"""Sung et al.'s independent-I/O trends on Cori, on simulated sweeps of platforms/cori.json:
one iorelay-sim run per (nodes, ranks per node, OSTs) cell, and the trends tested on the table
(bench/sim_cori_trends.py prints them; python/tests/test_sim_trends.py runs the small grid)."""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path

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
