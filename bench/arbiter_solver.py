#!/usr/bin/env python3
"""The arbiter's knapsack (issue 52, solver criteria): equal to enumeration on 10,000 random
instances of <= 8 jobs, and its time for 100 jobs x 5 options with a pool of 512 I/O nodes
(target <= 10 ms). Markdown on stdout and in --out.

    .venv/bin/python bench/arbiter_solver.py [--instances 10000] [--max-jobs 8] [--reps 50]
        [--out bench/results/arbiter-solver.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

from iorelay.arbiter.exhaustive import solve_exhaustive
from iorelay.arbiter.instances import large_instance, random_instance
from iorelay.arbiter.knapsack import solve
from iorelay.arbiter.policies import floor_values

REPO = Path(__file__).resolve().parents[1]


def check(instances: int, max_jobs: int, seed: int) -> tuple[int, int, float]:
    """(instances equal, instances, seconds)."""
    rng = random.Random(seed)
    equal, start = 0, time.perf_counter()
    for _ in range(instances):
        jobs, pool, floor = random_instance(rng, max_jobs)
        equal += solve(jobs, pool, floor) == solve_exhaustive(jobs, pool, floor)
    return equal, instances, time.perf_counter() - start


def timing(jobs: int, pool: int, reps: int, seed: int, floor_share: float | None) -> list[float]:
    """Milliseconds per solve, one fresh instance per repetition."""
    rng = random.Random(seed)
    out = []
    for _ in range(reps):
        instance, p = large_instance(rng, jobs, pool)
        floor = None if floor_share is None else floor_values(instance, p, floor_share)
        start = time.perf_counter()
        solve(instance, p, floor)
        out.append((time.perf_counter() - start) * 1e3)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=10000)
    ap.add_argument("--max-jobs", type=int, default=8)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=52)
    ap.add_argument("--out", type=Path, default=REPO / "bench/results/arbiter-solver.md")
    args = ap.parse_args()
    load = os.getloadavg()
    equal, n, seconds = check(args.instances, args.max_jobs, args.seed)
    lines = [
        "# The arbiter's knapsack: exactness and time",
        "",
        f"Command: `.venv/bin/python bench/arbiter_solver.py --instances {args.instances} "
        f"--max-jobs {args.max_jobs} --reps {args.reps} --seed {args.seed}`  ",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, "
        f"{platform.processor() or 'cpu unknown'}",
        f"Load average before: {' '.join(f'{x:.2f}' for x in load)} (2 cores, shared)",
        "",
        f"- dynamic programme == enumeration: **{equal} / {n}** random instances of 1..."
        f"{args.max_jobs} jobs, pools 0-20, half with a fairness floor ({seconds:.1f} s in all)",
        "",
        "| instance | median ms | p95 ms | max ms | target |",
        "|---|---|---|---|---|",
    ]
    for label, floor in (("100 jobs x 5 options, pool 512", None), ("same, floor 0.9", 0.9)):
        ms = sorted(timing(100, 512, args.reps, args.seed, floor))
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
        lines.append(
            f"| {label} | {statistics.median(ms):.2f} | {p95:.2f} | {ms[-1]:.2f} | <= 10 ms |"
        )
    text = "\n".join(lines) + "\n"
    print(text, end="")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0 if equal == n else 1


if __name__ == "__main__":
    sys.exit(main())
