"""The arbiter's predictions from `iorelay advise`'s learned source: a Trainer over the arbiter's
measured patterns that fits advise's model (its candidates chosen by advise's own inner
cross-validation) and answers the arbiter's BandwidthPredictor interface."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from iorelay.advise.models import LEARNED
from iorelay.advise.sources import Source
from iorelay.advise.table import PatternTable
from iorelay.arbiter.patterns import Pattern, PatternFeatures

# The arbiter's patterns carry no operation or O_DIRECT: every one is the same here, so all of
# them fall in advise's strata by layout and spatiality alone.
OPERATION = "write"
ODIRECT = False


def described(features: Sequence[PatternFeatures], labels: Sequence[str]) -> pd.DataFrame:
    """Patterns in advise's description columns (advise.table.DESCRIPTION), indexed by label."""
    return pd.DataFrame(
        {
            "layout": [f.layout for f in features],
            "spatiality": [f.spatiality for f in features],
            "request_bytes": [f.request_bytes for f in features],
            "processes": [f.ranks for f in features],
            "nodes": [f.nodes for f in features],
            "operation": OPERATION,
            "odirect": ODIRECT,
        },
        index=pd.Index(list(labels), name="pattern"),
    )


def pattern_table(patterns: Sequence[Pattern]) -> PatternTable:
    """advise's table of the arbiter's patterns: their medians per option (NaN where an option
    was not measured); repetitions unknown (spread NaN, one run), which the learned source does
    not read."""
    labels = [p.label for p in patterns]
    options = sorted({k for p in patterns for k in p.bandwidth_mib_s})
    bandwidth = pd.DataFrame(
        [[p.bandwidth_mib_s.get(k, np.nan) for k in options] for p in patterns],
        index=pd.Index(labels, name="pattern"),
        columns=options,
        dtype=float,
    )
    return PatternTable(
        described([p.features for p in patterns], labels),
        bandwidth,
        pd.DataFrame(np.nan, index=bandwidth.index, columns=options),
        pd.DataFrame(1, index=bandwidth.index, columns=options),
    )


class AdvisePredictor:
    """A BandwidthPredictor trained by an advise Source (default: the learned model) on the
    given patterns. A pattern the source does not cover (outside the measured range of its
    stratum) gets no prediction: an empty mapping."""

    def __init__(self, training: Sequence[Pattern], source: Source = LEARNED) -> None:
        if not training:
            raise ValueError("an advise predictor needs at least one pattern")
        self._predict = source.fit(pattern_table(training))
        self.source = source.name

    def predict(self, features: PatternFeatures) -> Mapping[int, float]:
        answer = self._predict(described([features], ["query"]))
        if not bool(answer.covered.iloc[0]):
            return {}
        row = answer.bandwidth.iloc[0]
        return {int(k): float(v) for k, v in row.items() if np.isfinite(v)}
