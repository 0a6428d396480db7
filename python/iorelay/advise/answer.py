"""From predicted bandwidths to advice: the options not significantly worse than the predicted
best, and the cheapest of them (the fewest I/O nodes), with the predicted gain over direct
access and its uncertainty."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

# A two-sided 95% normal interval.
Z95 = 1.959964


@dataclass(frozen=True)
class Advice:
    """recommended: the fewest I/O nodes among not_worse; predicted: MiB/s per option;
    gain: predicted bandwidth of the recommendation / of the baseline option, with its 95%
    interval (low, high)."""

    recommended: int
    not_worse: list[int]
    predicted: dict[int, float]
    best: int
    gain: float | None
    gain_interval: tuple[float, float] | None
    bandwidth_interval: tuple[float, float]


def not_worse(predicted: pd.Series, tolerance_log: float) -> list[int]:
    """The options whose predicted log bandwidth is within `tolerance_log` of the best's."""
    values = predicted.dropna()
    top = float(np.log(values.max()))
    return sorted(int(k) for k, v in values.items() if np.log(v) >= top - tolerance_log)


def advise(
    predicted: pd.Series,
    tolerance_log: float,
    level_sd_log: float,
    profile_sd_log: float,
    baseline: int = 0,
) -> Advice:
    """Advice from one pattern's predicted MiB/s per option. `tolerance_log` is the not-worse
    band; `level_sd_log` the cross-validated spread of log bandwidth errors (the bandwidth's
    interval), `profile_sd_log` that of the errors of one option's log bandwidth relative to the
    pattern's other options (a gain compares two options: sqrt(2) of it)."""
    values = predicted.dropna()
    best = int(values.idxmax())
    chosen = not_worse(values, tolerance_log)
    recommended = min(chosen)
    bw = float(values[recommended])
    band = math.exp(Z95 * level_sd_log)
    gain = gain_interval = None
    if baseline in values.index:
        gain = bw / float(values[baseline])
        spread = 0.0 if recommended == baseline else math.exp(Z95 * math.sqrt(2) * profile_sd_log)
        gain_interval = (gain / spread, gain * spread) if spread else (gain, gain)
    return Advice(
        recommended=recommended,
        not_worse=chosen,
        predicted={int(k): float(v) for k, v in values.items()},
        best=best,
        gain=gain,
        gain_interval=gain_interval,
        bandwidth_interval=(bw / band, bw * band),
    )


def recommended_options(predicted: pd.DataFrame, tolerance_log: float) -> pd.Series:
    """recommended for every row of a table of predictions (rows with no prediction dropped)."""
    rows = predicted.dropna(how="all")
    return pd.Series(
        [min(not_worse(r, tolerance_log)) for _, r in rows.iterrows()], index=rows.index
    )
