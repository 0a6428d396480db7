"""The interface through which the arbiter gets predicted bandwidths (pattern features ->
MiB/s per number of I/O nodes), the nearest-measured-pattern baseline (advise's learned model
plugs in through arbiter/advised.py), and the hold-outs that judge a predictor on patterns it
did not see: leave one pattern out, and k folds dealt within layout x spatiality."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from iorelay.arbiter.patterns import Pattern, PatternFeatures


class BandwidthPredictor(Protocol):
    def predict(self, features: PatternFeatures) -> Mapping[int, float]:
        """Predicted bandwidth (MiB/s) for each number of I/O nodes (0 = direct)."""
        ...


# Builds a predictor from measured patterns (the training set).
Trainer = Callable[[Sequence[Pattern]], BandwidthPredictor]


class NearestPattern:
    """The stand-in predictor: the measured bandwidths of the nearest training pattern, by
    Euclidean distance over PatternFeatures.vector() with each component scaled to [0, 1] over
    the training set (layout, spatiality, log2 request size, log2 ranks, log2 nodes, log2 ranks
    per node). Ties: the first pattern by label. With neighbours > 1, the geometric mean of that
    many nearest patterns' bandwidths per option."""

    def __init__(self, training: Sequence[Pattern], neighbours: int = 1) -> None:
        if not training:
            raise ValueError("a nearest-pattern predictor needs at least one pattern")
        self._training = sorted(training, key=lambda p: p.label)
        vectors = [p.features.vector() for p in self._training]
        lows = [min(c) for c in zip(*vectors, strict=True)]
        highs = [max(c) for c in zip(*vectors, strict=True)]
        self._scale = [(lo, (hi - lo) or 1.0) for lo, hi in zip(lows, highs, strict=True)]
        self._vectors = [self._scaled(v) for v in vectors]
        self._neighbours = max(1, min(neighbours, len(self._training)))

    def _scaled(self, vector: Sequence[float]) -> tuple[float, ...]:
        return tuple((x - lo) / span for x, (lo, span) in zip(vector, self._scale, strict=True))

    def nearest(self, features: PatternFeatures) -> list[Pattern]:
        """The training patterns nearest to features, nearest first (ties: by label)."""
        me = self._scaled(features.vector())
        distances = [sum((a - b) ** 2 for a, b in zip(me, v, strict=True)) for v in self._vectors]
        order = sorted(range(len(distances)), key=lambda i: (distances[i], i))
        return [self._training[i] for i in order[: self._neighbours]]

    def predict(self, features: PatternFeatures) -> Mapping[int, float]:
        near = self.nearest(features)
        if len(near) == 1:
            return dict(near[0].bandwidth_mib_s)
        common = set.intersection(*(set(p.bandwidth_mib_s) for p in near))
        return {
            k: math.exp(statistics.fmean(math.log(p.bandwidth_mib_s[k]) for p in near))
            for k in sorted(common)
        }


def leave_one_pattern_out(
    patterns: Sequence[Pattern], train: Trainer = NearestPattern
) -> dict[str, dict[int, float]]:
    """Every pattern's prediction by a predictor trained on all the other patterns, by label;
    options the predictor does not cover fall back to none (the job cannot take them)."""
    out = {}
    for p in patterns:
        predictor = train([q for q in patterns if q.label != p.label])
        predicted = predictor.predict(p.features)
        out[p.label] = {k: float(predicted[k]) for k in p.bandwidth_mib_s if k in predicted}
    return out


def stratum(features: PatternFeatures) -> str:
    """What a fold is dealt within: layout and spatiality."""
    return f"{features.layout}/{features.spatiality}"


def folds_by_stratum(patterns: Sequence[Pattern], folds: int, seed: int) -> dict[str, int]:
    """A fold number per pattern label: each stratum's patterns, sorted by label, shuffled by
    random.Random(seed) and dealt round-robin, so every fold holds out some of every stratum."""
    rng = random.Random(seed)
    by: dict[str, list[str]] = {}
    for p in sorted(patterns, key=lambda p: p.label):
        by.setdefault(stratum(p.features), []).append(p.label)
    out = {}
    for name in sorted(by):
        labels = by[name]
        rng.shuffle(labels)
        out.update({label: i % folds for i, label in enumerate(labels)})
    return out


def held_out(
    patterns: Sequence[Pattern], train: Trainer, folds: int = 10, seed: int = 1
) -> dict[str, dict[int, float]]:
    """Every pattern's prediction by a predictor trained without its fold (folds_by_stratum),
    by label: options the pattern was measured at and the predictor answers. A pattern the
    predictor does not cover maps to an empty dict."""
    fold = folds_by_stratum(patterns, folds, seed)
    out = {}
    for f in range(folds):
        test = [p for p in patterns if fold[p.label] == f]
        if not test:
            continue
        predictor = train([p for p in patterns if fold[p.label] != f])
        for p in test:
            predicted = predictor.predict(p.features)
            out[p.label] = {k: float(predicted[k]) for k in p.bandwidth_mib_s if k in predicted}
    return out
