"""The write saturation point k of a machine (Chaarawi & Gabriel, Cluster 2011): the bytes one
collective-I/O aggregator must write per call for its write to reach the plateau bandwidth.
Pure functions over measured runs (bench/collective_saturation.py measures them).

Rule: within one repetition, the plateau is the highest bandwidth over the sizes tried, and k is
the smallest size whose bandwidth reaches PLATEAU_SHARE of it. Each repetition gives its own k,
so the spread of k over repetitions is reported (median and interquartile range), not only the
k of the pooled medians. A curve whose largest size alone reaches the share has not shown a
plateau: k is then flagged `reached_at_largest`, since a larger size might be faster still.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PLATEAU_SHARE = 0.9


@dataclass(frozen=True)
class Saturation:
    saturation_point: int  # median of the repetitions' k (bytes)
    quartiles: tuple[float, float]  # interquartile range of the repetitions' k (bytes)
    per_repetition: tuple[int, ...]
    median_curve: dict[int, float]  # size -> median MiB/s over repetitions
    reached_at_largest: bool  # some repetition reached the share only at the largest size


def point_of(curve: Mapping[int, float], share: float = PLATEAU_SHARE) -> int:
    """The smallest size whose bandwidth is at least `share` of the curve's highest."""
    if not curve:
        raise ValueError("no measured sizes")
    top = max(curve.values())
    if top <= 0:
        raise ValueError("no size moved any data")
    return min(size for size, bw in curve.items() if bw >= share * top)


def saturation(rows: Iterable[Mapping[str, float]], share: float = PLATEAU_SHARE) -> Saturation:
    """From rows with `size` (bytes per aggregator per call), `repetition` and `mib_s`."""
    curves: dict[int, dict[int, float]] = {}
    for r in rows:
        curves.setdefault(int(r["repetition"]), {})[int(r["size"])] = float(r["mib_s"])
    if not curves:
        raise ValueError("no measured runs")
    sizes = sorted({s for c in curves.values() for s in c})
    if any(sorted(c) != sizes for c in curves.values()):
        raise ValueError("every repetition must measure the same sizes")
    ks = tuple(point_of(curves[rep], share) for rep in sorted(curves))
    q = statistics.quantiles(ks, n=4, method="inclusive") if len(ks) > 1 else [ks[0]] * 3
    return Saturation(
        saturation_point=int(statistics.median_low(ks)),
        quartiles=(q[0], q[2]),
        per_repetition=ks,
        median_curve={s: statistics.median(c[s] for c in curves.values()) for s in sizes},
        reached_at_largest=any(k == sizes[-1] for k in ks),
    )
