"""`iorelay advise`: the number of I/O nodes for a pattern, from measured results, with the
evidence (which source answered, its cross-validated score, the simple rules' scores)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from iorelay.analysis.reader import expand, read_results
from iorelay.analysis.schema import AnalysisError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "advise",
        help="how many I/O nodes a pattern should get, from measured results",
        description="Advise the number of I/O nodes for an access pattern from measured results "
        "(iorelay explore results or FORGE CSV): the options not significantly worse than the "
        "predicted best, and the cheapest of them. Each source (the nearest measured pattern, a "
        "learned model) is scored by cross-validation on the data; the best covering one "
        "answers. Scores are cached by the data's hash in $XDG_CACHE_HOME/iorelay/advise.",
    )
    p.add_argument(
        "--pattern",
        required=True,
        help="key=value,...: layout (shared|fpp), spatiality (contiguous|strided), request "
        "(a size, e.g. 64KiB), ranks, nodes, operation (write|read; default write), odirect "
        "(yes|no; default: as the measured runs when they agree, else no)",
    )
    p.add_argument("--measured", required=True, nargs="+", help="results files or directories")
    p.add_argument(
        "--scheduler",
        help="use the runs with this scheduler (needed when the results vary the scheduler)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.set_defaults(func=run)


def fail(message: str) -> int:
    print(f"iorelay advise: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from iorelay.advise import cache
    from iorelay.advise.pattern import PatternError, given_odirect, parse_pattern
    from iorelay.advise.table import MixedOptionsError, pattern_table

    fixed = {"scheduler": args.scheduler} if args.scheduler else {}
    try:
        files = expand(args.measured)
        table = pattern_table(read_results(files), fixed)
    except MixedOptionsError as e:
        return fail(str(e))
    except (AnalysisError, OSError, KeyError, ValueError) as e:
        return fail(f"cannot read the measured results: {e}")
    if table.patterns.empty:
        return fail("the measured results hold no pattern")
    if len(table.options) < 2:
        return fail(f"the measured results hold one option only ({table.options[0]} I/O nodes)")
    odirects = set(table.patterns["odirect"])
    try:
        asked = parse_pattern(args.pattern, default_odirect=odirects == {True})
    except PatternError as e:
        return fail(str(e))
    from iorelay.advise.models import CANDIDATES, SOURCES

    scoring = [*(s.name for s in SOURCES), *CANDIDATES, *(f"{k}={v}" for k, v in fixed.items())]
    key = cache.data_hash(files, scoring)
    record = cache.load(key)
    if record is None:
        from iorelay.advise.scores import score_sources

        record = score_sources(table, SOURCES)
        cache.store(key, record)
    answer = answer_for(table, asked, record)
    if isinstance(answer, str):
        return fail(answer)
    answer["odirect_assumed"] = not given_odirect(args.pattern)
    if args.json:
        print(json.dumps(answer, indent=2))
    else:
        print(readable(answer))
    return 0


def answer_for(table: Any, asked: Any, record: dict[str, Any]) -> dict[str, Any] | str:
    """The advice as a JSON-ready object, or a one-line reason why there is none."""
    from iorelay.advise.answer import advise
    from iorelay.advise.models import SOURCES
    from iorelay.advise.sources import nearest

    names, dist = nearest(table, asked)
    distance = float(dist.iloc[0])
    scored = [s for s in SOURCES if record["sources"][s.name]["regret_ratio"] is not None]
    if not scored:
        return (
            f"too few measured patterns to score any source by cross-validation "
            f"({len(table.patterns)} patterns)"
        )
    ranked = sorted(scored, key=lambda s: -record["sources"][s.name]["regret_ratio"])
    for source in ranked:
        prediction = source.fit(table)(asked)
        if not bool(prediction.covered.iloc[0]):
            continue
        mine = record["sources"][source.name]
        advice = advise(
            prediction.bandwidth.iloc[0],
            record["tolerance_log"],
            mine["level_sd_log"],
            mine["profile_sd_log"],
        )
        return {
            "pattern": describe(asked.iloc[0]),
            "recommended": {
                "ionodes": advice.recommended,
                "predicted_mib_s": advice.predicted[advice.recommended],
                "interval_mib_s": list(advice.bandwidth_interval),
                "gain_over_direct": advice.gain,
                "gain_interval": list(advice.gain_interval) if advice.gain_interval else None,
            },
            "not_worse": advice.not_worse,
            "predicted_best": advice.best,
            "predicted": {str(k): v for k, v in advice.predicted.items()},
            "source": source.name,
            "source_regret": mine["regret_ratio"],
            "sources": {n: s["regret_ratio"] for n, s in record["sources"].items()},
            "always_direct_regret": record["always_direct"],
            "always_largest_regret": record["always_largest"],
            "largest_option": record["largest_option"],
            "not_worse_tolerance_log": record["tolerance_log"],
            "cross_validation_folds": record["folds"],
            "nearest_measured": names[0],
            "distance": distance,
            "far": far_note(table, distance),
            "command": f"iorelay run --ionodes {advice.recommended} ...",
        }
    where = (
        f"nearest measured pattern {names[0]} at distance {distance:.3g}"
        if names[0]
        else "no measured pattern shares its layout, spatiality, operation and O_DIRECT ("
        + ", ".join(sorted(set(_strata(table))))
        + " measured)"
    )
    return f"the pattern is outside every source's range: {where}"


def _strata(table: Any) -> list[str]:
    from iorelay.advise.features import strata

    return list(strata(table.patterns))


def far_note(table: Any, distance: float) -> str | None:
    """A note when the pattern is farther from the measured ones than they are from each other
    (the largest nearest-neighbour distance among the measured patterns)."""
    from iorelay.advise.sources import nearest

    if distance == 0:
        return None
    spacing = []
    for label in table.patterns.index:
        others = table.subset(table.patterns.index.drop(label))
        _, d = nearest(others, table.patterns.loc[[label]])
        spacing.append(float(d.iloc[0]))
    finite = [s for s in spacing if np.isfinite(s)]
    widest = max(finite) if finite else 0.0
    if distance <= widest:
        return None
    return (
        f"far from anything measured: distance {distance:g} to the nearest measured pattern, "
        f"where measured patterns lie at most {widest:g} from their nearest"
    )


def describe(row: Any) -> str:
    from iorelay.units import format_bytes

    return (
        f"layout={row['layout']},spatiality={row['spatiality']},"
        f"request={format_bytes(int(row['request_bytes']))},ranks={int(row['processes'])},"
        f"nodes={int(row['nodes'])},operation={row['operation']},"
        f"odirect={'yes' if row['odirect'] else 'no'}"
    )


def readable(a: dict[str, Any]) -> str:
    rec = a["recommended"]
    lines = [f"pattern: {a['pattern']}"]
    if a["odirect_assumed"]:
        lines[0] += "  (odirect not given: " + (
            "all measured runs are O_DIRECT)" if a["pattern"].endswith("yes") else "taken as no)"
        )
    if a["distance"] == 0:
        lines.append(f"measured: {a['nearest_measured']}")
    else:
        lines.append(f"nearest measured: {a['nearest_measured']} (distance {a['distance']:g})")
    if a["far"]:
        lines.append(f"warning: {a['far']}")
    lines += ["", f"{'I/O nodes':>9}  {'predicted MiB/s':>15}  not worse"]
    for k, v in sorted(a["predicted"].items(), key=lambda kv: int(kv[0])):
        mark = "yes" if int(k) in a["not_worse"] else ""
        star = "  <- recommended" if int(k) == rec["ionodes"] else ""
        lines.append(f"{k:>9}  {v:>15.1f}  {mark}{star}")
    low, high = rec["interval_mib_s"]
    lines.append("")
    lines.append(
        f"recommended: {rec['ionodes']} I/O nodes, {rec['predicted_mib_s']:.1f} MiB/s "
        f"(95% {low:.1f}-{high:.1f})"
    )
    if rec["gain_over_direct"] is not None:
        g_low, g_high = rec["gain_interval"]
        lines.append(
            f"gain over direct: {rec['gain_over_direct']:.2f}x (95% {g_low:.2f}-{g_high:.2f})"
        )
    lines.append("")
    lines.append(f"regret ratio by {a['cross_validation_folds']}-fold cross-validation:")
    for name, score in sorted(a["sources"].items(), key=lambda kv: -(kv[1] or 0)):
        if score is None:
            lines.append(f"  (none)  {name}: predicted no held-out pattern")
            continue
        used = "  <- used" if name == a["source"] else ""
        lines.append(f"  {score:.3f}  {name}{used}")
    if a["always_direct_regret"] is not None:
        lines.append(f"  {a['always_direct_regret']:.3f}  always direct")
    lines.append(f"  {a['always_largest_regret']:.3f}  always {a['largest_option']} I/O nodes")
    lines += ["", a["command"]]
    return "\n".join(lines)
