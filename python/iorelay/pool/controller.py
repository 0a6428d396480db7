"""One step of the pool controller: an event changes the running jobs, the arbiter re-decides
every job's number of I/O nodes (jobs re-mapped less than the hysteresis interval ago keep
theirs), and the hosts follow with as few moves as possible. Pure: the new state, the admin
actions in the order they must happen, and the decision record (one JSON line of the log)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from iorelay.arbiter import baselines, guard, knapsack
from iorelay.arbiter.decision import decided
from iorelay.arbiter.policies import anchored_permitted, floor_values
from iorelay.arbiter.problem import ArbiterError, Job, Pool, check_jobs, choices
from iorelay.pool.actions import Action, Admit, Release, Revoke, RunDirect, record
from iorelay.pool.events import Arrival, Departure, Event, Expiry, Measured, Tick
from iorelay.pool.state import POLICIES, Holding, PoolState, Settings


@dataclass(frozen=True)
class Step:
    state: PoolState
    actions: tuple[Action, ...]
    record: dict[str, Any]


def limits(
    jobs: list[Job], current: list[int], held: list[bool], pool: Pool, settings: Settings
) -> tuple[list[float] | None, list[set[int]]]:
    """The knapsack's constraints: the fairness floor as minimum values and the options each
    job may take (under the guard, its static allocation and the gains it believes); a held
    job may take only what it has, whatever the floor or the guard say; with keep_forwarded, a
    job holding I/O nodes may not go to 0."""
    if settings.policy not in POLICIES:
        raise ArbiterError(f"unknown pool policy {settings.policy}; known: {', '.join(POLICIES)}")
    if settings.policy == "guarded":
        permitted = [set(p) for p in guard.permitted(jobs, pool)]
    elif settings.policy == "anchored":
        permitted = anchored_permitted(jobs, pool)
    elif settings.policy == "static":
        permitted = [{k} for k in baselines.static(jobs, pool)]
    else:
        permitted = [set(choices(j, pool)) for j in jobs]
    minimum = None
    if settings.floor_share is not None:
        minimum = floor_values(jobs, pool, settings.floor_share)
    for i, k in enumerate(current):
        if held[i]:
            permitted[i] = {k}
            if minimum is not None:
                minimum[i] = -math.inf
        elif settings.keep_forwarded and k > 0:
            permitted[i] = (permitted[i] - {0}) | {k}  # what it holds stays possible
    return minimum, permitted


def after_event(state: PoolState, event: Event) -> tuple[list[Holding], list[Action]]:
    """The running jobs once the event is applied, and the actions it needs by itself. A
    departure or expiry of a job not running (already gone) changes nothing."""
    running = list(state.running)
    if isinstance(event, Arrival):
        if state.holding(event.job.name) is not None:
            raise ArbiterError(f"job {event.job.name} is already in the pool")
        check_jobs([event.job], state.pool)
        return [*running, Holding(event.job, (), -math.inf)], []
    if isinstance(event, Departure | Expiry):
        gone = state.holding(event.name)
        if gone is None:
            return running, []
        kind = Release if isinstance(event, Departure) else Revoke
        return [r for r in running if r is not gone], [kind(event.name, h) for h in gone.hosts]
    if isinstance(event, Measured):
        r = state.holding(event.name)
        if r is None or len(r.hosts) != event.ionodes or r.mapped_s == -math.inf:
            return running, []  # gone, or moved since: the report is of another option
        if not (event.mib_s >= 0 and math.isfinite(event.mib_s)):
            raise ArbiterError(f"a measured bandwidth is finite and >= 0: {event.mib_s}")
        job = replace(
            r.job,
            values={**r.job.values, event.ionodes: event.mib_s},
            measured=r.job.measured | {event.ionodes},
        )
        return [replace(x, job=job) if x is r else x for x in running], []
    if isinstance(event, Tick):
        return running, []
    raise TypeError(f"not a pool event: {event!r}")


def step(state: PoolState, event: Event) -> Step:
    """Applies event at event.time_s and re-decides (see the module)."""
    now = event.time_s
    if now < state.time_s:
        raise ArbiterError(f"events go forward in time: {now} < {state.time_s}")
    settings, pool = state.settings, state.pool
    running, actions = after_event(state, event)
    jobs = [r.job for r in running]
    current = [len(r.hosts) for r in running]
    held = [now - r.mapped_s < settings.min_interval_s for r in running]
    minimum, permitted = limits(jobs, current, held, pool, settings)
    # The floor is static's share of a pool the held jobs may occupy: when the two cannot both
    # hold, the hysteresis wins and the step says the floor was relaxed.
    try:
        sizes, relaxed = knapsack.solve(jobs, pool, minimum, permitted), False
    except ArbiterError:
        if minimum is None:
            raise
        sizes, relaxed = knapsack.solve(jobs, pool, None, permitted), True
    free = [h for h in state.hosts if h not in {h for r in running for h in r.hosts}]
    kept: list[tuple[str, ...]] = []
    for r, k in zip(running, sizes, strict=True):  # shrinks first: their hosts become free
        kept.append(r.hosts[:k])
        actions += [Release(r.job.name, h) for h in r.hosts[k:]]
        free += list(r.hosts[k:])
    free.sort(key=state.hosts.index)
    after = []
    for r, k, hosts in zip(running, sizes, kept, strict=True):
        grown = tuple(free[: k - len(hosts)])
        del free[: len(grown)]
        actions += [Admit(r.job.name, h, settings.lease_s) for h in grown]
        if k == 0 and (r.hosts or r.mapped_s == -math.inf):
            actions.append(RunDirect(r.job.name))
        moved = k != len(r.hosts) or r.mapped_s == -math.inf
        after.append(Holding(r.job, hosts + grown, now if moved else r.mapped_s))
    name = settings.policy if settings.floor_share is None else f"{settings.policy}-floor"
    decision = decided(name, pool, jobs, sizes, settings.floor_share)
    log = decision.record(
        time_s=now,
        event=type(event).__name__.lower(),
        held=[r.job.name for r, h in zip(running, held, strict=True) if h],
        floor_relaxed=relaxed,
        hosts={r.job.name: list(r.hosts) for r in after},
        actions=[record(a) for a in actions],
    )
    return Step(state.with_running(tuple(after), now), tuple(actions), log)
