"""`iorelay analyze`: reads results, compares the options per pattern, prints and reports.

Exposes add_parser(sub) and run(args) for the `iorelay` command; also runnable on its own as
`python -m iorelay.analysis.cli`. Importing it is cheap: the analysis modules load in run().
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from iorelay.analysis.schema import (
    DEFAULT_ALPHA,
    METRICS,
    OPTION_ALIASES,
    OPTION_COLUMNS,
    AnalysisError,
)


def _alpha(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"alpha must lie in (0, 1), not {text}")
    return value


def configure(p: argparse.ArgumentParser) -> None:
    """Adds the analyze arguments to a parser."""
    p.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS",
        help="result files (.csv, .parquet) or directories of them: FORGE CSV or iorelay results",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write report.html, the figures (PNG) and the tables (CSV) into DIR",
    )
    options = ", ".join((*OPTION_COLUMNS, *OPTION_ALIASES))
    p.add_argument(
        "--option",
        default="ionodes",
        help=f"the column whose values are compared (default: ionodes; one of {options})",
    )
    p.add_argument(
        "--alpha",
        type=_alpha,
        default=DEFAULT_ALPHA,
        help="significance level (default: %(default)s)",
    )
    p.add_argument(
        "--metric",
        choices=sorted(METRICS),
        default="bandwidth",
        help="what is compared (default: %(default)s; higher bandwidth, lower time is better)",
    )
    p.set_defaults(func=run)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "analyze",
        help="which options (I/O nodes, schedulers) matter, per access pattern",
        description=(
            "Per access pattern, compare the options with Kruskal-Wallis and Dunn's test "
            "(Holm), find the best by median and the options not significantly worse than it."
        ),
    )
    configure(p)


def run(args: argparse.Namespace) -> int:
    """Analyses the results: prints the summary, writes the report if --out; 1 on bad input."""
    # Imported here so that `iorelay --help` and the other subcommands neither pay for nor need
    # pandas, scipy, scikit-posthocs and matplotlib.
    from rich.console import Console

    from iorelay.analysis import compute, reader, report, summary

    console = Console()
    try:
        runs = reader.read_results(args.results)
        analysis = compute.analyze(runs, args.option, args.metric, args.alpha)
    except AnalysisError as e:
        print(f"iorelay analyze: {e}", file=sys.stderr)
        return 1
    summary.print_summary(analysis, console)
    if args.out:
        path = report.write_report(analysis, args.out, [str(r) for r in args.results])
        console.print(f"report: {path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="iorelay analyze",
        description="Per access pattern, which options are not significantly worse than the best.",
    )
    configure(parser)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
