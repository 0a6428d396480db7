"""What the arbiter decides over: jobs with a value (bandwidth, MiB/s) per allowed number of
I/O nodes, and a pool with a size and its allowed options. Shared by every policy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


class ArbiterError(ValueError):
    """An instance the arbiter cannot decide: no options, a job with no allowed option, ..."""


@dataclass(frozen=True)
class Job:
    """A job as the arbiter sees it: a name, its compute nodes (static allocation's weight) and
    its value (predicted or true bandwidth, MiB/s) for each number of I/O nodes it may get."""

    name: str
    compute_nodes: int
    values: Mapping[int, float] = field(hash=False)
    # The guard's error band (arbiter/guard.py): margins_log[(k, s)] is how much the predicted
    # log gain of option k over option s must exceed before the guard believes it. Empty when
    # the values carry no measured error band.
    margins_log: Mapping[tuple[int, int], float] = field(default_factory=dict, hash=False)
    # The options whose value was measured while the job ran there (the rest are predicted).
    measured: frozenset[int] = frozenset()

    def record(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name,
            "compute_nodes": self.compute_nodes,
            "values": {str(k): v for k, v in sorted(self.values.items())},
        }
        if self.measured:
            out["measured"] = sorted(self.measured)
        if self.margins_log:
            out["margins_log"] = {f"{k}/{s}": m for (k, s), m in sorted(self.margins_log.items())}
        return out


@dataclass(frozen=True)
class Pool:
    """The I/O nodes to share and the sizes a job may get. 0 (direct) is always allowed: a job
    the pool cannot serve runs direct."""

    ionodes: int
    options: tuple[int, ...] = (0, 1, 2, 4, 8)

    def __post_init__(self) -> None:
        if self.ionodes < 0:
            raise ArbiterError(f"a pool has no negative size: {self.ionodes}")
        if 0 not in self.options or any(k < 0 for k in self.options):
            raise ArbiterError(f"options must include 0 and be non-negative: {self.options}")
        if list(self.options) != sorted(set(self.options)):
            raise ArbiterError(f"options must be ascending and distinct: {self.options}")


def choices(job: Job, pool: Pool) -> list[int]:
    """The options job may take in pool, ascending: allowed, valued for the job, within the pool."""
    return [k for k in pool.options if k <= pool.ionodes and k in job.values]


def check_jobs(jobs: Sequence[Job], pool: Pool) -> None:
    for job in jobs:
        if 0 not in job.values:
            raise ArbiterError(f"job {job.name} has no value for 0 I/O nodes (direct)")
        if job.compute_nodes <= 0:
            raise ArbiterError(f"job {job.name} has {job.compute_nodes} compute nodes")
