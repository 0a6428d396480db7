#!/usr/bin/env python3
"""The arbiter on simulated concurrent jobs (issue 52): job sets of FORGE MareNostrum 4 patterns
run together in one simulation (iorelay-sim-joint on platforms/marenostrum4.json: one storage,
each job its own I/O nodes), the allocation decided by static and by the knapsack from isolated
runs (each pattern alone at every option, same seed). Reports the share of sets where the
knapsack beats static and the gap between the isolated values and the joint truth. Markdown on
stdout and in --out-dir, with every run as JSON lines.

    nice -n 10 .venv/bin/python bench/arbiter_sim.py [--sets 20] [--jobs 4] [--pool 8]
        [--patterns 12] [--max-ranks 768] [--requests-per-rank 4] [--seed 1]
        [--platform platforms/marenostrum4.json] [--out-dir bench/results/arbiter-sim]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

from iorelay import sim_joint
from iorelay.arbiter import simulated
from iorelay.arbiter.patterns import Pattern, read_patterns
from iorelay.arbiter.problem import Pool

REPO = Path(__file__).resolve().parents[1]

FORGE = Path(
    os.environ.get("IORELAY_FORGE_DATA", REPO.parent / "shared" / "data" / "forge-marenostrum4")
)
OPTIONS = (0, 1, 2, 4, 8)


def run(args: argparse.Namespace, patterns: list[Pattern]) -> tuple[list, list]:
    """Every pattern alone at every option, then every job set jointly; rows and the log of
    every simulation (input and output)."""
    shape = simulated.SimShape(requests_per_rank=args.requests_per_rank)
    pool = Pool(args.pool, tuple(k for k in OPTIONS if k <= args.pool))
    log: list[dict] = []

    def simulate(doc: dict) -> dict:
        out = sim_joint.run(doc)
        log.append({"input": doc, "output": out})
        return out

    isolated = simulated.isolated_values(patterns, pool, args.platform, shape, args.seed, simulate)
    print(f"isolated runs: {len(log)}", file=sys.stderr)
    rows = []
    for s, jobset in enumerate(simulated.draw_sets(patterns, args.sets, args.jobs, args.seed)):
        row = simulated.evaluate_set(
            jobset, isolated, pool, args.platform, shape, args.seed, simulate
        )
        rows.append({"set": s, **row})
        print(f"set {s}: static {row['static']} knapsack {row['knapsack']}", file=sys.stderr)
    return rows, log


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=4, help="jobs per set")
    ap.add_argument("--pool", type=int, default=8, help="I/O nodes to share")
    ap.add_argument("--patterns", type=int, default=12, help="FORGE patterns drawn from")
    ap.add_argument("--max-ranks", type=int, default=768, help="patterns with at most this many")
    ap.add_argument("--requests-per-rank", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--platform", default=str(REPO / "platforms" / "marenostrum4.json"))
    ap.add_argument("--out-dir", type=Path, default=REPO / "bench/results/arbiter-sim")
    args = ap.parse_args()
    small = [p for p in read_patterns([FORGE]) if p.features.ranks <= args.max_ranks]
    patterns = sorted(random.Random(args.seed).sample(small, args.patterns), key=lambda p: p.label)
    load = os.getloadavg()
    start = time.perf_counter()
    rows, log = run(args, patterns)
    wall_s = time.perf_counter() - start
    summary = simulated.summarise(rows)
    command = (
        f"nice -n 10 .venv/bin/python bench/arbiter_sim.py --sets {args.sets} --jobs {args.jobs} "
        f"--pool {args.pool} --patterns {args.patterns} --max-ranks {args.max_ranks} "
        f"--requests-per-rank {args.requests_per_rank} --seed {args.seed}"
    )
    lines = [
        "# The arbiter on simulated concurrent jobs",
        "",
        f"Command: `{command}`  ",
        f"Platform {Path(args.platform).name}; {args.patterns} FORGE patterns of at most "
        f"{args.max_ranks} ranks; {args.sets} sets of {args.jobs} jobs starting together on a "
        f"pool of {args.pool} I/O nodes; {args.requests_per_rank} requests per rank; "
        f"{len(log)} simulations, {wall_s:.0f} s wall, load average before "
        f"{' '.join(f'{x:.2f}' for x in load)} (2 shared cores).",
        "",
        "| figure | value |",
        "|---|---|",
        *(
            f"| {k} | {v:.3f} |" if isinstance(v, float) else f"| {k} | {v} |"
            for k, v in summary.items()
        ),
        "",
        "| set | patterns | static | knapsack | static MiB/s | knapsack MiB/s |",
        "|---|---|---|---|---|---|",
        *(
            f"| {r['set']} | {', '.join(r['patterns'])} | {r['static']} | {r['knapsack']} | "
            f"{r['static_global']:.0f} | {r['knapsack_global']:.0f} |"
            for r in rows
        ),
        "",
    ]
    text = "\n".join(lines)
    print(text, end="")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "summary.md").write_text(text)
    with open(args.out_dir / "runs.jsonl", "w") as f:
        for entry in log:
            f.write(json.dumps(entry) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
