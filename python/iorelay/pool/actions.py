"""The admin actions the controller plans, and the interface a live pool carries them out
through (the shared daemons' admin channel: `iorelay ionode admit|release|revoke|renew|jobs
--json`). A planned move releases (drains the job's requests in flight, then removes it), never
revokes; revoke is for jobs whose lease expired."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Admit:
    """Admit job on host with a lease of lease_s seconds."""

    job: str
    host: str
    lease_s: float


@dataclass(frozen=True)
class Release:
    """Drain job's requests on host, then remove it (a planned move or the job's end)."""

    job: str
    host: str


@dataclass(frozen=True)
class Revoke:
    """Remove job from host at once (its lease expired: the job is presumed dead)."""

    job: str
    host: str


@dataclass(frozen=True)
class RunDirect:
    """job holds no I/O node now: it runs direct (the pool is exhausted or direct is its best),
    and its files opened from now on stay direct for their lifetime."""

    job: str


Action = Admit | Release | Revoke | RunDirect


class AdminChannel(Protocol):
    """The shared daemons' admin operations, one call per host. Implemented over the daemons'
    admin channel by the live pool; the controller itself never calls it."""

    def admit(self, host: str, job: str, lease_s: float) -> None: ...

    def release(self, host: str, job: str) -> None: ...

    def revoke(self, host: str, job: str) -> None: ...

    def renew(self, host: str, job: str, lease_s: float) -> None: ...

    def jobs(self, host: str) -> Sequence[Mapping[str, Any]]: ...


def carry_out(actions: Iterable[Action], channel: AdminChannel) -> None:
    """Calls channel for each action, in the plan's order (revokes and releases come before
    the admits that reuse their hosts). RunDirect needs no daemon."""
    for a in actions:
        if isinstance(a, Admit):
            channel.admit(a.host, a.job, a.lease_s)
        elif isinstance(a, Release):
            channel.release(a.host, a.job)
        elif isinstance(a, Revoke):
            channel.revoke(a.host, a.job)


def record(action: Action) -> dict[str, Any]:
    """The action as plain data for the decision log."""
    return {"action": type(action).__name__.lower(), **action.__dict__}
