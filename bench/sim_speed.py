#!/usr/bin/env python3
"""How fast iorelay-sim simulates: wall time, simulated requests per wall second and peak memory
for growing machines (issue 15, criterion 7). One Markdown table on stdout and in --out.

    .venv/bin/python bench/sim_speed.py [--large] [--out bench/results/sim-speed.md]

Every run: platforms/marenostrum4-nominal.json, shared file, 1D-strided 1 MiB writes, 4 per
rank, 16 ranks per node, fifo, block placement. --large adds 8,192 nodes x 16 ranks through 64
I/O nodes (about a minute).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from iorelay import paths

REPO = Path(__file__).resolve().parents[1]

TIMEOUT_S = 1800.0
# (ranks, nodes, I/O nodes, issuer)
CASES = [
    (1536, 96, 8, "rank"),
    (1536, 96, 8, "node"),
    (1536, 96, 8, "node-aggregate"),
    (4096, 256, 8, "rank"),
    (4096, 256, 8, "node"),
    (4096, 256, 8, "node-aggregate"),
    (16384, 1024, 16, "node-aggregate"),
]
LARGE = [(131072, 8192, 64, "node-aggregate")]


def run_case(tool: Path, ranks: int, nodes: int, ionodes: int, issuer: str) -> dict:
    cmd = [
        str(tool), "--platform", str(REPO / "platforms" / "marenostrum4-nominal.json"),
        "--spatiality", "strided", "--request", "1M", "--segments", "4",
        "--ranks", str(ranks), "--nodes", str(nodes), "--ionodes", str(ionodes),
        "--scheduler", "fifo", "--placement", "block", "--issuer", issuer,
    ]  # fmt: skip
    time_bin = shutil.which("time") or "/usr/bin/time"
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        proc = subprocess.run(
            [time_bin, "-f", "%M", "-o", rss.name, *cmd],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=True,
        )  # fmt: skip
        peak_kb = int(rss.read().strip().splitlines()[-1])
    result = json.loads(proc.stdout)
    return {
        "ranks": ranks,
        "nodes": nodes,
        "ionodes": ionodes,
        "issuer": issuer,
        "requests": result["requests"],
        "bandwidth_MiBps": result["bandwidth_MiBps"],
        "simulated_s": result["simulated_time_s"],
        "wall_s": result["wall_time_s"],
        "requests_per_wall_s": result["requests_per_wall_s"],
        "peak_rss_MB": peak_kb / 1000,
    }


def table(rows: list[dict]) -> str:
    lines = [
        "| ranks | nodes | I/O nodes | issuer | requests | MiB/s | simulated s | wall s | "
        "requests per wall s | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['ranks']:,} | {r['nodes']:,} | {r['ionodes']} | {r['issuer']} | "
            f"{r['requests']:,} | {r['bandwidth_MiBps']:.0f} | {r['simulated_s']:.3f} | "
            f"{r['wall_s']:.2f} | {r['requests_per_wall_s']:,.0f} | {r['peak_rss_MB']:.0f} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="add 8,192 nodes x 16 ranks")
    parser.add_argument("--out", type=Path, help="also write the table here")
    args = parser.parse_args()
    tool = paths.find("iorelay-sim")
    rows = [run_case(tool, *case) for case in CASES + (LARGE if args.large else [])]
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    text = (
        f"iorelay-sim speed on {platform.node()} ({platform.processor() or platform.machine()}), "
        f"load average {load} at the end; `bench/sim_speed.py{' --large' if args.large else ''}`"
        f"\n\n{table(rows)}\n"
    )
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
