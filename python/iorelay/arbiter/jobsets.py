"""Job sets of the table-driven evaluation: Poisson arrivals of jobs whose patterns are drawn
from the measured ones, each with a size in bytes, its true bandwidths (the pattern's measured
medians) and its predicted ones. Seeded, so every policy replays the same jobs."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from iorelay.arbiter.patterns import Pattern
from iorelay.arbiter.problem import Job


@dataclass(frozen=True)
class JobSetShape:
    """How job sets are drawn. A job's size is what its pattern moves direct (measured median,
    0 I/O nodes) in a duration drawn uniformly from [min_direct_s, max_direct_s]: every job is
    'a job of that many seconds if it ran direct'; how long it really runs follows from the
    bandwidths it gets. Arrivals are Poisson with mean_interarrival_s; the defaults keep about
    eight jobs running at once when all run direct (mean 180 s / 22.5 s)."""

    jobs: int = 16
    mean_interarrival_s: float = 22.5
    min_direct_s: float = 60.0
    max_direct_s: float = 300.0


DEFAULT_SHAPE = JobSetShape()


@dataclass(frozen=True)
class JobSpec:
    """One job of a set: when it arrives, how much it moves, and its Job as each feed of the
    arbiter sees it (true: the measured medians; predicted: the predictor's values)."""

    index: int
    pattern: str
    arrival_s: float
    size_mib: float
    true: Job
    predicted: Job

    @property
    def true_mib_s(self) -> Mapping[int, float]:
        return self.true.values


@dataclass(frozen=True)
class JobSet:
    seed: int
    jobs: tuple[JobSpec, ...] = field(repr=False)


def draw_job_set(
    seed: int,
    patterns: Sequence[Pattern],
    predicted: Mapping[str, Mapping[int, float]],
    shape: JobSetShape = DEFAULT_SHAPE,
) -> JobSet:
    """shape.jobs jobs from random.Random(seed): patterns uniformly with replacement."""
    rng = random.Random(seed)
    t, jobs = 0.0, []
    for i in range(shape.jobs):
        if i:
            t += rng.expovariate(1.0 / shape.mean_interarrival_s)
        p = patterns[rng.randrange(len(patterns))]
        direct_s = rng.uniform(shape.min_direct_s, shape.max_direct_s)
        name, nodes = f"j{i}", p.features.nodes
        jobs.append(
            JobSpec(
                index=i,
                pattern=p.label,
                arrival_s=t,
                size_mib=p.bandwidth_mib_s[0] * direct_s,
                true=Job(name, nodes, dict(p.bandwidth_mib_s)),
                predicted=Job(name, nodes, dict(predicted[p.label])),
            )
        )
    return JobSet(seed, tuple(jobs))
