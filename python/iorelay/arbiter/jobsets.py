"""Job sets of the table-driven evaluation: Poisson arrivals of jobs whose patterns are drawn
from the measured ones, each with a size in bytes, its true bandwidths (the pattern's measured
medians) and, per predictor, its predicted ones with their error band. Seeded, so every policy
replays the same jobs."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from iorelay.arbiter.patterns import Pattern
from iorelay.arbiter.problem import Job

TRUE = "true"


@dataclass(frozen=True)
class View:
    """What one predictor says of every pattern (by label): MiB/s per option, and the guard's
    margins (arbiter/guard.py; empty: none)."""

    values: Mapping[str, Mapping[int, float]]
    margins_log: Mapping[str, Mapping[tuple[int, int], float]] = field(default_factory=dict)


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
    arbiter sees it: true (the measured medians), or by name a predictor's values."""

    index: int
    pattern: str
    arrival_s: float
    size_mib: float
    true: Job
    estimates: Mapping[str, Job] = field(default_factory=dict, hash=False)

    @property
    def true_mib_s(self) -> Mapping[int, float]:
        return self.true.values

    def view(self, name: str) -> Job:
        """The Job as the feed called name sees it (TRUE: the measured values)."""
        return self.true if name == TRUE else self.estimates[name]


@dataclass(frozen=True)
class JobSet:
    seed: int
    jobs: tuple[JobSpec, ...] = field(repr=False)


def draw_job_set(
    seed: int,
    patterns: Sequence[Pattern],
    views: Mapping[str, View],
    shape: JobSetShape = DEFAULT_SHAPE,
    true_margins: Mapping[str, Mapping[tuple[int, int], float]] | None = None,
) -> JobSet:
    """shape.jobs jobs from random.Random(seed): patterns uniformly with replacement. Each job
    is seen by every view; true_margins, when given, is the true Job's error band (zero: the
    guard on exact values)."""
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
                true=Job(
                    name,
                    nodes,
                    dict(p.bandwidth_mib_s),
                    dict((true_margins or {}).get(p.label, {})),
                ),
                estimates={
                    v: Job(
                        name,
                        nodes,
                        dict(view.values[p.label]),
                        dict(view.margins_log.get(p.label, {})),
                    )
                    for v, view in views.items()
                },
            )
        )
    return JobSet(seed, tuple(jobs))
