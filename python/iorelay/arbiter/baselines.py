"""The allocations the knapsack is compared with (issue 52): none, one each, static (I/O nodes
proportional to compute nodes), shared (all jobs on all I/O nodes) and greedy (each job its own
best). Pure functions of the jobs, in the order given (the arrival order in the evaluation)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from iorelay.arbiter.problem import Job, Pool, choices


def none(jobs: Sequence[Job], pool: Pool) -> tuple[int, ...]:
    """Every job direct."""
    return tuple(0 for _ in jobs)


def one_each(jobs: Sequence[Job], pool: Pool) -> tuple[int, ...]:
    """One I/O node per job, to the first jobs while the pool lasts; the rest run direct.
    Without 1 among the options, the smallest positive option that fits."""
    left, out = pool.ionodes, []
    for job in jobs:
        positive = [k for k in choices(job, pool) if 0 < k <= left]
        k = 1 if 1 in positive else (positive[0] if positive else 0)
        out.append(k)
        left -= k
    return tuple(out)


def static(jobs: Sequence[Job], pool: Pool) -> tuple[int, ...]:
    """I/O nodes proportional to compute nodes, by largest remainder (ties: the earlier job),
    each share then rounded down to an allowed option. Never exceeds the pool."""
    if not jobs:
        return ()
    total = sum(j.compute_nodes for j in jobs)
    quotas = [pool.ionodes * j.compute_nodes / total for j in jobs]
    whole = [math.floor(q) for q in quotas]
    by_remainder = sorted(range(len(jobs)), key=lambda i: (-(quotas[i] - whole[i]), i))
    for i in by_remainder[: pool.ionodes - sum(whole)]:
        whole[i] += 1
    return tuple(
        max(k for k in choices(j, pool) if k <= w) for j, w in zip(jobs, whole, strict=True)
    )


def greedy(jobs: Sequence[Job], pool: Pool) -> tuple[int, ...]:
    """Each job in turn takes its most valuable option that still fits (ties: fewer I/O nodes)."""
    left, out = pool.ionodes, []
    for job in jobs:
        fits = [k for k in choices(job, pool) if k <= left]
        k = max(fits, key=lambda k: (job.values[k], -k))
        out.append(k)
        left -= k
    return tuple(out)


def shared_share(jobs: Sequence[Job], pool: Pool) -> float:
    """All jobs forwarded through all of the pool: each is modelled as seeing an equal share,
    pool / jobs I/O nodes (see shared_value)."""
    return pool.ionodes / len(jobs) if jobs else 0.0


def shared_value(values: Mapping[int, float], share: float) -> float:
    """A job's bandwidth on `share` I/O nodes of a pool it shares with the others (the model of
    the shared baseline): from 1 I/O node up, linear in log2(I/O nodes) between the two measured
    options around share, the largest measured option's value beyond it; below 1, that share of
    one I/O node's bandwidth (one I/O node time-shared among 1/share jobs). No pool: direct."""
    if share <= 0:
        return float(values[0])
    forwarded = sorted(k for k in values if k >= 1)
    if share < 1:
        return share * float(values[forwarded[0]])
    if share >= forwarded[-1]:
        return float(values[forwarded[-1]])
    hi = next(k for k in forwarded if k >= share)
    lo = max(k for k in forwarded if k <= share)
    if hi == lo:
        return float(values[lo])
    w = (math.log2(share) - math.log2(lo)) / (math.log2(hi) - math.log2(lo))
    return float(values[lo]) + w * (float(values[hi]) - float(values[lo]))


def bandwidth_at(values: Mapping[int, float], ionodes: float, shared: bool) -> float:
    """A job's value on the I/O nodes a decision gave it: the table for a whole option of its
    own, shared_value for a share of the whole pool."""
    return shared_value(values, ionodes) if shared else float(values[int(ionodes)])
