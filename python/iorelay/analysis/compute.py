"""Per-pattern comparison of the options, and the tables derived from it, as DataFrames.

For each pattern: Kruskal-Wallis over the options; Dunn's test (Holm-adjusted) of each option
against the best one by median; Cliff's delta and the ratio of medians to the best. An option is
indistinguishable from the best when Kruskal-Wallis is not significant, or when Dunn's adjusted
p-value against the best is ≥ alpha. The number of choices that matter is the number of options
not significantly worse than the best (docs/analysis.md explains why against the best only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from iorelay.analysis import labels, stats
from iorelay.analysis.schema import (
    DEFAULT_ALPHA,
    METRICS,
    AnalysisError,
    Metric,
    option_column,
    pattern_columns,
)

ACCESS = "access"  # derived dimension: layout and spatiality together


@dataclass(frozen=True)
class Spec:
    """What is compared: the option column, the metric, alpha, and the pattern columns."""

    option: str
    metric: Metric
    alpha: float
    pattern: tuple[str, ...]
    options: tuple[Any, ...]  # the option values present, in order (numbers ascending)


@dataclass(frozen=True)
class Analysis:
    """Everything `iorelay analyze` computes; every table is a plain DataFrame."""

    spec: Spec
    runs: pd.DataFrame  # one row per run, internal schema
    options: pd.DataFrame  # one row per (pattern, option)
    patterns: pd.DataFrame  # one row per pattern
    choices: pd.DataFrame  # distribution of the number of choices that matter
    best: pd.DataFrame  # how often each option is best / not worse than the best
    by_dimension: pd.DataFrame  # the same, per value of each pattern dimension


def make_spec(
    runs: pd.DataFrame,
    option: str = "ionodes",
    metric: str = "bandwidth",
    alpha: float = DEFAULT_ALPHA,
) -> Spec:
    """Checks the request against the runs; raises AnalysisError when it cannot be met."""
    col = option_column(option)
    if col not in runs.columns:
        raise AnalysisError(f"no option column {option!r} in the results")
    if metric not in METRICS:
        raise AnalysisError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    m = METRICS[metric]
    if m.column not in runs.columns or runs[m.column].isna().all():
        raise AnalysisError(f"the results have no {m.column} values for metric {metric!r}")
    if not 0.0 < alpha < 1.0:
        raise AnalysisError(f"alpha must lie in (0, 1), not {alpha}")
    if runs[col].isna().any():
        raise AnalysisError(f"some runs have no value for the option {col!r}")
    values = runs[col].drop_duplicates().tolist()
    pattern = pattern_columns(runs.columns, col)
    if "source" in runs.columns and runs["source"].nunique() > 1:
        pattern.append("source")  # simulated and measured runs of a pattern are not pooled
    return Spec(
        option=col,
        metric=m,
        alpha=alpha,
        pattern=tuple(pattern),
        options=tuple(sorted(values)),
    )


def _groups(runs: pd.DataFrame, columns: tuple[str, ...]) -> list[tuple[dict[str, Any], Any]]:
    if not columns:
        return [({}, runs)]
    out = []
    for key, g in runs.groupby(list(columns), sort=True, observed=True, dropna=False):
        out.append((dict(zip(columns, key, strict=True)), g))
    return out


def compare_pattern(values: dict[Any, np.ndarray], metric: Metric, alpha: float) -> pd.DataFrame:
    """One pattern: a row per option (in the given order) with its statistics against the best.

    `values` maps each option to the metric's raw values. The best is the highest median (lowest
    for a metric where less is better); ties go to the higher mean rank, then to the first option.
    """
    return pd.DataFrame(_compare_rows(values, metric, alpha))


def _compare_rows(
    values: dict[Any, np.ndarray], metric: Metric, alpha: float
) -> list[dict[str, Any]]:
    sign = 1.0 if metric.higher_is_better else -1.0
    keys = list(values)
    oriented = {k: sign * np.asarray(values[k], dtype=float) for k in keys}
    pooled = np.concatenate([oriented[k] for k in keys])
    ranks = rankdata(pooled)
    bounds = np.cumsum([0] + [len(oriented[k]) for k in keys])
    mean_rank = {k: float(ranks[bounds[i] : bounds[i + 1]].mean()) for i, k in enumerate(keys)}
    median = {k: float(np.median(oriented[k])) for k in keys}
    best = min(keys, key=lambda k: (-median[k], -mean_rank[k], keys.index(k)))

    kw_h, kw_p = stats.kruskal_wallis(oriented)
    kw_significant = kw_p < alpha
    p_matrix = stats.dunn(oriented)
    best_raw_median = sign * median[best]
    rows = []
    for k in keys:
        raw = np.asarray(values[k], dtype=float)
        p_best = 1.0 if k == best else float(p_matrix.loc[k, best])
        different = kw_significant and p_best < alpha
        worse = different and mean_rank[k] < mean_rank[best]
        rows.append(
            {
                "option": k,
                "n_runs": raw.size,
                "median": float(np.median(raw)),
                "q1": float(np.quantile(raw, 0.25)),
                "q3": float(np.quantile(raw, 0.75)),
                "min": float(raw.min()),
                "max": float(raw.max()),
                "mean_rank": mean_rank[k],
                "is_best": k == best,
                "p_vs_best": p_best,
                "indistinguishable": not different,
                "worse": worse,
                "cliffs_delta": stats.cliffs_delta(oriented[k], oriented[best]),
                "median_ratio": (
                    float(np.median(raw)) / best_raw_median if best_raw_median != 0 else np.nan
                ),
                "kw_h": kw_h,
                "kw_p": kw_p,
            }
        )
    return rows


def compare_options(runs: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """Every pattern x option: medians, spread, Dunn p vs the best, Cliff's delta, median ratio."""
    rows: list[dict[str, Any]] = []
    col = spec.metric.column
    for key, g in _groups(runs.dropna(subset=[col]), spec.pattern):
        values = {o: s.to_numpy() for o, s in g.groupby(spec.option, sort=True)[col]}
        rows += ({**key, **r} for r in _compare_rows(values, spec.metric, spec.alpha))
    if not rows:
        raise AnalysisError(f"no runs with a {col} value")
    return pd.DataFrame(rows).rename(columns={"option": spec.option})


