#!/usr/bin/env python3
"""The judged figures of `iorelay advise` on FORGE MareNostrum 4 (issue 47): regret ratios of
each source's recommended option under leave-one-pattern-out (nested: the learned source picks
its model inside every fold), stratified 30%/70% splits over 20 seeds, and training on the 0, 1
and 2 I/O-node cells of docs/simulator.md's 30% seed-1 split, scored on its 135 held-back
patterns choosing among 0-8 (and the other seeds' splits); with the simple rules beside them.

    nice -n 10 .venv/bin/python bench/advise_forge.py [--seeds 20]
        [--parts loo,splits,extrapolation] [--out bench/results/advise-forge.md]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from iorelay import option_ties, sim_score
from iorelay.advise import evaluate
from iorelay.advise.models import SOURCES
from iorelay.advise.scores import not_worse_tolerance
from iorelay.advise.shape import extend_saturating
from iorelay.advise.table import PatternTable, pattern_table
from iorelay.analysis.reader import read_results

REPO = Path(__file__).resolve().parents[1]

FORGE = REPO.parent / "shared" / "data" / "forge-marenostrum4"


def lookup_regret(table: PatternTable, splits: list) -> float:
    """The per layout/spatiality lookup: the option with the best mean share of the best over
    the training patterns of the test pattern's stratum (ties: fewest I/O nodes)."""
    share = table.bandwidth.div(table.bandwidth.max(axis=1), axis=0)
    strata = table.patterns["layout"] + "/" + table.patterns["spatiality"]
    picked = {}
    for train, test in splits:
        for p in test:
            mine = share.loc[train][strata.loc[train] == strata[p]].mean()
            picked[p] = int(mine.idxmax())
    chosen = pd.Series(picked)
    folds = evaluate.Folds(table.bandwidth.loc[chosen.index], table.bandwidth.loc[chosen.index])
    return evaluate.regret(folds, lambda p: chosen.loc[p.index])


def extend_hyperbolic(predicted: pd.DataFrame, options: list[int]) -> pd.DataFrame:
    """The variant of shape.extend_saturating that bends instead of breaking: b(n) = a·n/(1 + n/k)
    through the predicted 1 and 2 I/O-node cells (k infinite when b2 >= 2·b1; flat at b2 when
    b2 <= b1). Scored beside it, not used by the advisor."""
    out = predicted.copy()
    b1, b2 = predicted[1].to_numpy(float), predicted[2].to_numpy(float)
    r = np.clip(b2 / b1, 1.0, 2.0)
    flat = r <= 1.0
    # 1/k from 2(k+1)/(k+2) = r; 0 (no bend) at r = 2.
    inv_k = np.where(flat, 0.0, (2.0 - r) / np.where(flat, 1.0, 2.0 * r - 2.0))
    rate = b1 * (1.0 + inv_k)
    for n in options:
        if n > 2:
            out[n] = np.where(flat, b2, rate * n / (1.0 + n * inv_k))
    return out[sorted(out.columns)]


def scored(folds: evaluate.Folds, tolerance: float) -> tuple[float, float]:
    """(regret of the recommended option, regret of the predicted best)."""
    return evaluate.recommended_regret(folds, tolerance), evaluate.recommended_regret(folds, 0.0)


def loo(table: PatternTable, tolerance: float, log: list[str]) -> None:
    splits = evaluate.leave_one_out(table)
    log.append("## Leave one pattern out (189 patterns)\n")
    log.append(
        "| source | recommended | predicted best | cheapest within 3% (option_ties) | seconds |"
        "\n|---|---|---|---|---|"
    )
    tie = -math.log(1.0 - option_ties.TIE_TOLERANCE)
    for source in SOURCES:
        start = time.monotonic()
        folds = evaluate.cross_predict(source, table, splits)
        rec, best = scored(folds, tolerance)
        within = evaluate.recommended_regret(folds, tie)
        seconds = time.monotonic() - start
        log.append(f"| {source.name} | {rec:.4f} | {best:.4f} | {within:.4f} | {seconds:.0f} |")
    fixed = sim_score.fixed_choice_regret(table.cells(), table.options)
    log.append(f"| per layout/spatiality lookup | {lookup_regret(table, splits):.4f} | | |")
    for k, v in fixed.items():
        log.append(f"| always {k} | {v:.4f} | | |")
    log.append("")


