"""What the pool controller knows between events: its I/O-node hosts, its settings, and every
running job with the hosts it holds and when it was last re-mapped. (Leases are the daemons':
they expire a job that stops renewing, and the controller hears of it as an Expiry.)"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from iorelay.arbiter.problem import Job, Pool

# static: the baseline (I/O nodes proportional to compute nodes, arbiter.baselines.static) run
# by the live pool itself, so that it is measured the way the knapsack is. anchored: the
# knapsack anchored at static by the bandwidths the jobs report (Measured events).
POLICIES = ("knapsack", "guarded", "anchored", "static")


@dataclass(frozen=True)
class Settings:
    """policy: "knapsack", "guarded", "anchored" (arbiter.policies) or "static" (the baseline;
    POLICIES); floor_share: the fairness floor (None: none); min_interval_s: a
    running job is re-mapped at most once per this interval (hysteresis; its arrival counts as
    a mapping); lease_s: the lease an admission grants; keep_forwarded: a running job that
    holds I/O nodes keeps at least one (the live pool: its clients cannot go direct in the
    middle of a run)."""

    options: tuple[int, ...] = (0, 1, 2, 4, 8)
    policy: str = "knapsack"
    floor_share: float | None = None
    min_interval_s: float = 60.0
    lease_s: float = 30.0
    keep_forwarded: bool = False


@dataclass(frozen=True)
class Holding:
    """A running job: its Job, the hosts it holds (empty: it runs direct) and the time of its
    last mapping."""

    job: Job
    hosts: tuple[str, ...]
    mapped_s: float


@dataclass(frozen=True)
class PoolState:
    """hosts: the pool's I/O nodes, in the order free ones are handed out. running: the jobs in
    arrival order (the arbiter's tie rule favours earlier jobs in that order)."""

    hosts: tuple[str, ...]
    settings: Settings = Settings()
    running: tuple[Holding, ...] = field(default=())
    time_s: float = 0.0

    @property
    def pool(self) -> Pool:
        return Pool(len(self.hosts), self.settings.options)

    def free_hosts(self) -> list[str]:
        held = {h for r in self.running for h in r.hosts}
        return [h for h in self.hosts if h not in held]

    def holding(self, name: str) -> Holding | None:
        return next((r for r in self.running if r.job.name == name), None)

    def with_running(self, running: tuple[Holding, ...], time_s: float) -> PoolState:
        return replace(self, running=running, time_s=time_s)