def summarize_patterns(options: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """One row per pattern: the best option, the options not worse than it, and their count."""
    rows = []
    for key, g in _groups(options, spec.pattern):
        best = g.loc[g["is_best"]].iloc[0]
        not_worse = g.loc[~g["worse"], spec.option].tolist()
        rows.append(
            {
                **key,
                "n_runs": int(g["n_runs"].sum()),
                "n_options": len(g),
                "kw_h": float(best["kw_h"]),
                "kw_p": float(best["kw_p"]),
                "kw_significant": bool(best["kw_p"] < spec.alpha),
                "best": best[spec.option],
                "best_median": float(best["median"]),
                "n_choices": len(not_worse),
                "n_indistinguishable": int(g["indistinguishable"].sum()),
                "choices": ", ".join(labels.value(spec.option, v) for v in not_worse),
                "worst_ratio": float(g["median_ratio"].min()),
            }
        )
    return pd.DataFrame(rows)


def choices_distribution(patterns: pd.DataFrame, n_options: int) -> pd.DataFrame:
    """How many patterns have 1, 2, … n_options choices that matter (zeros included)."""
    counts = patterns["n_choices"].value_counts()
    n = np.arange(1, max(n_options, int(patterns["n_choices"].max()) if len(patterns) else 1) + 1)
    out = pd.DataFrame({"n_choices": n, "n_patterns": [int(counts.get(i, 0)) for i in n]})
    out["share"] = out["n_patterns"] / max(len(patterns), 1)
    return out


def best_distribution(options: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """Per option: in how many patterns it is the best, and not significantly worse than it."""
    n_patterns = int(options["is_best"].sum())
    rows = []
    for o in spec.options:
        mine = options.loc[options[spec.option] == o]
        rows.append(
            {
                spec.option: o,
                "n_best": int(mine["is_best"].sum()),
                "n_not_worse": int((~mine["worse"]).sum()),
                "n_patterns": len(mine),
            }
        )
    out = pd.DataFrame(rows)
    out["share_best"] = out["n_best"] / max(n_patterns, 1)
    return out


def dimensions(patterns: pd.DataFrame, spec: Spec) -> list[str]:
    """Pattern columns that vary; layout and spatiality as one (`access`) when both exist.

    They go together because they are not independent: file per process is only contiguous.
    """
    dims = [c for c in spec.pattern if patterns[c].nunique(dropna=False) > 1]
    if "layout" in spec.pattern and "spatiality" in spec.pattern:
        dims = [ACCESS] + [c for c in dims if c not in ("layout", "spatiality")]
    return dims


def with_access(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with the derived `access` column (layout and spatiality as one label)."""
    out = frame.copy()
    out[ACCESS] = [
        labels.access(a, b) for a, b in zip(out["layout"], out["spatiality"], strict=True)
    ]
    return out


def best_by_dimension(options: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """For each varying pattern dimension and value: how often each option is best / not worse.

    Long format: dimension, value, option, n_patterns (with that value), n_best, n_not_worse.
    """
    if "layout" in spec.pattern and "spatiality" in spec.pattern:
        options = with_access(options)
    frames = []
    for dim in dimensions(options, spec):
        g = options.groupby([dim, spec.option], sort=True, observed=True, dropna=False)
        t = g.agg(n_best=("is_best", "sum"), n_patterns=("is_best", "size"))
        t["n_not_worse"] = g["worse"].sum().rsub(t["n_patterns"])
        t = t.reset_index().rename(columns={dim: "value", spec.option: "option"})
        t.insert(0, "dimension", dim)
        t["value"] = t["value"].astype(object)
        frames.append(t)
    if not frames:
        return pd.DataFrame(
            columns=["dimension", "value", "option", "n_best", "n_patterns", "n_not_worse"]
        )
    out = pd.concat(frames, ignore_index=True)
    out[["n_best", "n_patterns", "n_not_worse"]] = out[
        ["n_best", "n_patterns", "n_not_worse"]
    ].astype("int64")
    return out


def analyze(
    runs: pd.DataFrame,
    option: str = "ionodes",
    metric: str = "bandwidth",
    alpha: float = DEFAULT_ALPHA,
) -> Analysis:
    """The whole analysis of a table of runs (see reader.read_results)."""
    spec = make_spec(runs, option, metric, alpha)
    options = compare_options(runs, spec)
    patterns = summarize_patterns(options, spec)
    return Analysis(
        spec=spec,
        runs=runs,
        options=options,
        patterns=patterns,
        choices=choices_distribution(patterns, len(spec.options)),
        best=best_distribution(options, spec),
        by_dimension=best_by_dimension(options, spec),
    )
