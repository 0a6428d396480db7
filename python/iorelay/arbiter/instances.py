"""Random knapsack instances to check the solver against enumeration (the CI test and
bench/arbiter_solver.py draw from the same generator)."""

from __future__ import annotations

import random

from iorelay.arbiter.policies import floor_values
from iorelay.arbiter.problem import Job, Pool

OPTIONS = (0, 1, 2, 4, 8)


def random_instance(
    rng: random.Random, max_jobs: int, max_pool: int = 20
) -> tuple[list[Job], Pool, list[float] | None]:
    """1..max_jobs jobs, a pool of 0..max_pool I/O nodes and, half the time, a fairness floor
    (0.5, 0.9 or 1 of the static value). Half the instances have small whole values (0..4: many
    ties, so the tie rule is exercised), half real values in [1, 1000]; a fifth of the jobs
    lack one forwarded option."""
    whole = rng.random() < 0.5
    jobs = []
    for i in range(rng.randint(1, max_jobs)):
        values = {k: float(rng.randint(0, 4)) if whole else rng.uniform(1, 1000) for k in OPTIONS}
        if rng.random() < 0.2:
            del values[rng.choice(OPTIONS[1:])]
        jobs.append(Job(f"j{i}", rng.choice((1, 2, 4, 8, 16, 32)), values))
    pool = Pool(rng.randint(0, max_pool), OPTIONS)
    floor = None if rng.random() < 0.5 else floor_values(jobs, pool, rng.choice((0.5, 0.9, 1.0)))
    return jobs, pool, floor


def large_instance(rng: random.Random, jobs: int, pool: int) -> tuple[list[Job], Pool]:
    """jobs jobs with real values on every option: the size the solver's time is judged on."""
    return [
        Job(f"j{i}", rng.choice((8, 16, 32)), {k: rng.uniform(1, 1000) for k in OPTIONS})
        for i in range(jobs)
    ], Pool(pool, OPTIONS)
