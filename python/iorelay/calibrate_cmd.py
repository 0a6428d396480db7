"""`iorelay calibrate`'s command line; the fitting itself is calibrate.py, loaded only when the
command runs (numpy, pandas and scipy take seconds to import, which every other `iorelay`
command would otherwise pay)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iorelay import units
from iorelay.calibrate_parameters import ACCESS_TIMES, DEFAULT_PARAMETERS, FREE_PARAMETERS


def _ints(text: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers separated by commas: {text}") from None


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "calibrate",
        help="fit a platform's free parameters to measured results",
        description="Fit the free parameters of a simulator platform to measured results (FORGE "
        "CSV or iorelay's results), by the median bandwidth of each (pattern, I/O nodes) cell.",
    )
    p.add_argument("--measured", required=True, nargs="+", help="results files or directories")
    p.add_argument("--platform", required=True, help="platforms/NAME.json by NAME, or a path")
    p.add_argument("--out", required=True, type=Path, help="the calibrated platform file")
    p.add_argument(
        "--method",
        choices=("local", "global"),
        default="local",
        help="local: staged Nelder-Mead on the pooled log error; global: differential "
        "evolution on --objective, under --max-minutes (docs/simulator.md)",
    )
    p.add_argument(
        "--objective",
        choices=("choice", "rank", "regret", "log"),
        default="choice",
        help="--method global: choice (1 - the mean of the within-pattern Spearman rho over all "
        "options and over the forwarded ones and the forwarded regret ratio, plus 0.05 x the "
        "pooled log error), rank (1 - within-pattern rho, plus the same), regret (1 - regret "
        "ratio) or log (pooled log error)",
    )
    p.add_argument(
        "--max-minutes", type=float, default=0.0, help="--method global: wall budget (0: none)"
    )
    p.add_argument(
        "--parameters",
        default=None,
        help="comma-separated (default: the local method's five, or with --method global the "
        f"ranking set); valid: {', '.join([*FREE_PARAMETERS, ACCESS_TIMES])}",
    )
    p.add_argument("--options", type=_ints, help="I/O-node counts to fit on (default: all)")
    p.add_argument("--fraction", type=float, default=1.0, help="share of patterns, stratified")
    p.add_argument("--seed", type=int, default=1, help="seed of the pattern choice")
    p.add_argument(
        "--requests-per-rank", type=int, help="default: sim_cells.DEFAULT_REQUESTS_PER_RANK (4)"
    )
    p.add_argument(
        "--total",
        default="0",
        help="bytes the measured runs planned to move (fixes the files' layout), e.g. 128GiB",
    )
    p.add_argument("--scheduler", default="fifo")
    p.add_argument("--max-evaluations", type=int, default=60)
    p.add_argument(
        "--log",
        type=Path,
        help="--method global: the evaluation log, one line per simulation (default: OUT with "
        "the suffix .log.jsonl)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="--method global: continue the search of --log (same cells, platform, parameters, "
        "objective and seed): logged simulations are not run again; raise --max-evaluations "
        "or give new --max-minutes to go further",
    )
    p.add_argument(
        "--search-share",
        type=float,
        default=1.0,
        help="--method global: simulate this share of the patterns at each point of the "
        "search, per layout x spatiality x processes-per-node stratum, fewest processes first "
        "(the training scores are theirs)",
    )
    p.add_argument(
        "--search-every-node-count",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="--search-share: also the cheapest pattern of each layout x spatiality x node "
        "count (cheapest first alone keeps the fewest nodes; default on, --no-... for off)",
    )
    p.add_argument("--jobs", type=int, help="simulations at once (default: one per core)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for flag, value in (("--fraction", args.fraction), ("--search-share", args.search_share)):
        if not 0.0 < value <= 1.0:
            print(f"iorelay calibrate: {flag} must lie in (0, 1]", file=sys.stderr)
            return 2
    from iorelay import sim_cells
    from iorelay.analysis.schema import AnalysisError
    from iorelay.calibrate import CalibrateError, calibrate
    from iorelay.calibrate_global import RANKING_PARAMETERS
    from iorelay.simulate import SimulateError

    if args.parameters is None:
        names = RANKING_PARAMETERS if args.method == "global" else DEFAULT_PARAMETERS
    else:
        names = [n for n in args.parameters.split(",") if n]
    try:
        total = units.parse_bytes(args.total)
        calibrate(
            args.measured,
            args.platform,
            args.out,
            names=names,
            options=args.options,
            fraction=args.fraction,
            seed=args.seed,
            requests_per_rank=args.requests_per_rank or sim_cells.DEFAULT_REQUESTS_PER_RANK,
            total_bytes=total,
            scheduler=args.scheduler,
            max_evaluations=args.max_evaluations,
            jobs=args.jobs or sim_cells.default_jobs(),
            method=args.method,
            objective=args.objective,
            max_minutes=args.max_minutes,
            log_path=args.log,
            resume=args.resume,
            search_share=args.search_share,
            search_every_node_count=args.search_every_node_count,
        )
    except (CalibrateError, SimulateError, AnalysisError, units.UnitError, OSError, KeyError) as e:
        print(f"iorelay calibrate: {e}", file=sys.stderr)
        return 2
    return 0
