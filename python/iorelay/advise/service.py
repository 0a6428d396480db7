"""The advice for one pattern from measured results, as a JSON-ready object: reads the results,
scores the sources (cached by the data's hash), asks the best covering one. Shared by `iorelay
advise` and `iorelay run --ionodes auto`; the only part of the advisor besides `cache` that
reads files."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from iorelay.analysis.schema import AnalysisError


class AdviceError(ValueError):
    """No advice: the message is the one line to print (exit status 2)."""


class VariedOptionError(AdviceError):
    """The results vary another option (the scheduler) and none was chosen."""


def advice(
    measured: Sequence[str],
    pattern_text: str,
    scheduler: str | None = None,
    choices: Sequence[int] | None = None,
) -> dict[str, Any]:
    """The advice for `pattern_text` (iorelay.advise.pattern's syntax) from the results in
    `measured` (files or directories), their runs with `scheduler` when given, choosing among
    the I/O-node counts `choices` (default: the measured ones; see choice_columns); AdviceError
    with the reason when there is none."""
    from iorelay.advise import cache
    from iorelay.advise.models import CANDIDATES, SOURCES
    from iorelay.advise.pattern import PatternError, given_odirect, parse_pattern
    from iorelay.advise.table import MixedOptionsError, pattern_table
    from iorelay.analysis.reader import expand, read_results  # pandas: loaded only when advising

    fixed = {"scheduler": scheduler} if scheduler else {}
    try:
        files = expand(measured)
        table = pattern_table(read_results(files), fixed)
    except MixedOptionsError as e:
        raise VariedOptionError(str(e)) from None
    except (AnalysisError, OSError, KeyError, ValueError) as e:
        raise AdviceError(f"cannot read the measured results: {e}") from None
    if table.patterns.empty:
        raise AdviceError("the measured results hold no pattern")
    if len(table.options) < 2:
        raise AdviceError(
            f"the measured results hold one option only ({table.options[0]} I/O nodes)"
        )
    wanted = choice_columns(table.options, choices)
    odirects = set(table.patterns["odirect"])
    try:
        asked = parse_pattern(pattern_text, default_odirect=odirects == {True})
    except PatternError as e:
        raise AdviceError(str(e)) from None
    scoring = [*(s.name for s in SOURCES), *CANDIDATES, *(f"{k}={v}" for k, v in fixed.items())]
    key = cache.data_hash(files, scoring)
    record = cache.load(key)
    if record is None:
        from iorelay.advise.scores import score_sources

        record = score_sources(table, SOURCES)
        cache.store(key, record)
    answer = answer_for(table, asked, record, wanted)
    if isinstance(answer, str):
        raise AdviceError(answer)
    answer["odirect_assumed"] = not given_odirect(pattern_text)
    return answer


def choice_columns(measured: Sequence[int], choices: Sequence[int] | None) -> list[int]:
    """The I/O-node counts to choose among: `choices`, each measured or above the largest
    measured (predicted by shape.extend_saturating, which needs two measured forwarded counts);
    the measured ones when not given. AdviceError for a count it cannot predict."""
    if choices is None:
        return list(measured)
    top = max(measured)
    forwarded = [k for k in measured if k > 0]
    for k in choices:
        if k in measured:
            continue
        if k < top:
            raise AdviceError(
                f"{k} I/O nodes were not measured: only counts above the largest measured "
                f"({top}) are predicted (measured: {', '.join(map(str, measured))})"
            )
        if len(forwarded) < 2:
            raise AdviceError(
                f"{k} I/O nodes lie beyond the measured counts, and predicting them needs two "
                f"measured counts above 0 (measured: {', '.join(map(str, measured))})"
            )
    return sorted(choices)


def answer_for(
    table: Any, asked: Any, record: dict[str, Any], choices: Sequence[int] | None = None
) -> dict[str, Any] | str:
    """The advice as a JSON-ready object, or a one-line reason why there is none."""
    from iorelay.advise.answer import advise
    from iorelay.advise.models import SOURCES
    from iorelay.advise.scores import ranked_sources
    from iorelay.advise.shape import extend_saturating
    from iorelay.advise.sources import nearest

    wanted = list(choices) if choices is not None else list(table.options)
    extrapolated = [k for k in wanted if k > max(table.options)]

    names, dist = nearest(table, asked)
    distance = float(dist.iloc[0])
    by_name = {s.name: s for s in SOURCES}
    ranked = [by_name[n] for n in ranked_sources(record) if n in by_name]
    if not ranked:
        return (
            f"too few measured patterns to score any source by cross-validation "
            f"({len(table.patterns)} patterns)"
        )
    for source in ranked:
        prediction = source.fit(table)(asked)
        if not bool(prediction.covered.iloc[0]):
            continue
        mine = record["sources"][source.name]
        predicted = extend_saturating(prediction.bandwidth, wanted)[wanted]
        advice = advise(
            predicted.iloc[0],
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
            "extrapolated": extrapolated,
            "source": source.name,
            "source_regret": mine["regret_ratio"],
            "source_rule": source_rule(record, source.name),
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
        + " measured), and no source covers "
        + _stratum(asked)
        + " I/O: the measured-pattern sources answer for measured strata only (the simulator is "
        "not a source yet)"
    )
    return f"the pattern is outside every source's range: {where}"


def _stratum(asked: Any) -> str:
    row = asked.iloc[0]
    return f"{'O_DIRECT' if row['odirect'] else 'buffered'} {row['operation']}"


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
    finite = [s for s in spacing if math.isfinite(s)]
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


def source_rule(record: dict[str, Any], name: str) -> str:
    """Why `name` answered: the best regret ratio, or tied with it and the smallest gain error."""
    mine = record["sources"][name]
    tied = [n for n, s in record["sources"].items() if s.get("tied")]
    if mine.get("regret_gap") in (None, 0.0) and len(tied) <= 1:
        return "the best cross-validated regret ratio"
    if mine.get("tied"):
        return (
            f"within the best cross-validated regret ratio (gap {mine['regret_gap']:.3f}, "
            f"standard error {mine['regret_gap_se']:.3f}; {len(tied)} sources tied), and the "
            f"smallest spread of gain errors among them ({mine['profile_sd_log']:.3f} in log)"
        )
    return "the best-ranked source that covers the pattern"
