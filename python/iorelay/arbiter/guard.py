"""The guard that keeps the knapsack from trusting a prediction beyond its measured error: a job
leaves its static allocation s for an option k only where the predicted log gain of k over s
exceeds the error band of that gain, measured on held-out patterns (the predictor's
cross-validated errors), pattern by pattern without the pattern's own error. Pure functions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from iorelay.arbiter import baselines
from iorelay.arbiter.patterns import Pattern
from iorelay.arbiter.predictor import stratum
from iorelay.arbiter.problem import Job, Pool, choices

Margins = dict[tuple[int, int], float]


def log_errors(
    patterns: Sequence[Pattern], predicted: Mapping[str, Mapping[int, float]]
) -> dict[str, dict[int, float]]:
    """log(predicted / measured) of every pattern and option both have (held-out predictions:
    each pattern predicted by a predictor that did not see it)."""
    out = {}
    for p in patterns:
        mine = predicted.get(p.label, {})
        out[p.label] = {
            k: math.log(mine[k] / v)
            for k, v in p.bandwidth_mib_s.items()
            if k in mine and mine[k] > 0 and v > 0
        }
    return out


def gain_margins(
    patterns: Sequence[Pattern],
    predicted: Mapping[str, Mapping[int, float]],
    quantile: float,
) -> dict[str, Margins]:
    """Per pattern p and ordered pair of options (k, s): the `quantile` (numpy's "higher": an
    observed value; 1 is the largest) of the held-out errors of the log gain of k over s,
    (error at k) - (error at s), over the other patterns of p's layout x spatiality. A positive
    error is a gain predicted larger than it was: the margin is how far a prediction of that
    stratum overstated the gain. A pair no other pattern has gets no margin (never permitted)."""
    errors = log_errors(patterns, predicted)
    out: dict[str, Margins] = {}
    for p in patterns:
        others = [
            errors[q.label]
            for q in patterns
            if q.label != p.label and stratum(q.features) == stratum(p.features)
        ]
        margins: Margins = {}
        for k in p.bandwidth_mib_s:
            for s in p.bandwidth_mib_s:
                if k == s:
                    continue
                seen = [e[k] - e[s] for e in others if k in e and s in e]
                if seen:
                    margins[(k, s)] = float(np.quantile(seen, quantile, method="higher"))
        out[p.label] = margins
    return out


def zero_margins(patterns: Sequence[Pattern]) -> dict[str, Margins]:
    """No error band: for values known exactly (the true feed), the guard only asks a gain."""
    return {
        p.label: {(k, s): 0.0 for k in p.bandwidth_mib_s for s in p.bandwidth_mib_s if k != s}
        for p in patterns
    }


def believed(job: Job, k: int, s: int) -> bool:
    """Whether job's values show option k better than option s beyond the job's margin."""
    if k == s:
        return True
    margin = job.margins_log.get((k, s))
    vk, vs = float(job.values[k]), float(job.values[s])
    if margin is None or not (vk > 0 and vs > 0):
        return False
    return math.log(vk / vs) > margin


def permitted(jobs: Sequence[Job], pool: Pool) -> list[list[int]]:
    """Each job's options under the guard: its static allocation, and every option the guard
    believes better than it. Static's allocation always fits, so the guarded knapsack always
    has a solution."""
    fixed = baselines.static(jobs, pool)
    return [
        [k for k in choices(job, pool) if believed(job, k, s)]
        for job, s in zip(jobs, fixed, strict=True)
    ]
