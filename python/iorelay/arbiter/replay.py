"""One job set under one policy, event by event: the arbiter re-decides at every arrival and
departure, and between events every running job moves data at the true (measured) bandwidth of
what it was given. A job's bandwidth over its run is thus the time-weighted mean of its
options' table bandwidths; its duration follows from its size. Pure: no clock, no threads."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from iorelay.arbiter import baselines
from iorelay.arbiter.decision import Decision
from iorelay.arbiter.jobsets import TRUE, JobSet
from iorelay.arbiter.policies import Policy
from iorelay.arbiter.problem import ArbiterError, Job, Pool

# A job whose remaining MiB fall below this share of its size has finished (rounding).
FINISHED_SHARE = 1e-9


@dataclass(frozen=True)
class Run:
    """What a replay measured. finish_s[i] is job i's departure. differs_from_static: some
    decision gave the running jobs another allocation than static would have. lowest_static_share:
    the smallest, over decisions and jobs, of (true value of what the job got) / (true value of
    its static allocation at that moment)."""

    arrival_s: tuple[float, ...]
    finish_s: tuple[float, ...]
    size_mib: tuple[float, ...]
    decisions: int
    differs_from_static: bool
    lowest_static_share: float

    @property
    def global_mib_s(self) -> float:
        """Total bytes / total time (first arrival to last departure)."""
        return sum(self.size_mib) / (max(self.finish_s) - min(self.arrival_s))

    def duration_s(self, i: int) -> float:
        return self.finish_s[i] - self.arrival_s[i]


def measured(job: Job, seen: Mapping[int, float]) -> Job:
    """job with the bandwidths measured while it ran (seen: option -> MiB/s) in place of its
    predicted ones: what a live pool knows once a job has moved data at an option (the daemons
    count its bytes)."""
    if not seen:
        return job
    return replace(job, values={**job.values, **seen}, measured=frozenset(seen))


def replay(
    jobset: JobSet,
    pool: Pool,
    decide: Policy,
    view: str = TRUE,
    on_decision: Callable[[Decision, float], None] | None = None,
    probe_s: float | None = None,
) -> Run:
    """Runs jobset on pool with decide fed the values of view (a predictor's, or the true
    ones); the jobs always move data at their true bandwidths. probe_s (None: never): once a
    job has run probe_s seconds at an option, its value there is the bandwidth it moved data at
    (measured, as a live pool counts a job's bytes), and the policy re-decides at that moment."""
    specs = jobset.jobs
    n = len(specs)
    remaining = [s.size_mib for s in specs]
    rate = [0.0] * n
    option: list[float] = [-1] * n  # what each running job has now (-1: not started)
    since = [0.0] * n  # when it got it
    seen: list[dict[int, float]] = [{} for _ in range(n)]  # measured MiB/s per option
    finish = [math.nan] * n
    running: list[int] = []
    arrived, decisions, differs, lowest = 0, 0, False, math.inf
    t = specs[0].arrival_s if n else 0.0
    while arrived < n or running:
        next_arrival = specs[arrived].arrival_s if arrived < n else math.inf
        next_departure, leaving = math.inf, -1
        for j in running:
            when = t + remaining[j] / rate[j]
            if when < next_departure:
                next_departure, leaving = when, j
        next_probe = math.inf
        if probe_s is not None:
            unseen = [j for j in running if option[j] not in seen[j]]
            next_probe = min((since[j] + probe_s for j in unseen), default=math.inf)
        now = min(next_arrival, next_departure, next_probe)
        for j in running:
            remaining[j] -= rate[j] * (now - t)
        t = now
        if probe_s is not None:
            for j in running:
                if option[j] not in seen[j] and t - since[j] >= probe_s * (1 - 1e-12):
                    seen[j][int(option[j])] = rate[j]
        if next_departure <= min(next_arrival, next_probe):
            remaining[leaving] = 0.0
            done = [j for j in running if remaining[j] <= FINISHED_SHARE * specs[j].size_mib]
            for j in done:
                finish[j] = t
            running = [j for j in running if j not in done]
        elif next_arrival <= next_probe:
            running.append(arrived)
            arrived += 1
        # else: a measurement came in; the policy re-decides with it
        if not running:
            continue
        jobs = [measured(specs[j].view(view), seen[j]) for j in running]
        decision = decide(jobs, pool)
        decisions += 1
        if on_decision is not None:
            on_decision(decision, t)
        fixed = baselines.static(jobs, pool)
        differs = differs or (decision.shared or decision.ionodes != fixed)
        for j, got, k in zip(running, decision.ionodes, fixed, strict=True):
            true = specs[j].true_mib_s
            rate[j] = baselines.bandwidth_at(true, got, decision.shared)
            if got != option[j]:
                option[j], since[j] = (got if not decision.shared else -2), t
            if not rate[j] > 0:
                raise ArbiterError(f"job {specs[j].true.name} would never finish: {rate[j]} MiB/s")
            lowest = min(lowest, rate[j] / float(true[k]))
    return Run(
        arrival_s=tuple(s.arrival_s for s in specs),
        finish_s=tuple(finish),
        size_mib=tuple(s.size_mib for s in specs),
        decisions=decisions,
        differs_from_static=differs,
        lowest_static_share=lowest,
    )
