"""Each source's cross-validated record on a table, as `iorelay advise` prints it and caches it:
its regret ratio, the spreads of its errors, and the simple rules' regret beside them."""

from __future__ import annotations

from typing import Any

import numpy as np

from iorelay import sim_score
from iorelay.advise import evaluate, features
from iorelay.advise.models import inner_folds
from iorelay.advise.sources import Source
from iorelay.advise.table import PatternTable

# The command's cross-validation: seeded folds dealt within each stratum (a leave-one-out of the
# learned source takes minutes; `--evaluate` computes the judged figures).
FOLDS = 10
FOLD_SEED = 1


def not_worse_tolerance(table: PatternTable) -> float:
    """The not-worse band (natural log): the standard error of one cell's median, taken from
    the repetitions (1.2533 x the median coefficient of variation / sqrt of the median run
    count); two options closer than this cannot be told apart by such measurements."""
    cv = table.spread.stack().dropna()
    n = table.runs.stack()
    n = n[n > 0]
    if cv.empty or n.empty:
        return 0.0
    return float(1.2533 * cv.median() / np.sqrt(n.median()))


def kfold_splits(table: PatternTable, folds: int = FOLDS, seed: int = FOLD_SEED) -> list:
    """(train, test) labels of each fold, dealt within each stratum."""
    labels = table.patterns.index
    fold = inner_folds(features.strata(table.patterns).to_numpy(), folds, seed)
    return [(labels[fold != f], labels[fold == f]) for f in range(folds) if (fold == f).any()]


def score_sources(table: PatternTable, sources: tuple[Source, ...]) -> dict[str, Any]:
    """Every source's record by FOLDS-fold cross-validation (regret_ratio None: it predicted no
    held-out pattern), and the fixed choices' regret."""
    tolerance = not_worse_tolerance(table)
    splits = kfold_splits(table)
    record: dict[str, Any] = {"tolerance_log": tolerance, "folds": len(splits), "sources": {}}
    for source in sources:
        folds = evaluate.cross_predict(source, table, splits)
        level, profile = evaluate.residual_sd(folds)
        score = evaluate.recommended_regret(folds, tolerance)
        record["sources"][source.name] = {
            "regret_ratio": None if np.isnan(score) else score,
            "level_sd_log": level,
            "profile_sd_log": profile,
        }
    fixed = sim_score.fixed_choice_regret(table.cells(), table.options)
    record["always_direct"] = fixed.get(0)
    record["always_largest"] = fixed[max(table.options)]
    record["largest_option"] = max(table.options)
    return record
