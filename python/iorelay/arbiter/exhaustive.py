"""The knapsack by enumeration of every allocation: the reference the dynamic programme is
checked against (tests and bench/arbiter_solver.py). Same constraints, same tie rule, values
summed in the same order; the enumeration is a numpy grid with one axis per job, so 8 jobs
(5^8 allocations) take milliseconds."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from iorelay.arbiter.knapsack import allowed
from iorelay.arbiter.problem import ArbiterError, Job, Pool


def solve_exhaustive(
    jobs: Sequence[Job],
    pool: Pool,
    minimum_values: Sequence[float] | None = None,
    permitted: Sequence[Collection[int]] | None = None,
) -> tuple[int, ...]:
    """The best of every combination of options by (value, fewest I/O nodes, earlier jobs
    fewer). Grid order is lexicographic in the options, so the first best is the tie rule's."""
    options = allowed(jobs, pool, minimum_values, permitted)
    if not jobs:
        return ()
    n = len(jobs)

    def along(i: int, row: Sequence[float]) -> np.ndarray:
        shape = [1] * n
        shape[i] = len(row)
        return np.asarray(row, dtype=float).reshape(shape)

    value = np.zeros([1] * n)
    used = np.zeros([1] * n)
    for i in range(n - 1, -1, -1):  # v0 + (v1 + (... + vn)), as the dynamic programme sums
        value = along(i, [float(jobs[i].values[k]) for k in options[i]]) + value
        used = along(i, options[i]) + used
    value, used = value.ravel(), used.ravel()
    fits = used <= pool.ionodes
    if not fits.any():
        raise ArbiterError("no allocation fits the pool")
    best = value[fits].max()
    tied = fits & (value == best)
    first = int(np.argmax(tied & (used == used[tied].min())))
    index = np.unravel_index(first, [len(o) for o in options])
    return tuple(options[i][int(index[i])] for i in range(n))
