"""Scores an advice source by cross-validation: every fold's patterns are predicted by the source
fitted on the other patterns only, and the regret ratio (iorelay.sim_score) of the options it
recommends is computed over the predicted patterns."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from iorelay import sim_score
from iorelay.advise.answer import recommended_options
from iorelay.advise.sources import Source
from iorelay.advise.table import PatternTable
from iorelay.calibrate import stratified_patterns
from iorelay.sim_cells import OPTION


@dataclass(frozen=True)
class Folds:
    """Out-of-fold predictions (MiB/s per pattern and option) of one source on one table."""

    predicted: pd.DataFrame
    measured: pd.DataFrame


def cross_predict(
    source: Source,
    table: PatternTable,
    splits: Sequence[tuple[pd.Index, pd.Index]],
    train_options: Sequence[int] | None = None,
) -> Folds:
    """Each split is (train labels, test labels): the source is fitted on the train patterns
    (their `train_options` cells only, when given) and predicts the test ones."""
    parts = []
    for train, test in splits:
        predict = source.fit(table.subset(train, list(train_options) if train_options else None))
        parts.append(predict(table.patterns.loc[test]).bandwidth)
    predicted = pd.concat(parts)
    return Folds(predicted, table.bandwidth.loc[predicted.index])


def leave_one_out(table: PatternTable) -> list[tuple[pd.Index, pd.Index]]:
    labels = table.patterns.index
    return [(labels.drop(p), pd.Index([p])) for p in labels]


def stratified_split(table: PatternTable, fraction: float, seed: int) -> tuple[pd.Index, pd.Index]:
    """iorelay.calibrate's seeded split by layout x spatiality (docs/simulator.md's 30% seed-1
    split is fraction 0.3, seed 1): (train, test)."""
    train = pd.Index(stratified_patterns(table.cells(), fraction, seed))
    return train, table.patterns.index.difference(train)


def regret(folds: Folds, choose: Callable[[pd.DataFrame], pd.Series]) -> float:
    """iorelay.sim_score.regret_ratio of the option `choose` picks per predicted pattern, over
    the patterns it predicted (measured options only); NaN when it predicted none."""
    covered = folds.predicted.dropna(how="all")
    if covered.empty:
        return float("nan")
    picked = choose(covered)
    cells = folds.measured.loc[covered.index].stack().rename("median").reset_index()
    cells.columns = ["pattern", OPTION, "median"]
    cells["advised"] = (cells[OPTION].to_numpy() == picked.loc[cells["pattern"]].to_numpy()) * 1.0
    return sim_score.regret_ratio(cells, "advised")


def recommended_regret(folds: Folds, tolerance_log: float) -> float:
    return regret(folds, lambda p: recommended_options(p, tolerance_log))


def pattern_regrets(folds: Folds, tolerance_log: float) -> pd.Series:
    """Per predicted pattern: the measured median of the recommended option / the best measured
    median (their mean is recommended_regret)."""
    covered = folds.predicted.dropna(how="all")
    picked = recommended_options(covered, tolerance_log)
    measured = folds.measured.loc[covered.index]
    return pd.Series(
        [measured.loc[p, picked[p]] / measured.loc[p].max() for p in covered.index],
        index=covered.index,
        dtype=float,
    )


def residual_sd(folds: Folds) -> tuple[float, float]:
    """The spread of the out-of-fold errors of log bandwidth: of each cell (the level), and of
    each cell relative to its pattern's mean over options (the profile)."""
    both = folds.predicted.columns.intersection(folds.measured.columns)
    err = np.log(folds.predicted[both]) - np.log(folds.measured[both])
    err = err.dropna(how="any")
    if err.empty:
        return float("nan"), float("nan")
    profile = err.sub(err.mean(axis=1), axis=0)
    return float(np.std(err.to_numpy())), float(np.std(profile.to_numpy()))


def extend_trend(predicted: pd.DataFrame, options: Sequence[int]) -> pd.DataFrame:
    """Predictions for options beyond the largest trained one: the log-bandwidth change per
    doubling between the two largest trained non-zero options, continued (so a pattern that
    gained from 1 to 2 I/O nodes is predicted to gain as much again from 2 to 4, and 4 to 8)."""
    trained = sorted(int(k) for k in predicted.columns if k > 0)
    out = predicted.copy()
    if len(trained) < 2:
        return out.reindex(columns=sorted(set(out.columns) | set(options)))
    lo, hi = trained[-2], trained[-1]
    slope = (np.log(predicted[hi]) - np.log(predicted[lo])) / np.log2(hi / lo)
    for k in sorted(set(options) - set(out.columns)):
        out[k] = np.exp(np.log(predicted[hi]) + slope * np.log2(k / hi))
    return out[sorted(out.columns)]
