"""The spread point of a machine and MPI: the bytes per collective call from which one
aggregator on every host writes a call at least as fast as one aggregator for all hosts. Pure
functions over measured runs (bench/collective_spread.py measures them on a fixed pattern).

Spreading the aggregators over the hosts adds the hosts' links but may add a cost per call
(more aggregators to exchange with and to wait for); which wins depends on the call's size and
on how the MPI runs its aggregators, so it is measured, not modelled: over a ladder of call
sizes, the median bandwidth with one aggregator and with one per host. The spread point is where
their ratio crosses 1, interpolated linearly in log size between the two measured sizes around
the crossing (the last size where one aggregator was faster, the first from which spreading was
never slower).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping


def median_curve(runs: Iterable[tuple[int, float]]) -> dict[int, float]:
    """(bytes per call, MiB/s) runs -> the median MiB/s of each size, sizes ascending."""
    by_size: dict[int, list[float]] = {}
    for size, mib_s in runs:
        by_size.setdefault(int(size), []).append(float(mib_s))
    return {s: statistics.median(by_size[s]) for s in sorted(by_size)}


def spread_point(one: Mapping[int, float], spread: Mapping[int, float]) -> int | None:
    """The call size from which `spread` (one aggregator per host) is at least as fast as `one`
    (one aggregator) at every measured size: 0 when it is at every size (nothing measured says
    otherwise down to the smallest), None when it is slower at the largest size measured."""
    sizes = sorted(one)
    if sorted(spread) != sizes or len(sizes) < 2:
        raise ValueError("both curves need the same sizes, at least two")
    if any(one[s] <= 0 or spread[s] <= 0 for s in sizes):
        raise ValueError("a size moved no data")
    ratio = {s: spread[s] / one[s] for s in sizes}
    if ratio[sizes[-1]] < 1:
        return None
    losing = [s for s in sizes if ratio[s] < 1]
    if not losing:
        return 0
    below = losing[-1]
    above = sizes[sizes.index(below) + 1]
    # ratio 1 between `below` (< 1) and `above` (>= 1), linear in log size
    t = (1 - ratio[below]) / (ratio[above] - ratio[below])
    point = math.exp(math.log(below) + t * (math.log(above) - math.log(below)))
    return int(point) // 1024 * 1024  # whole KiB: no more precision is measured
