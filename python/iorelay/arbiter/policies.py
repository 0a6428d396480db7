"""Every arbitration policy by name, each a pure function (jobs, pool) -> Decision: the
knapsack with or without the fairness floor, the knapsack under the error guard, and the
baselines."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from iorelay.arbiter import baselines, guard, knapsack
from iorelay.arbiter.decision import Decision, decided
from iorelay.arbiter.problem import ArbiterError, Job, Pool, check_jobs

Policy = Callable[[Sequence[Job], Pool], Decision]

BASELINES: dict[str, Callable[[Sequence[Job], Pool], tuple[int, ...]]] = {
    "none": baselines.none,
    "one-each": baselines.one_each,
    "static": baselines.static,
    "greedy": baselines.greedy,
}
NAMES = ("knapsack", "guarded", *BASELINES, "shared")


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
    if name == "shared":
        return decide_shared
    if name in BASELINES:
        allocate = BASELINES[name]

        def decide(jobs: Sequence[Job], pool: Pool) -> Decision:
            check_jobs(jobs, pool)
            return decided(name, pool, jobs, allocate(jobs, pool))

        return decide
    raise ArbiterError(f"unknown policy {name}; known: {', '.join(NAMES)}")
