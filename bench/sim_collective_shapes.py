#!/usr/bin/env python3
"""The collective-I/O and striping shapes of sim_collective_test, as a table: every run of
iorelay-sim-collective the test makes (Cori: Sung et al.'s collective trends; lecture-lustre:
the lecture's dd and file-size results), with its simulated bandwidth.

  python bench/sim_collective_shapes.py          # markdown table on stdout (seconds)
"""

from __future__ import annotations

import json
import subprocess
import sys

from iorelay import paths

CORI = ["--platform", "platforms/cori.json", "--ranks-per-node", "16", "--bytes-per-rank",
        "4MiB", "--calls", "2"]  # fmt: skip
LECTURE = ["--platform", "platforms/lecture-lustre.json", "--independent", "--stripe-size", "2MB"]


def cori(nodes: int, osts: int, per_node: int, packed: bool = False) -> list[str]:
    argv = [*CORI, "--nodes", str(nodes), "--stripe-count", str(osts), "--cb-nodes", str(osts),
            "--max-per-node", str(per_node)]  # fmt: skip
    return argv + (["--packed"] if packed else [])


def lecture(writers: int, bytes_each: int, stripes: int) -> list[str]:
    return [*LECTURE, "--nodes", str(writers), "--bytes-per-rank", str(bytes_each),
            "--stripe-count", str(stripes)]  # fmt: skip


ROWS: list[tuple[str, list[str]]] = [
    *((f"nodes {n}", cori(n, 16, 16)) for n in (1, 2, 4, 8, 16, 32)),
    ("16 nodes, 16 aggregators spread", cori(16, 16, 8)),
    ("16 nodes, 16 aggregators packed 8 per node", cori(16, 16, 8, packed=True)),
    *((f"32 nodes, {c} OSTs, one aggregator per node", cori(32, c, 1)) for c in (8, 32)),
    *(
        (f"32 nodes, {c} OSTs, aggregators on 2 nodes", cori(32, c, c // 2, packed=True))
        for c in (8, 32)
    ),
    *((f"dd 2 GB, {c} stripe(s)", lecture(1, 2_000_000_000, c)) for c in (1, 10)),
    *(
        (f"{name} file, 2 writers, {c} stripe(s)", lecture(2, size // 2, c))
        for name, size in (("8 MB", 8_000_000), ("1.5 GB", 1_500_000_000))
        for c in (1, 18)
    ),
]


def main() -> int:
    tool = str(paths.find("iorelay-sim-collective"))
    print("| run | MB/s | simulated s | aggregators | command (iorelay-sim-collective ...) |")
    print("|---|---|---|---|---|")
    for name, argv in ROWS:
        out = subprocess.run([tool, *argv], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            print(f"{name}: {out.stderr.strip()}", file=sys.stderr)
            return 1
        j = json.loads(out.stdout)
        aggregators = j.get("aggregator_count", "-")
        print(f"| {name} | {j['bandwidth_MBps']:.0f} | {j['simulated_time_s']:.4f} | "
              f"{aggregators} | `{' '.join(argv)}` |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
