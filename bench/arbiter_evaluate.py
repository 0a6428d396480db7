#!/usr/bin/env python3
"""The arbiter's table-driven evaluation (issue 52): Poisson arrivals of jobs with FORGE
MareNostrum 4 patterns, their measured median bandwidths per number of I/O nodes as ground
truth, pools of 8-64 I/O nodes, every policy re-run at every arrival and departure; the
knapsack and the guarded knapsack fed (a) true values and (b) held-out predictions of advise's
learned model and of the nearest measured pattern (each pattern predicted by a predictor
trained without its fold). Markdown on stdout and in --out-dir, with the figures as CSV and the
predictions as JSON (--predictions reads them back instead of training again).

    nice -n 10 .venv/bin/python bench/arbiter_evaluate.py [--sets 1000] [--pools 8,16,32,64]
        [--floor 0.8] [--folds 10] [--guard-quantile 1] [--neighbours 1] [--seed 1]
        [--probe 5] [--feeds F1,F2,...] [--predictions FILE]
        [--out-dir bench/results/arbiter-evaluate]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from pathlib import Path

from iorelay.arbiter import evaluation
from iorelay.arbiter.advised import AdvisePredictor
from iorelay.arbiter.guard import gain_margins
from iorelay.arbiter.jobsets import DEFAULT_SHAPE, View
from iorelay.arbiter.patterns import Pattern, read_patterns
from iorelay.arbiter.predictor import NearestPattern, held_out
from iorelay.markdown import frame_table

REPO = Path(__file__).resolve().parents[1]

FORGE = Path(
    os.environ.get("IORELAY_FORGE_DATA", REPO.parent / "shared" / "data" / "forge-marenostrum4")
)


def predictions(
    patterns: list[Pattern], folds: int, seed: int, neighbours: int
) -> dict[str, dict[str, dict[int, float]]]:
    """Held-out predictions of every pattern by each predictor: learned (advise) and nearest."""
    trainers = {
        "learned": AdvisePredictor,
        "nearest": functools.partial(NearestPattern, neighbours=neighbours),
    }
    out = {}
    for name, train in trainers.items():
        start = time.perf_counter()
        out[name] = held_out(patterns, train, folds, seed)
        print(
            f"{name}: {folds}-fold predictions, {time.perf_counter() - start:.0f} s",
            file=sys.stderr,
        )
    return out


def read_predictions(path: Path) -> dict[str, dict[str, dict[int, float]]]:
    raw = json.loads(path.read_text())
    return {
        name: {label: {int(k): v for k, v in values.items()} for label, values in by.items()}
        for name, by in raw.items()
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=1000, help="job sets per pool size")
    ap.add_argument("--pools", default="8,16,32,64", help="pool sizes, I/O nodes")
    ap.add_argument("--floor", type=float, default=0.8, help="fairness floor, share of static")
    ap.add_argument("--neighbours", type=int, default=1, help="nearest patterns averaged")
    ap.add_argument("--folds", type=int, default=10, help="hold-out folds of the predictions")
    ap.add_argument(
        "--guard-quantile", type=float, default=1.0,
        help="the guard's margin: this quantile of the other patterns' held-out gain errors",
    )  # fmt: skip
    ap.add_argument("--predictions", type=Path, help="held-out predictions (JSON) to reuse")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--probe",
        type=float,
        default=evaluation.PROBE_S,
        help="anchored: seconds at an option before its bandwidth is measured",
    )
    ap.add_argument("--feeds", help="only these feeds (comma-separated; static always)")
    ap.add_argument("--out-dir", type=Path, default=REPO / "bench/results/arbiter-evaluate")
    args = ap.parse_args()
    pools = [int(p) for p in args.pools.split(",") if p]
    patterns = read_patterns([FORGE])
    if args.predictions:
        predicted = read_predictions(args.predictions)
    else:
        predicted = predictions(patterns, args.folds, args.seed, args.neighbours)
    views = {
        name: View(values, gain_margins(patterns, values, args.guard_quantile))
        for name, values in predicted.items()
    }
    load = os.getloadavg()
    start = time.perf_counter()

    def progress(pool: int, done: int) -> None:
        if done % 100 == 0:
            print(f"pool {pool}: {done}/{args.sets} sets", file=sys.stderr)

    rows = evaluation.evaluate(
        patterns, views, pools, args.sets, seed=args.seed, floor_share=args.floor,
        progress=progress, probe_s=args.probe,
        only=args.feeds.split(",") if args.feeds else None,
    )  # fmt: skip
    wall_s = time.perf_counter() - start
    summary = evaluation.summarise(rows)
    criteria = evaluation.predicted_against_true(rows, list(views))
    command = (
        f"nice -n 10 .venv/bin/python bench/arbiter_evaluate.py --sets {args.sets} "
        f"--pools {args.pools} --floor {args.floor:g} --folds {args.folds} "
        f"--guard-quantile {args.guard_quantile:g} --neighbours {args.neighbours} "
        f"--seed {args.seed} --probe {args.probe:g}"
        + (f" --feeds {args.feeds}" if args.feeds else "")
        + (f" --predictions {args.predictions}" if args.predictions else "")
    )
    shape = DEFAULT_SHAPE
    text = "\n".join(
        [
            "# The arbiter, table-driven (FORGE MareNostrum 4)",
            "",
            f"Command: `{command}`  ",
            f"{len(patterns)} patterns; job sets of {shape.jobs} jobs, Poisson arrivals every "
            f"{shape.mean_interarrival_s:g} s on average, each job as large as "
            f"{shape.min_direct_s:g}-{shape.max_direct_s:g} s direct; predictions held out "
            f"by {args.folds} folds within layout x spatiality: `learned` (advise's learned "
            f"model), `nearest` ({args.neighbours} nearest pattern(s)); guard margin: the "
            f"{args.guard_quantile:g} quantile of the other patterns' held-out gain errors; "
            f"floor {args.floor:g} of static. {wall_s:.0f} s wall, load average before "
            f"{' '.join(f'{x:.2f}' for x in load)} (2 shared cores).",
            "",
            "## Every policy",
            "",
            frame_table(summary),
            "",
            "## The arbiters fed predictions (b) against the knapsack fed true values (a) and "
            "static",
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
    (args.out_dir / "predictions.json").write_text(json.dumps(predicted, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
