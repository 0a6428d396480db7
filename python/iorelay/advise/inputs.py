"""Where the pattern to advise on comes from: typed (`--pattern`), read from an earlier run's
daemon traces (`--trace`) or from a Darshan log (`--darshan`). Shared by `iorelay advise` and
`iorelay run --ionodes auto`, which take the same options."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from iorelay.advise.observed import Observed, ObservedError
from iorelay.advise.service import AdviceError


@dataclass(frozen=True)
class Asked:
    """The pattern text to advise on, and what it was read from (None when typed)."""

    pattern_text: str
    observed: Observed | None
    source: str


def add_arguments(p: argparse.ArgumentParser, pattern_required: bool) -> None:
    """--pattern | --trace | --darshan, and the counts the records may lack."""
    group = p.add_mutually_exclusive_group(required=pattern_required)
    group.add_argument(
        "--pattern",
        help="key=value,...: layout (shared|fpp), spatiality (contiguous|strided), request "
        "(a size, e.g. 64KiB), ranks, nodes, operation (write|read; default write), odirect "
        "(yes|no; default: as the measured runs when they agree, else no)",
    )
    group.add_argument(
        "--trace",
        nargs="+",
        metavar="TRACE",
        help="the daemon traces of an earlier run (iorelayd --trace, format version 2), one per "
        "I/O node; needs --nodes",
    )
    group.add_argument("--darshan", metavar="LOG", help="a Darshan log of the job; needs --nodes")
    group.add_argument(
        "--stats",
        nargs="+",
        metavar="ADDRESS",
        help="the I/O-node daemons of a running job (their counters, as `iorelay stats` shows "
        "them; credential: --secret-file or $IORELAY_SECRET_FILE); needs --nodes and "
        "--spatiality",
    )
    p.add_argument(
        "--spatiality",
        choices=("contiguous", "strided"),
        help="with --stats: the job's spatiality (the daemons' counters hold no offsets)",
    )
    p.add_argument(
        "--app",
        help="with --stats: the application whose counters to read (needed when several moved "
        "data through the daemons)",
    )
    p.add_argument(
        "--nodes", type=int, help="compute nodes of the job (traces and Darshan logs lack them)"
    )
    p.add_argument("--ranks", type=int, help="ranks of the job, replacing what the records say")
    p.add_argument(
        "--choices",
        type=choices,
        metavar="K,K,...",
        help="the I/O-node counts to choose among (default: those measured); counts above the "
        "largest measured are predicted from the two largest measured forwarded counts by "
        "b(n) = min(a*n, c)",
    )
    p.add_argument(
        "--darshan-timeout",
        type=float,
        default=60.0,
        help="seconds the Darshan log's parser may take (60)",
    )


def choices(text: str) -> list[int]:
    """--choices: distinct I/O-node counts, comma-separated, each a whole number >= 0."""
    try:
        counts = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: I/O-node counts such as 0,1,2,4,8") from None
    if any(k < 0 for k in counts) or len(set(counts)) != len(counts):
        raise argparse.ArgumentTypeError(f"{text!r}: distinct counts, each 0 or more")
    return sorted(counts)


def asked(args: argparse.Namespace) -> Asked:
    """The pattern the options describe; AdviceError naming what is missing or wrong."""
    stats_only = [f"--{n}" for n in ("spatiality", "app") if getattr(args, n) is not None]
    if stats_only and not args.stats:
        raise AdviceError(f"{' and '.join(stats_only)} go with --stats")
    if args.pattern is not None:
        if args.nodes is not None or args.ranks is not None:
            raise AdviceError(
                "--nodes and --ranks go with --trace, --darshan or --stats; --pattern says them"
            )
        return Asked(args.pattern, None, "the command line")
    for name in ("nodes", "ranks"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            raise AdviceError(f"--{name} {value}: must be positive")
    if args.trace:
        observed = _from_traces(args.trace)
        source, what = "daemon trace " + ", ".join(args.trace), "a daemon trace"
    elif args.stats:
        observed = _from_stats(args)
        source, what = "counters of the daemons " + ", ".join(args.stats), "daemon counters"
        if "ranks" not in observed.keys and args.ranks is None:
            raise AdviceError(
                "no client is connected to the daemons now, so their counters do not say the "
                "ranks: give --ranks N"
            )
    else:
        from iorelay.advise.darshan_input import darshan_observed

        observed = darshan_observed(args.darshan, args.darshan_timeout)
        source, what = f"Darshan log {args.darshan}", "a Darshan log"
    try:
        text = observed.pattern_text(args.nodes, args.ranks)
    except ObservedError as e:
        raise AdviceError(f"{what} does not hold the node count: give --nodes N") from e
    return Asked(text, observed, source)


def _from_traces(paths: list[str]) -> Observed:
    from iorelay.advise.from_trace import trace_pattern
    from iorelay.trace import TraceError, read_trace

    try:
        traces = [read_trace(p) for p in paths]
        return trace_pattern(traces)
    except (TraceError, OSError, ValueError) as e:
        raise AdviceError(f"cannot read the trace: {e}") from None


def _from_stats(args: argparse.Namespace) -> Observed:
    from iorelay.advise.from_stats import stats_pattern
    from iorelay.paths import NotBuiltError
    from iorelay.stats import StatsError, query_stats

    try:
        docs = [query_stats(a, getattr(args, "secret_file", None)) for a in args.stats]
    except (StatsError, NotBuiltError, OSError) as e:
        why = " ".join(str(e).split())
        raise AdviceError(f"cannot read the daemons' counters: {why}") from None
    try:
        return stats_pattern(docs, args.spatiality, args.app)
    except ObservedError as e:
        raise AdviceError(str(e)) from None
