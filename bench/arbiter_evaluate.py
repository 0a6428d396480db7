#!/usr/bin/env python3
"""The arbiter's table-driven evaluation (issue 52): Poisson arrivals of jobs with FORGE
MareNostrum 4 patterns, their measured median bandwidths per number of I/O nodes as ground
truth, pools of 8-64 I/O nodes, every policy re-run at every arrival and departure; the
knapsack fed (a) true values and (b) leave-one-pattern-out nearest-pattern predictions (the
stand-in for `iorelay advise`). Markdown on stdout and in --out-dir, with the figures as CSV.

    nice -n 10 .venv/bin/python bench/arbiter_evaluate.py [--sets 1000] [--pools 8,16,32,64]
        [--floor 0.8] [--neighbours 1] [--seed 1] [--out-dir bench/results/arbiter-evaluate]
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

from iorelay.arbiter import evaluation
from iorelay.arbiter.jobsets import DEFAULT_SHAPE
from iorelay.arbiter.patterns import read_patterns
from iorelay.arbiter.predictor import NearestPattern, leave_one_pattern_out
from iorelay.markdown import frame_table

REPO = Path(__file__).resolve().parents[1]

FORGE = Path(
    os.environ.get("IORELAY_FORGE_DATA", REPO.parent / "shared" / "data" / "forge-marenostrum4")
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=1000, help="job sets per pool size")
    ap.add_argument("--pools", default="8,16,32,64", help="pool sizes, I/O nodes")
    ap.add_argument("--floor", type=float, default=0.8, help="fairness floor, share of static")
    ap.add_argument("--neighbours", type=int, default=1, help="nearest patterns averaged")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out-dir", type=Path, default=REPO / "bench/results/arbiter-evaluate")
    args = ap.parse_args()
    pools = [int(p) for p in args.pools.split(",") if p]
    patterns = read_patterns([FORGE])
    train = functools.partial(NearestPattern, neighbours=args.neighbours)
    predicted = leave_one_pattern_out(patterns, train)
    load = os.getloadavg()
    start = time.perf_counter()

    def progress(pool: int, done: int) -> None:
        if done % 100 == 0:
            print(f"pool {pool}: {done}/{args.sets} sets", file=sys.stderr)

    rows = evaluation.evaluate(
        patterns, predicted, pools, args.sets, seed=args.seed, floor_share=args.floor,
        progress=progress,
    )  # fmt: skip
    wall_s = time.perf_counter() - start
    summary = evaluation.summarise(rows)
    criteria = evaluation.predicted_against_true(rows)
    command = (
        f"nice -n 10 .venv/bin/python bench/arbiter_evaluate.py --sets {args.sets} "
        f"--pools {args.pools} --floor {args.floor:g} --neighbours {args.neighbours} "
        f"--seed {args.seed}"
    )
    shape = DEFAULT_SHAPE
    text = "\n".join(
        [
            "# The arbiter, table-driven (FORGE MareNostrum 4)",
            "",
            f"Command: `{command}`  ",
            f"{len(patterns)} patterns; job sets of {shape.jobs} jobs, Poisson arrivals every "
            f"{shape.mean_interarrival_s:g} s on average, each job as large as "
            f"{shape.min_direct_s:g}-{shape.max_direct_s:g} s direct; predictions: nearest "
            f"{args.neighbours} pattern(s), leave-one-pattern-out; floor {args.floor:g} of "
            f"static. {wall_s:.0f} s wall, load average before "
            f"{' '.join(f'{x:.2f}' for x in load)} (2 shared cores).",
            "",
            "## Every policy",
            "",
            frame_table(summary),
            "",
            "## The knapsack fed predictions (b) against true values (a) and static",
            "",
            frame_table(criteria),
            "",
        ]
    )
    print(text, end="")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "summary.md").write_text(text)
    summary.to_csv(args.out_dir / "summary.csv", index=False)
    criteria.to_csv(args.out_dir / "criteria.csv", index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
