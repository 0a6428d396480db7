"""Predictions for I/O-node counts larger than any measured, from the shape of bandwidth against
the number of I/O nodes: each I/O node adds at most its own bandwidth, and the back end caps the
total (b(n) = min(a·n, c)). Pure functions over tables of predicted MiB/s."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def extend_saturating(predicted: pd.DataFrame, options: Sequence[int]) -> pd.DataFrame:
    """`predicted` (MiB/s, one column per trained I/O-node count) with the `options` larger than
    every trained one added, each row fitted with b(n) = min(a·n, c) on its two largest trained
    forwarded counts n1 < n2 (bandwidths b1, b2):

    - b2/b1 at least n2/n1 (the bandwidth grew in proportion to the I/O nodes, or more): no cap
      is seen, c is infinite and a the geometric mean of b1/n1 and b2/n2, so b(n) = a·n;
    - otherwise the cap is reached by n2: a = b1/n1, c = b2, so every larger count is predicted
      at b2 (and the cheapest-option rule keeps the smaller count).

    Options that are not larger than the largest trained one are left out (not interpolated).
    With fewer than two trained forwarded counts nothing is added."""
    trained = sorted(int(k) for k in predicted.columns if int(k) > 0)
    beyond = sorted(int(k) for k in set(options) if int(k) > max(trained, default=0))
    out = predicted.copy()
    if len(trained) < 2 or not beyond:
        return out
    n1, n2 = trained[-2], trained[-1]
    b1 = predicted[n1].to_numpy(float)
    b2 = predicted[n2].to_numpy(float)
    linear = b2 / b1 >= n2 / n1
    rate = np.where(linear, np.sqrt((b1 / n1) * (b2 / n2)), b1 / n1)
    cap = np.where(linear, np.inf, b2)
    for n in beyond:
        out[n] = np.minimum(rate * n, cap)
    return out[sorted(out.columns)]
