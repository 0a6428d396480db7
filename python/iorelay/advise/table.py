"""Measured results as one row per pattern: its description and the median bandwidth of each
option (I/O-node count), the table every advice source learns from and is scored on."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from iorelay.analysis.schema import OPTION_COLUMNS
from iorelay.sim_cells import OPTION, measured_cells

# The columns that describe a pattern to the advisor, in the order they are printed.
DESCRIPTION = (
    "layout",
    "spatiality",
    "request_bytes",
    "processes",
    "nodes",
    "operation",
    "odirect",
)


@dataclass(frozen=True)
class PatternTable:
    """`patterns`: one row per pattern (index: the pattern label), the DESCRIPTION columns.
    `bandwidth`: the median MiB/s per (pattern, option), NaN where the option was not run.
    `spread`: the same cells' coefficient of variation of the repetitions. `runs`: their count."""

    patterns: pd.DataFrame
    bandwidth: pd.DataFrame
    spread: pd.DataFrame
    runs: pd.DataFrame

    @property
    def options(self) -> list[int]:
        return [int(o) for o in self.bandwidth.columns]

    def subset(
        self, labels: pd.Index | list[str], options: list[int] | None = None
    ) -> PatternTable:
        """The table restricted to some patterns (and options)."""
        cols = self.bandwidth.columns if options is None else options
        return PatternTable(
            self.patterns.loc[labels],
            self.bandwidth.loc[labels, cols],
            self.spread.loc[labels, cols],
            self.runs.loc[labels, cols],
        )

    def cells(self) -> pd.DataFrame:
        """Long form, one row per measured (pattern, option): pattern, ionodes, median, n, cv
        and the description, the shape iorelay.sim_score reads."""
        long = self.bandwidth.stack().rename("median").reset_index()
        long.columns = ["pattern", OPTION, "median"]
        n = self.runs.stack().rename("n").reset_index()
        n.columns = ["pattern", OPTION, "n"]
        out = long.merge(n, on=["pattern", OPTION])
        return out.merge(self.patterns, left_on="pattern", right_index=True)


class MixedOptionsError(ValueError):
    """Results that vary another option (a scheduler, a placement) besides the I/O nodes."""


def held_fixed(runs: pd.DataFrame, fixed: dict[str, str]) -> pd.DataFrame:
    """The runs with each other option column (scheduler, placement, ...) at the value `fixed`
    gives, or at its only value; MixedOptionsError when one varies and is not fixed."""
    for column in OPTION_COLUMNS:
        if column == OPTION or column not in runs:
            continue
        if column in fixed:
            runs = runs[runs[column].astype(str) == fixed[column]]
            if runs.empty:
                raise MixedOptionsError(f"no measured run has {column} {fixed[column]}")
            continue
        values = sorted(runs[column].dropna().astype(str).unique())
        if len(values) > 1:
            raise MixedOptionsError(
                f"the results vary {column} ({', '.join(values)}): choose one with --{column}"
            )
    return runs


def pattern_table(runs: pd.DataFrame, fixed: dict[str, str] | None = None) -> PatternTable:
    """One row per pattern from runs in the analysis schema (iorelay.analysis.reader), the
    other options held as `fixed` says (held_fixed). Runs without an operation are writes;
    without O_DIRECT, buffered."""
    runs = held_fixed(runs.copy(), fixed or {})
    if "operation" not in runs:
        runs["operation"] = "write"
    if "odirect" not in runs:
        runs["odirect"] = False
    runs = runs[runs.get("source", "measured") == "measured"] if "source" in runs else runs
    cells = measured_cells(runs)
    cells["median"] = cells["median"].astype(float)
    # sim_cells' label leaves O_DIRECT out: two patterns differing only there stay apart.
    cells["pattern"] = cells["pattern"] + np.where(cells["odirect"].astype(bool), "/odirect", "")
    wide = cells.pivot_table(index="pattern", columns=OPTION, values="median", aggfunc="first")
    cv = cells.pivot_table(index="pattern", columns=OPTION, values="cv", aggfunc="first")
    n = cells.pivot_table(index="pattern", columns=OPTION, values="n", aggfunc="first")
    described = cells.drop_duplicates("pattern").set_index("pattern")[list(DESCRIPTION)]
    described = described.loc[wide.index].copy()
    described["odirect"] = described["odirect"].astype(bool)
    wide.columns = [int(c) for c in wide.columns]
    cv = cv.reindex(index=wide.index, columns=wide.columns)
    n = n.reindex(index=wide.index, columns=wide.columns)
    n.columns = wide.columns
    cv.columns = wide.columns
    return PatternTable(described, wide.astype(float), cv.astype(float), n.fillna(0).astype(int))


def best_share(bandwidth: pd.DataFrame, chosen: pd.Series) -> np.ndarray:
    """Per pattern: measured median of the chosen option / the pattern's best median."""
    values = bandwidth.to_numpy(dtype=float)
    cols = {int(c): i for i, c in enumerate(bandwidth.columns)}
    picked = values[np.arange(len(values)), [cols[int(k)] for k in chosen.loc[bandwidth.index]]]
    return picked / np.nanmax(values, axis=1)
