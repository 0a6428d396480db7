"""The analysis as rich tables in the terminal: the headline numbers, not every pattern."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from iorelay.analysis import answer, labels
from iorelay.analysis.compute import ACCESS, Analysis


def choices_table(analysis: Analysis) -> Table:
    """How many patterns have 1, 2, … choices that matter."""
    t = Table(title="Choices that matter (options not significantly worse than the best)")
    t.add_column("choices", justify="right")
    t.add_column("patterns", justify="right")
    t.add_column("share", justify="right")
    for row in analysis.choices.itertuples(index=False):
        t.add_row(str(row.n_choices), str(row.n_patterns), f"{row.share:.1%}")
    t.add_row("total", str(int(analysis.choices["n_patterns"].sum())), "", style="bold")
    return t


def best_table(analysis: Analysis) -> Table:
    """Per option: patterns where it is best, and where it is not worse than the best."""
    spec = analysis.spec
    t = Table(title=f"Best {labels.column(spec.option)} per pattern")
    t.add_column(labels.column(spec.option))
    for name in ("best", "share", "not worse than best"):
        t.add_column(name, justify="right")
    for row in analysis.best.to_dict("records"):
        t.add_row(
            labels.option(spec.option, row[spec.option]),
            str(row["n_best"]),
            f"{row['share_best']:.1%}",
            str(row["n_not_worse"]),
        )
    return t


def dimension_table(analysis: Analysis, dim: str) -> Table:
    """For one pattern dimension: per value, the number of patterns where each option is best."""
    spec = analysis.spec
    name = "layout/spatiality" if dim == ACCESS else labels.column(dim)
    g = analysis.by_dimension.loc[analysis.by_dimension["dimension"] == dim]
    t = Table(title=f"Best {labels.column(spec.option)} by {name} (patterns)")
    t.add_column(name)
    for o in spec.options:
        t.add_column(labels.value(spec.option, o), justify="right")
    for value, rows in g.groupby("value", sort=True):
        counts = dict(zip(rows["option"], rows["n_best"], strict=True))
        best = max(counts.values())
        cells = []
        for o in spec.options:
            n = int(counts.get(o, 0))
            cells.append(f"[bold]{n}[/bold]" if n == best and n > 0 else str(n))
        t.add_row(labels.value(dim, value), *cells)
    return t


# Patterns up to which the terminal gets one answer sentence each (the report always has them).
MAX_SENTENCES = 20


def print_summary(analysis: Analysis, console: Console) -> None:
    """Prints the header line and the tables."""
    spec = analysis.spec
    console.print(
        f"[bold]{answer.count_runs(analysis)}[/bold] runs, "
        f"[bold]{len(analysis.patterns)}[/bold] patterns, "
        f"{labels.column(spec.option)} ∈ "
        f"{{{', '.join(labels.value(spec.option, o) for o in spec.options)}}}, "
        f"metric {spec.metric.label}, alpha = {spec.alpha:g}; "
        f"Kruskal-Wallis significant in {int(analysis.patterns['kw_significant'].sum())} patterns"
    )
    note = answer.undecided_note(analysis)
    if note:
        console.print(note)
    sentences = answer.pattern_sentences(analysis)
    if len(sentences) <= MAX_SENTENCES:
        for sentence in sentences:
            console.print(f"• {sentence}")
    console.print(choices_table(analysis))
    console.print(best_table(analysis))
    for dim in analysis.by_dimension["dimension"].drop_duplicates():
        console.print(dimension_table(analysis, str(dim)))