def splits(table: PatternTable, seeds: int, log: list[str]) -> None:
    log.append(f"## Stratified 30% train / 70% test, seeds 1-{seeds}\n")
    log.append("| source | median | worst | best |\n|---|---|---|---|")
    rows: dict[str, list[float]] = {s.name: [] for s in SOURCES}
    rows["per layout/spatiality lookup"] = []
    for seed in range(1, seeds + 1):
        split = evaluate.stratified_split(table, 0.3, seed)
        tolerance = not_worse_tolerance(table.subset(split[0]))
        for source in SOURCES:
            folds = evaluate.cross_predict(source, table, [split])
            rows[source.name].append(evaluate.recommended_regret(folds, tolerance))
            uncovered = folds.predicted.isna().all(axis=1).sum()
            if uncovered:
                log.append(f"(seed {seed}: {source.name} covers all but {uncovered} patterns)")
        rows["per layout/spatiality lookup"].append(lookup_regret(table, [split]))
    for name, values in rows.items():
        log.append(
            f"| {name} | {statistics.median(values):.4f} | {min(values):.4f} | {max(values):.4f} |"
        )
    log.append("")


def extrapolation(table: PatternTable, log: list[str]) -> None:
    train, test = evaluate.stratified_split(table, 0.3, 1)
    tolerance = not_worse_tolerance(table.subset(train, [0, 1, 2]))
    log.append(
        f"## Trained on 0/1/2 I/O nodes of the 30% seed-1 split ({len(train)} patterns), "
        f"{len(test)} held-back patterns choosing among 0-8\n"
    )
    log.append(
        "| source | 0/1/2 only | trend continued to 4, 8 | min(a·n, c) (shape.extend_saturating)"
        " | a·n/(1+n/k) |\n|---|---|---|---|---|"
    )
    extensions = (
        lambda p: evaluate.extend_trend(p, table.options),
        lambda p: extend_saturating(p, table.options),
        lambda p: extend_hyperbolic(p, table.options),
    )
    for source in SOURCES:
        folds = evaluate.cross_predict(source, table, [(train, test)], train_options=[0, 1, 2])
        scores = [evaluate.recommended_regret(folds, tolerance)]
        for extend in extensions:
            extended = evaluate.Folds(extend(folds.predicted), folds.measured)
            scores.append(evaluate.recommended_regret(extended, tolerance))
        log.append(f"| {source.name} | " + " | ".join(f"{v:.4f}" for v in scores) + " |")
    best012 = table.bandwidth.loc[test, [0, 1, 2]].idxmax(axis=1)
    oracle = evaluate.Folds(table.bandwidth.loc[test], table.bandwidth.loc[test])
    log.append(
        f"| best measured of 0/1/2 | {evaluate.regret(oracle, lambda p: best012):.4f} | | | |"
    )
    log.append("")


def extrapolation_seeds(table: PatternTable, seeds: int, log: list[str]) -> None:
    """The same with shape.extend_saturating on every seed's 30% split: whether seed 1 is
    typical."""
    log.append(
        f"## Trained on 0/1/2 I/O nodes of the 30% splits of seeds 1-{seeds}, choosing among "
        "0-8 with min(a·n, c)\n"
    )
    log.append("| source | median | worst | best |\n|---|---|---|---|")
    rows: dict[str, list[float]] = {s.name: [] for s in SOURCES}
    rows["best measured of 0/1/2"] = []
    for seed in range(1, seeds + 1):
        train, test = evaluate.stratified_split(table, 0.3, seed)
        tolerance = not_worse_tolerance(table.subset(train, [0, 1, 2]))
        for source in SOURCES:
            folds = evaluate.cross_predict(source, table, [(train, test)], train_options=[0, 1, 2])
            extended = evaluate.Folds(
                extend_saturating(folds.predicted, table.options), folds.measured
            )
            rows[source.name].append(evaluate.recommended_regret(extended, tolerance))
        measured = table.bandwidth.loc[test]
        rows["best measured of 0/1/2"].append(
            float((measured[[0, 1, 2]].max(axis=1) / measured.max(axis=1)).mean())
        )
    for name, values in rows.items():
        log.append(
            f"| {name} | {statistics.median(values):.4f} | {min(values):.4f} | {max(values):.4f} |"
        )
    log.append("")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--parts", default="loo,splits,extrapolation")
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/advise-forge.md")
    args = parser.parse_args()
    table = pattern_table(read_results([FORGE]))
    tolerance = not_worse_tolerance(table)
    log = [
        "# iorelay advise on FORGE MareNostrum 4 (bench/advise_forge.py)\n",
        "Command: `.venv/bin/python bench/advise_forge.py "
        f"--seeds {args.seeds} --parts {args.parts}`\n",
        f"not-worse band: {tolerance:.4f} (natural log) on all patterns\n",
    ]
    parts = args.parts.split(",")
    if "extrapolation" in parts:
        extrapolation(table, log)
        extrapolation_seeds(table, args.seeds, log)
    if "splits" in parts:
        splits(table, args.seeds, log)
    if "loo" in parts:
        loo(table, tolerance, log)
    text = "\n".join(log)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
