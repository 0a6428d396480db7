"""Writes the analysis to a directory: PNG figures, CSV tables and one self-contained HTML page.

The HTML embeds every image as base64 and needs nothing else, so it can be mailed or archived.
"""

from __future__ import annotations

import base64
import html
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from iorelay import __version__
from iorelay.analysis import advice, answer, labels, plots
from iorelay.analysis.compute import ACCESS, Analysis

REPORT_NAME = "report.html"
_CSS = """
body { font-family: sans-serif; margin: 2em; max-width: 110em; color: #222; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #eee; }
td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }
.note { color: #555; font-size: 0.9em; }
"""


@dataclass(frozen=True)
class Image:
    """A figure saved as PNG: its file and a caption."""

    name: str
    path: Path
    caption: str


def figures(analysis: Analysis) -> list[tuple[str, str, Figure]]:
    """(file stem, caption, figure) for every figure of the report, in report order."""
    spec = analysis.spec
    out: list[tuple[str, str, Figure]] = [
        ("choices", "Number of choices that matter", plots.plot_choices(analysis.choices, spec)),
        ("best", "Best option per pattern", plots.plot_best(analysis.best, spec)),
    ]
    for name, frame in plots.facets(analysis.patterns, spec):
        fig = plots.plot_best_heatmap(frame, spec, f"best {labels.column(spec.option)}: {name}")
        out.append((f"heatmap-{name}", f"Best option: {name}", fig))
    for name, frame in plots.facets(analysis.options, spec):
        fig = plots.plot_option_grid(frame, spec, name)
        out.append((f"grid-{name}", f"{spec.metric.label} per option: {name}", fig))
    return out


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def save_figures(analysis: Analysis, out_dir: Path) -> list[Image]:
    """Draws and saves every figure as out_dir/<name>.png, one at a time."""
    images = []
    for stem, caption, fig in figures(analysis):
        path = out_dir / f"{_slug(stem)}.png"
        plots.save(fig, path)
        del fig
        images.append(Image(stem, path, caption))
    return images


def pattern_table(analysis: Analysis) -> pd.DataFrame:
    """The per-pattern results as display strings (one row per pattern)."""
    spec = analysis.spec
    p = analysis.patterns
    shown = [c for c in spec.pattern if p[c].nunique(dropna=False) > 1] or list(spec.pattern)
    out = pd.DataFrame(
        {
            "pattern": [labels.key(r, shown) for r in p[shown].to_dict("records")],
            "runs": p["n_runs"],
            "best": [labels.option(spec.option, v) for v in p["best"]],
            f"best median {spec.metric.label}": p["best_median"].map("{:.1f}".format),
            "Kruskal-Wallis p": p["kw_p"].map("{:.3g}".format),
            "choices that matter": p["n_choices"],
            "not worse than the best": p["choices"],
            "worst / best median": p["worst_ratio"].map("{:.2f}".format),
        }
    )
    return out


def option_table(analysis: Analysis) -> pd.DataFrame:
    """Per pattern x option: median, IQR, Dunn p against the best, Cliff's delta, ratio."""
    spec = analysis.spec
    o = analysis.options
    shown = [c for c in spec.pattern if o[c].nunique(dropna=False) > 1] or list(spec.pattern)
    return pd.DataFrame(
        {
            "pattern": [labels.key(r, shown) for r in o[shown].to_dict("records")],
            labels.column(spec.option): [labels.option(spec.option, v) for v in o[spec.option]],
            "runs": o["n_runs"],
            "median": o["median"].map("{:.1f}".format),
            "IQR": [f"{a:.1f}-{b:.1f}" for a, b in zip(o["q1"], o["q3"], strict=True)],
            "best": o["is_best"].map({True: "★", False: ""}),
            "Dunn p vs best (Holm)": o["p_vs_best"].map("{:.3g}".format),
            "not worse": o["worse"].map({True: "", False: "yes"}),
            "Cliff's δ vs best": o["cliffs_delta"].map("{:+.2f}".format),
            "median / best": o["median_ratio"].map("{:.2f}".format),
        }
    )


def dimension_tables(analysis: Analysis) -> dict[str, pd.DataFrame]:
    """Per varying dimension: for each value, how many patterns each option is best in."""
    spec = analysis.spec
    out: dict[str, pd.DataFrame] = {}
    by = analysis.by_dimension
    for dim, g in by.groupby("dimension", sort=False):
        t = g.pivot(index="value", columns="option", values="n_best").fillna(0).astype(int)
        t = t.reindex(columns=[o for o in spec.options if o in t.columns])
        t.columns = pd.Index([labels.option(spec.option, o) for o in t.columns])
        t.index = pd.Index([labels.value(str(dim), v) for v in t.index], name=labels.column(dim))
        out[str(dim)] = t.reset_index()
    return out


