"""Figures from the analysis DataFrames: one function per figure, each returning a Figure.

Figures are built with matplotlib's object API on an Agg canvas, never through pyplot's global
figure list, so nothing keeps a figure alive once the caller has saved and dropped it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure

from iorelay.analysis import labels
from iorelay.analysis.compute import ACCESS, Spec, with_access

COLUMN_DIM = "request_bytes"  # across the grid; every other varying dimension goes down it
FACET_DIMS = ("layout", "spatiality")  # one figure per pair
LABEL_MEDIAN = "median"
LABEL_NOT_WORSE = "not worse than the best"
LABEL_BEST = "best"
DPI = 90
# The head of an option grid, in inches: the title's line, each legend line, the column titles.
HEAD_TITLE_IN = 0.4
LEGEND_LINE_IN = 0.22
HEAD_COLUMNS_IN = 0.35


def new_figure(width_in: float, height_in: float, layout: str | None = "constrained") -> Figure:
    """A Figure on an Agg canvas (constrained layout unless told otherwise)."""
    fig = Figure(figsize=(width_in, height_in), layout=layout)
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, path: str | os.PathLike[str], dpi: int = DPI) -> None:
    """Writes the figure as PNG. The figure was never registered with pyplot, so there is no
    global reference to close: it is freed as soon as the caller drops it."""
    fig.savefig(path, dpi=dpi, format="png")


def facets(frame: pd.DataFrame, spec: Spec) -> list[tuple[str, pd.DataFrame]]:
    """The frame split by layout/spatiality, labelled ("fpp-contiguous", …); else one facet."""
    if not all(c in spec.pattern for c in FACET_DIMS):
        return [("all patterns", frame)]
    frame = with_access(frame)
    return [(str(k), g) for k, g in frame.groupby(ACCESS, sort=True, observed=True)]


def grid_dims(frame: pd.DataFrame, spec: Spec) -> tuple[list[str], str | None]:
    """(row dimensions, column dimension) of a facet: only dimensions that vary in it."""
    varying = [c for c in spec.pattern if frame[c].nunique(dropna=False) > 1]
    col = COLUMN_DIM if COLUMN_DIM in varying else None
    rows = [c for c in varying if c != col and c not in FACET_DIMS]
    return rows, col


def _row_label(key: tuple[Any, ...], dims: list[str]) -> str:
    if not dims:
        return ""
    return "\n".join(labels.key(dict(zip(dims, key, strict=True)), [d]) for d in dims)


def _cells(
    frame: pd.DataFrame, rows: list[str], col: str | None
) -> tuple[list[tuple[Any, ...]], list[Any]]:
    row_keys = (
        sorted(frame[rows].drop_duplicates().itertuples(index=False, name=None)) if rows else [()]
    )
    col_keys = sorted(frame[col].unique().tolist()) if col else [None]
    return row_keys, col_keys


def _select(
    frame: pd.DataFrame, rows: list[str], rk: tuple[Any, ...], col: str | None, ck: Any
) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for c, v in zip(rows, rk, strict=True):
        mask &= (frame[c] == v).to_numpy()
    if col is not None:
        mask &= (frame[col] == ck).to_numpy()
    return frame.loc[mask]


def plot_option_grid(options: pd.DataFrame, spec: Spec, title: str = "") -> Figure:
    """Small multiples of the metric against the option, one panel per pattern.

    Each panel: the median per option (line), the interquartile range (band), min-max (vertical
    lines), options not significantly worse than the best (filled dots) and the best (star).
    Columns are request sizes; rows are the other varying pattern dimensions. Takes rows of
    compute.compare_options for one facet.
    """
    rows, col = grid_dims(options, spec)
    row_keys, col_keys = _cells(options, rows, col)
    nr, nc = len(row_keys), len(col_keys)
    # Fixed margins: constrained layout costs seconds per figure at this many panels. The head
    # holds, top down, the title, the legend (one line from two columns on, else three) and
    # the column titles, each on lines of its own so that none covers another.
    legend_lines = 1 if nc >= 2 else 3
    head_in = HEAD_TITLE_IN + LEGEND_LINE_IN * legend_lines + HEAD_COLUMNS_IN
    width, height = 1.9 * nc + 1.3, 1.5 * nr + 0.75 + head_in
    fig = new_figure(width, height, layout=None)
    fig.subplots_adjust(
        left=1.25 / width,
        right=1 - 0.15 / width,
        bottom=0.75 / height,
        top=1 - head_in / height,
        wspace=0.35,
        hspace=0.3,
    )
    # Not sharex: sharing between this many axes makes every limit change quadratic.
    axes = fig.subplots(nr, nc, squeeze=False)
    position = {o: i for i, o in enumerate(spec.options)}
    for i, rk in enumerate(row_keys):
        for j, ck in enumerate(col_keys):
            ax = axes[i][j]
            cell = _select(options, rows, rk, col, ck).sort_values(spec.option, key=_order(spec))
            if cell.empty:
                ax.set_axis_off()
                continue
            _panel(ax, cell, spec, position)
            if i == 0 and col is not None:
                ax.set_title(labels.value(col, ck), fontsize=9)
            if j == 0:
                ax.set_ylabel(_row_label(rk, rows), fontsize=8)
    ticks = list(range(len(spec.options)))
    names = [labels.value(spec.option, o) for o in spec.options]
    for i, row in enumerate(axes):
        for ax in row:
            ax.set_xticks(ticks, names if i == nr - 1 else [])
    fig.supxlabel(labels.column(spec.option), y=0.15 / height)
    fig.supylabel(spec.metric.label, x=0.1 / width)
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(
        handles,
        names,
        loc="upper left",
        bbox_to_anchor=(0.1 / width, 1 - HEAD_TITLE_IN / height),
        ncols=3 if legend_lines == 1 else 1,
        fontsize=8,
        frameon=False,
        borderaxespad=0,
    )
    if title:
        fig.suptitle(title, x=0.15 / width, y=1 - 0.08 / height, ha="left", va="top")
    return fig


def _order(spec: Spec) -> Callable[[pd.Series], pd.Series]:
    position = {o: i for i, o in enumerate(spec.options)}
    return lambda s: s.map(position)


def _panel(ax: Axes, cell: pd.DataFrame, spec: Spec, position: dict[Any, int]) -> None:
    x = cell[spec.option].map(position).to_numpy(dtype=float)
    ax.fill_between(x, cell["q1"], cell["q3"], alpha=0.25, color="tab:blue", linewidth=0)
    ax.vlines(x, cell["min"], cell["max"], color="tab:gray", linewidth=0.8)
    ax.plot(x, cell["median"], color="tab:blue", linewidth=1.2, label=LABEL_MEDIAN)
    ok = ~cell["worse"].to_numpy(dtype=bool)
    ax.plot(
        x[ok], cell["median"].to_numpy()[ok], "o", color="tab:blue", ms=4, label=LABEL_NOT_WORSE
    )
    best = cell["is_best"].to_numpy(dtype=bool)
    ax.plot(x[best], cell["median"].to_numpy()[best], "*", color="tab:red", ms=10, label=LABEL_BEST)
    ax.set_xlim(-0.5, len(position) - 0.5)
    ax.set_ylim(bottom=0, top=max(float(cell["max"].max()), 1e-9) * 1.08)
    ax.tick_params(labelsize=7)


def option_colors(spec: Spec) -> ListedColormap:
    """One distinct colour per option value, in option order."""
    base = colormaps["tab10"] if len(spec.options) <= 10 else colormaps["tab20"]
    return ListedColormap([base(i) for i in range(len(spec.options))])


def best_matrix(
    patterns: pd.DataFrame, spec: Spec
) -> tuple[pd.DataFrame, pd.DataFrame, list[str], str | None]:
    """The best option's index (in spec.options) and the number of choices, per grid cell.

    Rows are the non-request dimensions, columns the request sizes: (best, n_choices, row
    dimensions, column dimension). Missing cells are NaN.
    """
    rows, col = grid_dims(patterns, spec)
    row_keys, col_keys = _cells(patterns, rows, col)
    position = {o: i for i, o in enumerate(spec.options)}
    best = pd.DataFrame(np.nan, index=range(len(row_keys)), columns=range(len(col_keys)))
    count = best.copy()
    for i, rk in enumerate(row_keys):
        for j, ck in enumerate(col_keys):
            cell = _select(patterns, rows, rk, col, ck)
            if len(cell) == 1:
                best.iloc[i, j] = position[cell["best"].iloc[0]]
                count.iloc[i, j] = cell["n_choices"].iloc[0]
    best.index = pd.Index([_row_label(rk, rows).replace("\n", ", ") for rk in row_keys])
    best.columns = pd.Index([labels.value(col, ck) if col else "" for ck in col_keys])
    count.index, count.columns = best.index, best.columns
    return best, count, rows, col


def plot_best_heatmap(patterns: pd.DataFrame, spec: Spec, title: str = "") -> Figure:
    """Heat map of the best option over request size (columns) and the other dimensions (rows).

    Each cell shows the best option and, in parentheses, how many options are not significantly
    worse than it. Takes rows of compute.summarize_patterns for one facet.
    """
    best, count, _, col = best_matrix(patterns, spec)
    nr, nc = best.shape
    fig = new_figure(1.0 * nc + 3.5, 0.45 * nr + 1.8)
    ax = fig.subplots()
    cmap = option_colors(spec)
    norm = BoundaryNorm(np.arange(len(spec.options) + 1) - 0.5, cmap.N)
    image = ax.imshow(best.to_numpy(dtype=float), cmap=cmap, norm=norm, aspect="auto")
    for i in range(nr):
        for j in range(nc):
            b = best.iloc[i, j]
            if not np.isnan(b):
                text = (
                    f"{labels.value(spec.option, spec.options[int(b)])} ({int(count.iloc[i, j])})"
                )
                ax.text(j, i, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(nc), list(best.columns))
    ax.set_yticks(range(nr), list(best.index), fontsize=8)
    ax.set_xlabel(labels.column(col) if col else "")
    bar = fig.colorbar(image, ax=ax, ticks=range(len(spec.options)))
    bar.ax.set_yticklabels([labels.value(spec.option, o) for o in spec.options])
    bar.set_label(f"best {labels.column(spec.option)}")
    ax.set_title(title or f"best {labels.column(spec.option)} (number of choices that matter)")
    return fig


def plot_choices(choices: pd.DataFrame, spec: Spec) -> Figure:
    """Bar chart: how many patterns have 1, 2, … options not significantly worse than the best.

    Takes compute.choices_distribution.
    """
    fig = new_figure(6.0, 3.8)
    ax = fig.subplots()
    bars = ax.bar(choices["n_choices"], choices["n_patterns"], color="tab:blue")
    ax.bar_label(bars)
    ax.set_xticks(choices["n_choices"].tolist())
    ax.set_xlabel(f"number of choices of {labels.column(spec.option)} that matter")
    ax.set_ylabel("patterns")
    ax.set_ylim(0, max(int(choices["n_patterns"].max()), 1) * 1.15)
    ax.set_title(f"options not significantly worse than the best (alpha = {spec.alpha:g})")
    return fig


def plot_best(best: pd.DataFrame, spec: Spec) -> Figure:
    """Bars per option: patterns where it is the best, and where it is not worse than the best.

    Takes compute.best_distribution.
    """
    fig = new_figure(6.0, 3.8)
    ax = fig.subplots()
    x = np.arange(len(best))
    b1 = ax.bar(x - 0.2, best["n_best"], width=0.4, label="best")
    b2 = ax.bar(x + 0.2, best["n_not_worse"], width=0.4, label="not worse than the best")
    ax.bar_label(b1, fontsize=8)
    ax.bar_label(b2, fontsize=8)
    ax.set_xticks(x, [labels.value(spec.option, o) for o in best[spec.option]])
    ax.set_xlabel(labels.column(spec.option))
    ax.set_ylabel("patterns")
    top = max(int(best["n_not_worse"].max()), int(best["n_best"].max()), 1)
    ax.set_ylim(0, top * 1.15)
    ax.legend(fontsize=8)
    ax.set_title(f"best {labels.column(spec.option)} per pattern")
    return fig
