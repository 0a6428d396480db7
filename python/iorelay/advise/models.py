"""The learned source: scikit-learn regressors of each option's log bandwidth over the pattern
features, one model per stratum, the candidate chosen by cross-validation inside the training
data only (so an outer cross-validation of this source is nested)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.neighbors import KNeighborsRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler
from sklearn.tree import DecisionTreeRegressor

from iorelay.advise import features
from iorelay.advise.sources import NEIGHBOUR, Prediction, Source, in_range, nearest
from iorelay.advise.table import PatternTable

Regressor = Callable[[], object]

# The candidates, simplest first (an inner-score tie goes to the earlier one). Each is fitted per
# stratum on the numeric features, with the option profile (log bandwidth of each option minus
# the pattern's mean over options) as a multi-output target.
CANDIDATES: dict[str, Regressor] = {
    "1-NN (L1)": lambda: KNeighborsRegressor(1, p=1),
    "3-NN (L1, by distance)": lambda: KNeighborsRegressor(3, p=1, weights="distance"),
    "quadratic ridge": lambda: make_pipeline(StandardScaler(), PolynomialFeatures(2), Ridge(1.0)),
    "tree, 5 per leaf": lambda: DecisionTreeRegressor(min_samples_leaf=5, random_state=0),
    "tree, 4 per leaf": lambda: DecisionTreeRegressor(min_samples_leaf=4, random_state=0),
    "tree, 3 per leaf": lambda: DecisionTreeRegressor(min_samples_leaf=3, random_state=0),
    "tree, 2 per leaf": lambda: DecisionTreeRegressor(min_samples_leaf=2, random_state=0),
    "random forest, 50 trees": lambda: RandomForestRegressor(50, random_state=0, n_jobs=1),
}
INNER_FOLDS = 5
INNER_SEED = 0
# Fewer complete patterns (every option measured) than this and the source learns nothing.
MIN_PATTERNS = 2 * INNER_FOLDS


@dataclass(frozen=True)
class Arrays:
    """A complete table (every option measured) as numpy: strata, numeric features, log
    bandwidth, and its per-pattern centred profile."""

    strata: np.ndarray
    x: np.ndarray
    log_bw: np.ndarray

    @property
    def profile(self) -> np.ndarray:
        return self.log_bw - self.log_bw.mean(axis=1, keepdims=True)


def arrays(table: PatternTable) -> Arrays:
    return Arrays(
        features.strata(table.patterns).to_numpy(),
        features.numeric(table.patterns).to_numpy(float),
        np.log(table.bandwidth.to_numpy(float)),
    )


def fit_per_stratum(make: Regressor, strata: np.ndarray, x: np.ndarray, y: np.ndarray) -> dict:
    models = {}
    for s in np.unique(strata):
        rows = strata == s
        k = int(rows.sum())
        model = make()
        if isinstance(model, KNeighborsRegressor) and model.n_neighbors > k:
            model.set_params(n_neighbors=k)
        models[s] = model.fit(x[rows], y[rows])  # type: ignore[attr-defined]
    return models


def predict_per_stratum(models: dict, strata: np.ndarray, x: np.ndarray, width: int) -> np.ndarray:
    out = np.full((len(x), width), np.nan)
    for s, model in models.items():
        rows = strata == s
        if rows.any():
            out[rows] = np.asarray(model.predict(x[rows])).reshape(int(rows.sum()), width)
    return out


def inner_folds(strata: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """A fold number per pattern: each stratum shuffled (seeded) and dealt round-robin."""
    rng = np.random.default_rng(seed)
    fold = np.zeros(len(strata), dtype=int)
    for s in np.unique(strata):
        rows = np.flatnonzero(strata == s)
        fold[rng.permutation(rows)] = np.arange(len(rows)) % folds
    return fold


def choice_score(profile: np.ndarray, predicted: np.ndarray, log_bw: np.ndarray) -> float:
    """Mean over patterns of the measured share of the best of the option `predicted` ranks
    first (argmax; ties: the first column, the fewest I/O nodes)."""
    picked = np.argmax(predicted, axis=1)
    bw = np.exp(log_bw)
    return float(np.mean(bw[np.arange(len(bw)), picked] / bw.max(axis=1)))


def choose_candidate(data: Arrays, folds: int = INNER_FOLDS, seed: int = INNER_SEED) -> dict:
    """Each candidate's cross-validated choice score on `data` alone."""
    fold = inner_folds(data.strata, folds, seed)
    profile = data.profile
    scores = {}
    for name, make in CANDIDATES.items():
        predicted = np.full_like(profile, np.nan)
        for f in range(folds):
            test = fold == f
            train = ~test
            models = fit_per_stratum(make, data.strata[train], data.x[train], profile[train])
            predicted[test] = predict_per_stratum(
                models, data.strata[test], data.x[test], profile.shape[1]
            )
        known = ~np.isnan(predicted).any(axis=1)
        scores[name] = choice_score(profile[known], predicted[known], data.log_bw[known])
    return scores


