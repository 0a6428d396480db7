"""The exact multiple-choice knapsack of Bez et al. (IPDPS 2021): every job takes exactly one of
its options, the I/O nodes taken sum to at most the pool, the sum of values is the largest
possible. Dynamic programming over (job, I/O nodes used exactly), vectorised over the second.

Ties are broken deterministically: among allocations of the same total value, the one using
fewer I/O nodes in all; among those, job by job in the order given, the one giving the earlier
job fewer I/O nodes. Values are summed from the last job to the first, the order exhaustive.py
uses too, so equal allocations compare equal to the last bit.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from iorelay.arbiter.problem import ArbiterError, Job, Pool, choices


def allowed(
    jobs: Sequence[Job],
    pool: Pool,
    minimum_values: Sequence[float] | None,
    permitted: Sequence[Collection[int]] | None = None,
) -> list[list[int]]:
    """Each job's options, ascending, without those whose value is below its minimum and, when
    permitted is given, those not in permitted[i]."""
    out = []
    for i, job in enumerate(jobs):
        mine = choices(job, pool)
        if minimum_values is not None:
            mine = [k for k in mine if job.values[k] >= minimum_values[i]]
        if permitted is not None:
            mine = [k for k in mine if k in permitted[i]]
        if not mine:
            raise ArbiterError(f"job {job.name} has no option within the pool and its limits")
        out.append(mine)
    return out


def solve(
    jobs: Sequence[Job],
    pool: Pool,
    minimum_values: Sequence[float] | None = None,
    permitted: Sequence[Collection[int]] | None = None,
) -> tuple[int, ...]:
    """The optimal option for every job (see the module's tie rule). minimum_values[i], when
    given, is a constraint: job i takes no option valued below it (the fairness floor);
    permitted[i], when given, another: job i takes one of those options only (the guard)."""
    options = allowed(jobs, pool, minimum_values, permitted)
    n, cap = len(jobs), pool.ionodes
    # best[i, c]: the largest value of jobs i.. using exactly c I/O nodes (-inf: impossible).
    # Each row is one vectorised step: every option's shift of the next row, then the maximum.
    best = np.full((n + 1, cap + 1), -np.inf)
    best[n, 0] = 0.0
    widest = max(max(o) for o in options) if n else 0
    padded = np.full(cap + 1 + widest, -np.inf)
    columns = np.arange(cap + 1) + widest
    for i in range(n - 1, -1, -1):
        sizes = np.asarray(options[i])
        values = np.array([float(jobs[i].values[k]) for k in options[i]])
        padded[widest:] = best[i + 1]
        best[i] = (values[:, None] + padded[columns[None, :] - sizes[:, None]]).max(axis=0)
    if not np.isfinite(best[0]).any():
        raise ArbiterError("no allocation fits the pool")
    used = int(np.argmax(best[0]))  # the first maximum: the fewest I/O nodes
    sizes = []
    for i in range(n):
        target, after = best[i, used], best[i + 1]
        for k in options[i]:
            if k <= used and float(jobs[i].values[k]) + after[used - k] == target:
                sizes.append(k)
                used -= k
                break
    return tuple(sizes)
