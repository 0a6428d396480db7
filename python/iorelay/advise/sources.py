"""The advice sources: each learns from a PatternTable and predicts the median bandwidth of every
option for new patterns, or says it does not cover them. Pure functions over tables."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from iorelay.advise import features
from iorelay.advise.table import PatternTable

# A source covers each numeric feature at least one doubling beyond what was measured.
RANGE_MARGIN_LOG2 = 1.0


@dataclass(frozen=True)
class Prediction:
    """Predicted median MiB/s per (pattern, option); `covered` says which patterns the source
    answers for (the others' rows are NaN); `distance` is the reference distance to the nearest
    measured pattern of the training table (inf across strata)."""

    bandwidth: pd.DataFrame
    covered: pd.Series
    distance: pd.Series


@dataclass(frozen=True)
class Source:
    """A named way to predict: fit(train) returns a predictor of new patterns."""

    name: str
    fit: Callable[[PatternTable], Callable[[pd.DataFrame], Prediction]]


def nearest(train: PatternTable, patterns: pd.DataFrame) -> tuple[list[str | None], pd.Series]:
    """Each pattern's nearest training pattern by features.distance (ties: the first label in
    sorted order), and the distance; None and inf where no training pattern shares its stratum."""
    ordered = train.patterns.sort_index()
    train_strata = features.strata(ordered).to_numpy()
    train_x = features.numeric(ordered).to_numpy(float)
    names: list[str | None] = []
    dists = []
    for stratum, x in zip(
        features.strata(patterns), features.numeric(patterns).to_numpy(float), strict=True
    ):
        d = features.distance(train_strata, train_x, stratum, x)
        i = int(np.argmin(d)) if len(d) else 0
        found = len(d) > 0 and np.isfinite(d[i])
        names.append(ordered.index[i] if found else None)
        dists.append(float(d[i]) if found else float("inf"))
    return names, pd.Series(dists, index=patterns.index, dtype=float)


def fit_neighbour(train: PatternTable) -> Callable[[pd.DataFrame], Prediction]:
    """The reference rule: a pattern is answered by its nearest measured pattern (itself when
    measured): that pattern's measured medians. Like the learned source, it covers patterns
    within one doubling of the measured range (in_range)."""

    def predict(patterns: pd.DataFrame) -> Prediction:
        names, dist = nearest(train, patterns)
        rows = [
            train.bandwidth.loc[n] if n is not None else pd.Series(np.nan, train.bandwidth.columns)
            for n in names
        ]
        bw = pd.DataFrame(rows, index=patterns.index, columns=train.bandwidth.columns)
        covered = in_range(train, patterns)
        bw[~covered] = np.nan
        return Prediction(bw, covered, dist)

    return predict


NEIGHBOUR = Source("nearest measured pattern", fit_neighbour)


def margin(values: pd.Series) -> float:
    """How far beyond its measured values a feature is covered: the widest step between its
    consecutive distinct values (a grid measured every 4x covers 4x beyond it), at least
    RANGE_MARGIN_LOG2."""
    distinct = np.unique(values.to_numpy(float))
    steps = np.diff(distinct)
    return float(max(RANGE_MARGIN_LOG2, steps.max() if len(steps) else 0.0))


def in_range(train: PatternTable, patterns: pd.DataFrame) -> pd.Series:
    """Whether each pattern's stratum was measured and its numeric features lie within the
    measured range of that stratum, widened on each side by the feature's margin."""
    train_strata = features.strata(train.patterns)
    train_x = features.numeric(train.patterns)
    x = features.numeric(patterns)
    out = []
    for label, stratum in features.strata(patterns).items():
        mine = train_x[train_strata == stratum]
        if mine.empty:
            out.append(False)
            continue
        widen = pd.Series({c: margin(mine[c]) for c in mine.columns})
        low = mine.min() - widen
        high = mine.max() + widen
        out.append(bool(((x.loc[label] >= low) & (x.loc[label] <= high)).all()))
    return pd.Series(out, index=patterns.index)