def uncovered(table: PatternTable, patterns: pd.DataFrame) -> Prediction:
    _, dist = nearest(table, patterns)
    bw = pd.DataFrame(np.nan, index=patterns.index, columns=table.options)
    return Prediction(bw, pd.Series(False, index=patterns.index), dist)


def fit_learned(train: PatternTable) -> Callable[[pd.DataFrame], Prediction]:
    """Chooses the candidate by inner cross-validation on `train`'s complete patterns, then fits
    it on all of them: one model of the option profile and one of the mean log bandwidth. With
    fewer than MIN_PATTERNS complete patterns it covers nothing."""
    complete = train.bandwidth.dropna().index
    table = train.subset(complete)
    if len(complete) < MIN_PATTERNS:
        return lambda patterns: uncovered(table, patterns)
    data = arrays(table)
    scores = choose_candidate(data)
    chosen = max(scores, key=lambda n: scores[n])  # max keeps the first of equal scores
    make = CANDIDATES[chosen]
    profile_models = fit_per_stratum(make, data.strata, data.x, data.profile)
    level_models = fit_per_stratum(make, data.strata, data.x, data.log_bw.mean(axis=1))

    def predict(patterns: pd.DataFrame) -> Prediction:
        s = features.strata(patterns).to_numpy()
        x = features.numeric(patterns).to_numpy(float)
        width = len(table.options)
        log_bw = predict_per_stratum(profile_models, s, x, width)
        log_bw += predict_per_stratum(level_models, s, x, 1)
        covered = in_range(table, patterns)
        log_bw[~covered.to_numpy()] = np.nan
        _, dist = nearest(table, patterns)
        bw = pd.DataFrame(np.exp(log_bw), index=patterns.index, columns=table.options)
        return Prediction(bw, covered, dist)

    predict.chosen = chosen  # type: ignore[attr-defined]
    predict.inner_scores = scores  # type: ignore[attr-defined]
    return predict


def fit_ensemble(train: PatternTable) -> Callable[[pd.DataFrame], Prediction]:
    """Every candidate fitted on `train`'s complete patterns, their predicted log bandwidths
    averaged (profile and level alike): no choice among them, so nothing is tuned on the data.
    With fewer than MIN_PATTERNS complete patterns it covers nothing."""
    complete = train.bandwidth.dropna().index
    table = train.subset(complete)
    if len(complete) < MIN_PATTERNS:
        return lambda patterns: uncovered(table, patterns)
    data = arrays(table)
    fitted = [
        (
            fit_per_stratum(make, data.strata, data.x, data.profile),
            fit_per_stratum(make, data.strata, data.x, data.log_bw.mean(axis=1)),
        )
        for make in CANDIDATES.values()
    ]

    def predict(patterns: pd.DataFrame) -> Prediction:
        s = features.strata(patterns).to_numpy()
        x = features.numeric(patterns).to_numpy(float)
        width = len(table.options)
        log_bw = np.mean(
            [
                predict_per_stratum(p, s, x, width) + predict_per_stratum(level, s, x, 1)
                for p, level in fitted
            ],
            axis=0,
        )
        covered = in_range(table, patterns)
        log_bw[~covered.to_numpy()] = np.nan
        _, dist = nearest(table, patterns)
        bw = pd.DataFrame(np.exp(log_bw), index=patterns.index, columns=table.options)
        return Prediction(bw, covered, dist)

    return predict


LEARNED = Source("learned model (scikit-learn, chosen by inner CV)", fit_learned)
ENSEMBLE = Source("mean of the learned candidates (scikit-learn)", fit_ensemble)
SOURCES = (NEIGHBOUR, LEARNED, ENSEMBLE)
