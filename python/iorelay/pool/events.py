"""What the pool controller reacts to: a job arriving, a job leaving, a lease that expired
without renewal (a job presumed dead), a job's bandwidth measured where it runs, and the clock
(re-maps held back by hysteresis)."""

from __future__ import annotations

from dataclasses import dataclass

from iorelay.arbiter.problem import Job


@dataclass(frozen=True)
class Arrival:
    """job joins; its values are its predicted bandwidth per option (arbiter.problem.Job)."""

    time_s: float
    job: Job


@dataclass(frozen=True)
class Departure:
    """The job called name left at its end: its I/O nodes are released (drained, then removed)."""

    time_s: float
    name: str


@dataclass(frozen=True)
class Expiry:
    """The job called name did not renew its lease: its I/O nodes revoke it."""

    time_s: float
    name: str


@dataclass(frozen=True)
class Measured:
    """The job called name moved mib_s while it held ionodes I/O nodes: that option's value is
    now a measurement (arbiter.problem.Job.measured; the anchored policy needs it). A report for
    another number of I/O nodes than the job holds (it moved since) changes nothing."""

    time_s: float
    name: str
    ionodes: int
    mib_s: float


@dataclass(frozen=True)
class Tick:
    """Time passes: re-maps held back by the hysteresis interval may now happen."""

    time_s: float


Event = Arrival | Departure | Expiry | Measured | Tick
