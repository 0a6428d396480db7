"""The knapsack by enumeration of every allocation: the reference the dynamic programme is
checked against (tests and bench/arbiter_solver.py). Same constraints, same tie rule."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from iorelay.arbiter.knapsack import allowed
from iorelay.arbiter.problem import ArbiterError, Job, Pool


def solve_exhaustive(
    jobs: Sequence[Job], pool: Pool, minimum_values: Sequence[float] | None = None
) -> tuple[int, ...]:
    """Every combination of options, the best by (value, fewest I/O nodes, earlier jobs fewer)."""
    best: tuple[float, int, tuple[int, ...]] | None = None
    for sizes in itertools.product(*allowed(jobs, pool, minimum_values)):
        used = sum(sizes)
        if used > pool.ionodes:
            continue
        value = sum(reversed([float(j.values[k]) for j, k in zip(jobs, sizes, strict=True)]))
        key = (-value, used, sizes)
        if best is None or key < best:
            best = key
    if best is None:
        raise ArbiterError("no allocation fits the pool")
    return best[2]
