#!/usr/bin/env python3
"""Malakar & Vishwanath's Blue Gene/Q bridge-node study, simulated on platforms/mira.json.

Each cell is one iorelay-sim run: a Mira partition of NODES nodes (the torus of
docs/placement.md's partition shapes, its Blue Gene/Q bridge layout, nodes / 128 I/O nodes), 16
ranks per node, each rank writing one contiguous block of SIZE bytes to one shared file in one
independent request, FIFO at the I/O nodes (requests forwarded in arrival order). Variants:

  default              every node writes through its default bridge node (the boot-time shares)
  route-aware          the route-aware, load-aware assignment (src/placement), per-rank messages
  route-aware + agg    the same with intra-node aggregation (a node's ranks gather to one sender)
  default + agg        aggregation alone, to separate the two effects

`--network-only` replaces the I/O nodes' and storage's values by ones too fast to matter, so
the torus is the only limit: what placement can do through the network alone. `--set KEY=VALUE`
sets any platform value (e.g. `--set storage.token_handoff=583us`, the GPFS token handoff
`iorelay calibrate` fitted on MareNostrum 4, docs/simulator.md).

  python bench/sim_bgq.py                                   # the full grid (tens of minutes)
  python bench/sim_bgq.py --nodes 512,1024 --sizes 1MiB     # a part of it
  python bench/sim_bgq.py --network-only --sizes 1MiB
  python bench/sim_bgq.py --set storage.token_handoff=583us

Prints a Markdown table (simulated write time per variant, its change against default, and the
bandwidth in GB/s, decimal as the paper's) and the mean change of each variant over the cells.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from iorelay import paths
from iorelay.simulate import SimulateError, apply_settings, run_tool
from iorelay.units import UnitError, parse_bytes

PLATFORM = paths.REPO_ROOT / "platforms" / "mira.json"
RANKS_PER_NODE = 16
NODES_PER_IONODE = 128
# (label, placement policy, issuer)
VARIANTS = [
    ("default", "default", "node"),
    ("route-aware", "route-aware", "node"),
    ("route-aware + agg", "route-aware", "node-aggregate"),
    ("default + agg", "default", "node-aggregate"),
]
# What --network-only sets: I/O nodes and storage far faster than the torus's 2 GB/s links.
UNLIMITED = {
    "ionode": {"nic": "1000GBps", "request_overhead": "0us", "slots": 64},
    "storage": {"nic": "1000GBps", "device": "seek=0us,bw=1000GBps"},
}


def platform_file(network_only: bool, settings: list[str], directory: Path) -> Path:
    """platforms/mira.json, or a copy with --network-only's and --set's values."""
    if not network_only and not settings:
        return PLATFORM
    platform = json.loads(PLATFORM.read_text())
    if network_only:
        for section, values in UNLIMITED.items():
            platform[section].update(values)
    try:
        platform = apply_settings(platform, settings)
    except SimulateError as e:
        raise SystemExit(str(e)) from e
    path = directory / "mira-modified.json"
    path.write_text(json.dumps(platform))
    return path


def simulate(platform: Path, nodes: int, size: str, placement: str, issuer: str) -> dict:
    argv = ["--platform", str(platform), "--layout", "shared", "--spatiality", "contiguous"]
    argv += ["--request", size, "--block", size, "--segments", "1"]
    argv += ["--ranks", str(nodes * RANKS_PER_NODE)]
    argv += ["--nodes", str(nodes), "--ionodes", str(nodes // NODES_PER_IONODE)]
    argv += ["--scheduler", "fifo", "--placement", placement, "--issuer", issuer]
    return run_tool(argv, timeout_s=3600)


def change(t: float, base: float) -> str:
    return f"{100 * (t - base) / base:+.0f}%"


def table(cells: dict[tuple[int, str, str], dict], nodes: list[int], sizes: list[str]) -> str:
    labels = [v[0] for v in VARIANTS]
    head = "| nodes | per rank | data | " + " | ".join(f"{v} s" for v in labels)
    head += " | GB/s default → route-aware + agg | wall s |"
    lines = [head, "|" + "---:|" * (len(labels) + 5)]
    for n in nodes:
        for s in sizes:
            base = cells[(n, s, labels[0])]["simulated_time_s"]
            times = [cells[(n, s, v)]["simulated_time_s"] for v in labels]
            shown = [f"{times[0]:.3g}"] + [f"{t:.3g} ({change(t, base)})" for t in times[1:]]
            data_gb = n * RANKS_PER_NODE * parse_bytes(s) / 1e9
            gbs = [data_gb / cells[(n, s, v)]["simulated_time_s"] for v in (labels[0], labels[2])]
            wall = sum(cells[(n, s, v)]["wall_time_s"] for v in labels)
            lines.append(
                f"| {n} | {s} | {data_gb:.3g} GB | " + " | ".join(shown)
                + f" | {gbs[0]:.3g} → {gbs[1]:.3g} | {wall:.0f} |"
            )  # fmt: skip
    return "\n".join(lines)


def mean_changes(cells: dict[tuple[int, str, str], dict]) -> str:
    out = []
    for label, _, _ in VARIANTS[1:]:
        deltas = [
            (c["simulated_time_s"] - cells[(n, s, VARIANTS[0][0])]["simulated_time_s"])
            / cells[(n, s, VARIANTS[0][0])]["simulated_time_s"]
            for (n, s, v), c in cells.items()
            if v == label
        ]
        out.append(f"{label}: mean write-time change {100 * statistics.mean(deltas):+.1f}%")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", default="512,1024,2048,4096,8192", help="partition sizes")
    ap.add_argument("--sizes", default="8KiB,1MiB,8MiB", help="bytes written per rank")
    ap.add_argument("--network-only", action="store_true", help="only the torus limits")
    ap.add_argument("--set", action="append", default=[], help="SECTION.KEY=VALUE, repeatable")
    ap.add_argument("--jobs", type=int, default=1, help="simulations at once")
    args = ap.parse_args()
    nodes = [int(n) for n in args.nodes.split(",")]
    sizes = args.sizes.split(",")
    try:
        for s in sizes:
            parse_bytes(s)
    except UnitError as e:
        raise SystemExit(f"--sizes: {e}") from e
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        platform = platform_file(args.network_only, args.set, Path(tmp))
        keys = [(n, s, v) for n in nodes for s in sizes for v in VARIANTS]
        with ThreadPoolExecutor(args.jobs) as pool:
            results = pool.map(lambda k: simulate(platform, k[0], k[1], k[2][1], k[2][2]), keys)
            cells = {(n, s, v[0]): r for (n, s, v), r in zip(keys, results, strict=True)}
    changed = ["network only"] if args.network_only else []
    print(f"platforms/mira.json {' '.join(changed + args.set)}".rstrip()
          + f", {RANKS_PER_NODE} ranks per node, fifo")  # fmt: skip
    print(table(cells, nodes, sizes))
    print()
    print(mean_changes(cells))
    print(f"wall time {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
