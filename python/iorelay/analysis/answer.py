"""The answer first: per pattern, which option is best and by how much, in one sentence (or that
the runs cannot tell the options apart); and the number of runs counted as runs (a benchmark run
that measured a write and a read phase is one run, not two)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from iorelay.analysis import labels
from iorelay.analysis.compute import Analysis

# Columns that tell one phase of a run from another phase of the same run.
_PHASE_COLUMNS = ("operation",)


def count_runs(analysis: Analysis) -> int:
    """Runs, not rows: rows that differ only in their phase belong to one run when the input
    numbers its repetitions (iorelay's results); without that, each row is a run (FORGE)."""
    runs = analysis.runs
    if "repetition" not in runs.columns:
        return len(runs)
    spec = analysis.spec
    keys = [c for c in (*spec.pattern, spec.option) if c not in _PHASE_COLUMNS]
    keys += [c for c in ("repetition", "source", "file") if c in runs.columns]
    return int(runs.groupby(keys, dropna=False).ngroups)


def pattern_sentences(analysis: Analysis) -> list[str]:
    """One sentence per pattern: the best option, how much faster it is than the slowest one
    (and than direct access when the option is a number of I/O nodes), and which others are not
    significantly worse."""
    spec = analysis.spec
    p = analysis.patterns
    o = analysis.options
    shown = [c for c in spec.pattern if p[c].nunique(dropna=False) > 1] or list(spec.pattern)
    m = re.fullmatch(r"(.*) \((.*)\)", spec.metric.label)  # "bandwidth (MiB/s)"
    metric, unit = (m.group(1), m.group(2)) if m else (spec.metric.label, "")
    out = []
    for row in p.to_dict("records"):
        mine = o
        for c in spec.pattern:
            mine = mine.loc[mine[c] == row[c]]
        best = labels.option(spec.option, row["best"])
        if undecided(row):
            text = (
                f"{labels.key(row, shown)}: the runs cannot tell the choices of "
                f"{labels.column(spec.option)} apart (Kruskal-Wallis p = {row['kw_p']:.2g}, "
                f"{int(mine['n_runs'].min())} runs per option); the highest median is {best}"
            )
        else:
            text = f"{labels.key(row, shown)}: best {labels.column(spec.option)} {best}"
        text += f" (median {metric} {row['best_median']:.1f}"
        text += f" {unit})" if unit else ")"
        direct = mine.loc[mine[spec.option] == 0] if spec.option == "ionodes" else pd.DataFrame()
        if len(direct) and row["best"] != 0 and float(direct["median"].iloc[0]) > 0:
            text += (
                f", {row['best_median'] / float(direct['median'].iloc[0]):.2f} times direct access"
            )
        if row["worst_ratio"] > 0:
            text += f", {1 / row['worst_ratio']:.2f} times the slowest option"
        others = [c.strip() for c in str(row["choices"]).split(",") if c.strip()]
        others = [c for c in others if c != labels.value(spec.option, row["best"])]
        if undecided(row):
            pass
        elif others:
            text += f"; not significantly worse: {', '.join(others)}"
        else:
            text += "; every other option is significantly worse"
        out.append(text + ".")
    return out


def undecided(pattern: Mapping[str, Any]) -> bool:
    """The runs cannot tell this pattern's options apart: none is significantly worse than the
    best (more than one option)."""
    return int(pattern["n_options"]) > 1 and int(pattern["n_choices"]) == int(pattern["n_options"])


def undecided_note(analysis: Analysis) -> str:
    """What the answer cannot say: in how many patterns the runs cannot tell the options apart
    (empty when they tell them apart everywhere)."""
    p = analysis.patterns
    n = sum(undecided(row) for row in p.to_dict("records"))
    if n == 0:
        return ""
    fewest = int(analysis.options["n_runs"].min())
    return (
        f"In {n} of {len(p)} patterns the runs cannot tell the options apart: no option is "
        f"significantly worse than the best (alpha = {analysis.spec.alpha:g}), so the highest "
        f"median there may be chance. With {fewest} runs per option only large, consistent "
        "differences are significant; more repetitions tell smaller ones apart."
    )


# Readable headings for the summary tables' columns.
HEADINGS = {
    "n_choices": "options not worse than the best",
    "n_patterns": "patterns",
    "share": "share of patterns",
    "n_best": "patterns where best",
    "n_not_worse": "patterns where not worse than the best",
    "share_best": "share of patterns where best",
}


def readable(frame: pd.DataFrame, option: str) -> pd.DataFrame:
    """`frame` with readable column headings (and option values as labels)."""
    out = frame.copy()
    if option in out.columns:
        out[option] = [labels.option(option, v) for v in out[option]]
    return out.rename(columns={**HEADINGS, option: labels.column(option)})
