"""The statistics of one pattern: Kruskal-Wallis, Dunn's post-hoc test, and effect sizes.

Thin, total wrappers: degenerate inputs that scipy rejects or warns about (a single group, all
values identical) get a defined answer (nothing is distinguishable) instead of an exception.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd
import scikit_posthocs as sp
from scipy import stats as sps

P_ADJUST = "holm"


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment: the i-th smallest of m p-values becomes
    max over j ≤ i of min(1, (m - j + 1) · p_(j)); returned in the input order.

    Written here rather than taken from statsmodels, whose version forces a full garbage
    collection on every call (about 80 ms each, most of the analysis time).
    """
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = stepped
    return out


def _none(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.asarray(p_values, dtype=float)


ADJUSTERS = {"holm": holm, "none": _none}


def cliffs_delta(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Cliff's delta of a against b: P(a > b) - P(a < b) over all pairs, in [-1, 1].

    Raises ValueError when a or b is empty.
    """
    x = np.asarray(a, dtype=float)
    y = np.sort(np.asarray(b, dtype=float))
    if x.size == 0 or y.size == 0:
        raise ValueError("cliffs_delta needs two non-empty samples")
    below = np.searchsorted(y, x, side="left")  # b values strictly below each a
    above = y.size - np.searchsorted(y, x, side="right")  # b values strictly above each a
    return float((below.sum() - above.sum()) / (x.size * y.size))


def cliffs_magnitude(delta: float) -> str:
    """Romano et al.'s thresholds: negligible < 0.147 ≤ small < 0.33 ≤ medium < 0.474 ≤ large."""
    d = abs(delta)
    if d < 0.147:
        return "negligible"
    if d < 0.33:
        return "small"
    if d < 0.474:
        return "medium"
    return "large"


def _distinct(groups: Mapping[Hashable, np.ndarray]) -> bool:
    values = np.concatenate([np.asarray(g, dtype=float) for g in groups.values()])
    return values.size > 0 and bool(np.ptp(values) > 0)


def kruskal_wallis(groups: Mapping[Hashable, Sequence[float] | np.ndarray]) -> tuple[float, float]:
    """Kruskal-Wallis H and its p-value over the groups.

    With fewer than two non-empty groups, or every value identical, the groups cannot be told
    apart: returns (0.0, 1.0).
    """
    arrays = {k: np.asarray(v, dtype=float) for k, v in groups.items() if len(v) > 0}
    if len(arrays) < 2 or not _distinct(arrays):
        return 0.0, 1.0
    h, p = sps.kruskal(*arrays.values())
    return float(h), float(p)


def dunn(
    groups: Mapping[Hashable, Sequence[float] | np.ndarray], p_adjust: str = P_ADJUST
) -> pd.DataFrame:
    """Dunn's test of every pair of groups: a symmetric matrix of adjusted p-values.

    The adjustment ("holm" by default, or "none") runs over all k(k-1)/2 pairs; the diagonal is
    1. When every value is identical the matrix is all ones. The raw p-values are
    scikit-posthocs' posthoc_dunn (with its tie correction).
    """
    arrays = {k: np.asarray(v, dtype=float) for k, v in groups.items() if len(v) > 0}
    keys = list(arrays)
    if len(keys) < 2 or not _distinct(arrays):
        return pd.DataFrame(1.0, index=keys, columns=keys)
    codes = np.concatenate([np.full(len(v), i) for i, v in enumerate(arrays.values())])
    long = pd.DataFrame({"value": np.concatenate(list(arrays.values())), "group": codes})
    raw = sp.posthoc_dunn(long, val_col="value", group_col="group")
    p = raw.reindex(index=range(len(keys)), columns=range(len(keys))).to_numpy(copy=True)
    upper = np.triu_indices(len(keys), 1)
    p[upper] = ADJUSTERS[p_adjust](p[upper])
    p.T[upper] = p[upper]
    np.fill_diagonal(p, 1.0)
    return pd.DataFrame(p, index=pd.Index(keys), columns=pd.Index(keys))