def _table(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, escape=True, border=0)


def _img(image: Image) -> str:
    data = base64.b64encode(image.path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(image.caption)}" src="data:image/png;base64,{data}">'


def render_html(analysis: Analysis, images: list[Image], sources: list[str]) -> str:
    """The whole report as one HTML string, images inlined as base64 PNG."""
    spec = analysis.spec
    opt = html.escape(labels.column(spec.option))
    n_patterns = len(analysis.patterns)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>iorelay analyze: {opt}</title><style>{_CSS}</style></head><body>",
        f"<h1>Which choices of {opt} matter</h1>",
        "<p>"
        + f"{answer.count_runs(analysis)} runs, {n_patterns} patterns, options "
        + html.escape(", ".join(labels.option(spec.option, o) for o in spec.options))
        + f"; metric {html.escape(spec.metric.label)}; alpha = {spec.alpha:g}. Inputs: "
        + html.escape(", ".join(sources))
        + f". iorelay {html.escape(__version__)}.</p>",
        '<p class="note">Per pattern: Kruskal-Wallis over the options, then Dunn\'s test with '
        "Holm-adjusted p-values of each option against the best one by median. An option is "
        "not worse than the best when Kruskal-Wallis is not significant or its Dunn p-value "
        "against the best is at least alpha. The number of choices that matter counts those "
        "options, the best included. Cliff's δ &lt; 0: the option tends to be worse than the "
        "best.</p>",
        f"<h2>The answer: the best choice of {opt} per pattern</h2>",
        *([f"<p>{html.escape(note)}</p>"] if (note := answer.undecided_note(analysis)) else []),
        "<ul>",
        *(f"<li>{html.escape(s)}</li>" for s in answer.pattern_sentences(analysis)),
        "</ul>",
        f"<h2>Advice: the {opt} to run with, per pattern</h2>",
        '<p class="note">The recommendation is the cheapest option not significantly worse '
        "than the best (for a number such as I/O nodes, the smallest; otherwise the best by "
        "median), as <code>iorelay advise</code> recommends; the evidence is these runs.</p>",
        _table(advice.advice_table(analysis)),
    ]
    for image in (i for i in images if i.name.startswith("grid-")):
        parts += [f"<h3>{html.escape(image.caption)}</h3>", _img(image)]
    parts += [
        f"<h2>How many choices of {opt} matter</h2>",
        _table(
            answer.readable(
                analysis.choices.assign(share=analysis.choices["share"].map("{:.1%}".format)),
                spec.option,
            )
        ),
        f"<h2>How often each choice of {opt} is best</h2>",
        _table(
            answer.readable(
                analysis.best.assign(share_best=analysis.best["share_best"].map("{:.1%}".format)),
                spec.option,
            )
        ),
    ]
    for dim, table in dimension_tables(analysis).items():
        name = "layout/spatiality" if dim == ACCESS else labels.column(dim)
        parts += [f"<h3>Best option per {html.escape(name)}</h3>", _table(table)]
    parts.append("<h2>More figures</h2>")
    for image in (i for i in images if not i.name.startswith("grid-")):
        parts += [f"<h3>{html.escape(image.caption)}</h3>", _img(image)]
    parts += [
        "<h2>Per pattern</h2>",
        _table(pattern_table(analysis)),
        "<details><summary>Per pattern and option</summary>",
        _table(option_table(analysis)),
        "</details></body></html>",
    ]
    return "\n".join(parts)


def write_report(analysis: Analysis, out_dir: str | os.PathLike[str], sources: list[str]) -> Path:
    """Writes figures (PNG), tables (CSV) and report.html into out_dir; returns the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    analysis.patterns.to_csv(out / "patterns.csv", index=False)
    analysis.options.to_csv(out / "options.csv", index=False)
    analysis.choices.to_csv(out / "choices.csv", index=False)
    analysis.best.to_csv(out / "best.csv", index=False)
    analysis.by_dimension.to_csv(out / "by_dimension.csv", index=False)
    rows = advice.advice_rows(analysis)
    rows["not_worse"] = [" ".join(map(str, v)) for v in rows["not_worse"]]
    rows.to_csv(out / "advice.csv", index=False)
    images = save_figures(analysis, out)
    path = out / REPORT_NAME
    path.write_text(render_html(analysis, images, sources), encoding="utf-8")
    return path
