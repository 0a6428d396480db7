"""One decision of a policy with everything it was decided from, as a JSON-serialisable record
(one line of the arbiter's JSON-lines log), so any decision can be checked or replayed later."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iorelay.arbiter.problem import Job, Pool


@dataclass(frozen=True)
class Decision:
    """policy's answer for jobs on pool: ionodes[i] I/O nodes for jobs[i] (a whole option, or
    for the shared policy the equal share of the whole pool each job is modelled to see) and
    values[i] the value the policy saw for that choice. floor_share: the fairness floor it
    honoured (None: none)."""

    policy: str
    pool: Pool
    jobs: tuple[Job, ...]
    ionodes: tuple[float, ...]
    values: tuple[float, ...]
    floor_share: float | None = None
    shared: bool = False

    @property
    def total_value(self) -> float:
        return sum(reversed(self.values))

    @property
    def total_ionodes(self) -> float:
        return self.pool.ionodes if self.shared else sum(self.ionodes)

    def record(self, **context: Any) -> dict[str, Any]:
        """The decision as plain data (json.dumps-able); context (time, event, ...) first."""
        return {
            **context,
            "policy": self.policy,
            "pool_ionodes": self.pool.ionodes,
            "options": list(self.pool.options),
            "floor_share": self.floor_share,
            "shared": self.shared,
            "jobs": [j.record() for j in self.jobs],
            "ionodes": [_plain(k) for k in self.ionodes],
            "values": list(self.values),
            "total_value": self.total_value,
            "total_ionodes": _plain(self.total_ionodes),
        }


def _plain(x: float) -> float | int:
    return int(x) if float(x).is_integer() else float(x)


def decided(
    policy: str,
    pool: Pool,
    jobs: Sequence[Job],
    sizes: Sequence[int],
    floor_share: float | None = None,
) -> Decision:
    """The Decision giving jobs[i] the whole option sizes[i], valued from the jobs' own values."""
    return Decision(
        policy=policy,
        pool=pool,
        jobs=tuple(jobs),
        ionodes=tuple(sizes),
        values=tuple(float(j.values[k]) for j, k in zip(jobs, sizes, strict=True)),
        floor_share=floor_share,
    )
