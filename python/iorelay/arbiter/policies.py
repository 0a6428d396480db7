"""Every arbitration policy by name, each a pure function (jobs, pool) -> Decision: the
knapsack with or without the fairness floor, the knapsack under the error guard, and the
baselines."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from iorelay.arbiter import baselines, guard, knapsack
from iorelay.arbiter.decision import Decision, decided
from iorelay.arbiter.problem import ArbiterError, Job, Pool, check_jobs, choices

Policy = Callable[[Sequence[Job], Pool], Decision]

BASELINES: dict[str, Callable[[Sequence[Job], Pool], tuple[int, ...]]] = {
    "none": baselines.none,
    "one-each": baselines.one_each,
    "static": baselines.static,
    "greedy": baselines.greedy,
}
NAMES = ("knapsack", "guarded", "anchored", *BASELINES, "shared")


def floor_values(jobs: Sequence[Job], pool: Pool, floor_share: float) -> list[float]:
    """The fairness floor as values: floor_share of each job's value at its static allocation."""
    fixed = baselines.static(jobs, pool)
    return [floor_share * float(j.values[k]) for j, k in zip(jobs, fixed, strict=True)]


def decide_knapsack(jobs: Sequence[Job], pool: Pool, floor_share: float | None = None) -> Decision:
    """The knapsack's decision; with floor_share, no job below that share of its static value
    (always feasible for a share ≤ 1: static itself satisfies it)."""
    check_jobs(jobs, pool)
    if floor_share is not None and not 0.0 <= floor_share <= 1.0:
        raise ArbiterError(f"the fairness floor is a share in [0, 1]: {floor_share}")
    minimum = None if floor_share is None else floor_values(jobs, pool, floor_share)
    name = "knapsack" if floor_share is None else f"knapsack-floor-{floor_share:g}"
    return decided(name, pool, jobs, knapsack.solve(jobs, pool, minimum), floor_share)


def decide_guarded(jobs: Sequence[Job], pool: Pool, floor_share: float | None = None) -> Decision:
    """The knapsack under the guard (arbiter/guard.py): a job takes its static allocation or an
    option whose predicted gain over it exceeds the job's error band; the fairness floor on top
    when floor_share is given."""
    check_jobs(jobs, pool)
    if floor_share is not None and not 0.0 <= floor_share <= 1.0:
        raise ArbiterError(f"the fairness floor is a share in [0, 1]: {floor_share}")
    minimum = None if floor_share is None else floor_values(jobs, pool, floor_share)
    name = "guarded" if floor_share is None else f"guarded-floor-{floor_share:g}"
    sizes = knapsack.solve(jobs, pool, minimum, guard.permitted(jobs, pool))
    return decided(name, pool, jobs, sizes, floor_share)


def anchored_permitted(jobs: Sequence[Job], pool: Pool) -> list[set[int]]:
    """The anchored knapsack's options per job: only its static allocation while the job has
    not run there (measured it), else the options valued at least as much as it (the measured
    static value; predicted values elsewhere until the job has run there too)."""
    fixed = baselines.static(jobs, pool)
    out = []
    for job, s in zip(jobs, fixed, strict=True):
        if s not in job.measured:
            out.append({s})
        else:
            out.append({k for k in choices(job, pool) if job.values[k] >= job.values[s]})
    return out


def decide_anchored(jobs: Sequence[Job], pool: Pool) -> Decision:
    """The knapsack anchored at static by measurement: a job first runs at its static
    allocation until its bandwidth there is measured, then may take any option not valued
    below that measured value; an option it moves to is measured in turn, and one measured
    below the anchor is no longer permitted. With exact values it is the knapsack with a floor
    of 1; with predictions, a job can be below its static value only while it tries an option
    for the first time."""
    check_jobs(jobs, pool)
    return decided(
        "anchored", pool, jobs, knapsack.solve(jobs, pool, None, anchored_permitted(jobs, pool))
    )


def decide_shared(jobs: Sequence[Job], pool: Pool) -> Decision:
    """All jobs on all I/O nodes, each valued by the shared model (baselines.shared_value)."""
    check_jobs(jobs, pool)
    share = baselines.shared_share(jobs, pool)
    return Decision(
        policy="shared",
        pool=pool,
        jobs=tuple(jobs),
        ionodes=tuple(share for _ in jobs),
        values=tuple(baselines.shared_value(j.values, share) for j in jobs),
        shared=True,
    )


def policy(name: str, floor_share: float | None = None) -> Policy:
    """The policy called name (one of NAMES); floor_share applies to the knapsack only."""
    if name == "knapsack":
        return lambda jobs, pool: decide_knapsack(jobs, pool, floor_share)
    if name == "guarded":
        return lambda jobs, pool: decide_guarded(jobs, pool, floor_share)
    if name == "anchored":
        return decide_anchored
    if name == "shared":
        return decide_shared
    if name in BASELINES:
        allocate = BASELINES[name]

        def decide(jobs: Sequence[Job], pool: Pool) -> Decision:
            check_jobs(jobs, pool)
            return decided(name, pool, jobs, allocate(jobs, pool))

        return decide
    raise ArbiterError(f"unknown policy {name}; known: {', '.join(NAMES)}")
