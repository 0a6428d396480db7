"""The advice of `iorelay analyze`'s report: per measured pattern, the option to run with and
its evidence. Where runs exist the not-worse set is the test's (compute.py: Kruskal-Wallis, then
Dunn's test with Holm's adjustment against the best), and the recommendation is its cheapest
member, as `iorelay advise` recommends: the fewest I/O nodes (or the smallest value of another
numeric option); for an option that is not a number (a scheduler), the best by median."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from iorelay.analysis import labels
from iorelay.analysis.compute import Analysis


def _numeric(values: Any) -> bool:
    return all(isinstance(v, (int, float, np.integer, np.floating)) for v in values)


def advice_rows(analysis: Analysis) -> pd.DataFrame:
    """One row per pattern: the pattern's columns, `recommended`, `not_worse` (a list),
    `best`, the medians of both, the recommendation's Dunn p against the best, the runs per
    option, its gain over direct access (I/O nodes only, when 0 was measured), `command`."""
    spec = analysis.spec
    rows = []
    o = analysis.options
    for key, g in o.groupby(list(spec.pattern), sort=True, dropna=False):
        pattern = dict(zip(spec.pattern, key if isinstance(key, tuple) else (key,), strict=True))
        g = g.sort_values(spec.option)
        not_worse = g.loc[~g["worse"], spec.option].tolist()
        best = g.loc[g["is_best"]].iloc[0]
        pick = min(not_worse) if _numeric(not_worse) else best[spec.option]
        rec = g.loc[g[spec.option] == pick].iloc[0]
        gain = None
        if spec.option == "ionodes" and (g["ionodes"] == 0).any():
            direct = float(g.loc[g["ionodes"] == 0, "median"].iloc[0])
            gain = float(rec["median"]) / direct if direct > 0 else None
        rows.append(
            {
                **pattern,
                "recommended": pick,
                "not_worse": not_worse,
                "best": best[spec.option],
                "recommended_median": float(rec["median"]),
                "best_median": float(best["median"]),
                "p_vs_best": float(rec["p_vs_best"]),
                "kw_p": float(rec["kw_p"]),
                "runs": int(g["n_runs"].min()),
                "gain_over_direct": gain,
                "command": (
                    f"iorelay run --ionodes {pick} ..."
                    if spec.option == "ionodes"
                    else f"iorelay run --{spec.option} {pick} ..."
                ),
            }
        )
    return pd.DataFrame(rows)


def advice_table(analysis: Analysis) -> pd.DataFrame:
    """advice_rows as display strings."""
    spec = analysis.spec
    a = advice_rows(analysis)
    shown = [c for c in spec.pattern if a[c].nunique(dropna=False) > 1] or list(spec.pattern)
    unit = spec.metric.label

    def evidence(r: dict[str, Any]) -> str:
        rec, best = (
            labels.option(spec.option, r["recommended"]),
            labels.option(spec.option, r["best"]),
        )
        text = f"median {r['recommended_median']:.1f}"
        if r["recommended"] != r["best"]:
            text += (
                f" against the best ({best}) {r['best_median']:.1f}, Dunn p = "
                f"{r['p_vs_best']:.3g} (not significantly worse)"
            )
        else:
            text += f" is the highest (Kruskal-Wallis p = {r['kw_p']:.3g})"
        if r["gain_over_direct"] is not None and r["recommended"] != 0:
            text += f"; {r['gain_over_direct']:.2f} times direct access"
        return f"{rec}: {text}; {r['runs']} runs per option"

    records = a.to_dict("records")
    return pd.DataFrame(
        {
            "pattern": [labels.key(r, shown) for r in records],
            "recommended": [labels.option(spec.option, r["recommended"]) for r in records],
            "not worse than the best": [
                ", ".join(labels.option(spec.option, v) for v in r["not_worse"]) for r in records
            ],
            f"evidence ({unit})": [evidence(r) for r in records],
            "command": [r["command"] for r in records],
        }
    )
