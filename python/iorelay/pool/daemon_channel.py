"""actions.AdminChannel over running shared daemons: each host of the pool is one iorelayd
started with an admin credential, and each call is the daemon's admin op (iorelay.ionode, which
runs iorelay-ctl). An admission needs the job's credential and roots, registered when it joins."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iorelay import ionode


@dataclass(frozen=True)
class JobAccess:
    """What a daemon admits a job with: its credential file and roots (PREFIX=DIR)."""

    secret_file: Path
    roots: tuple[str, ...]


class DaemonChannel:
    """hosts: host name -> daemon address (tcp:... or unix:...)."""

    def __init__(self, hosts: Mapping[str, str], admin_secret_file: str | os.PathLike[str]) -> None:
        self.hosts = dict(hosts)
        self.admin = Path(admin_secret_file)
        self.access: dict[str, JobAccess] = {}

    def register(self, job: str, access: JobAccess) -> None:
        self.access[job] = access

    def forget(self, job: str) -> None:
        self.access.pop(job, None)

    def admit(self, host: str, job: str, lease_s: float) -> None:
        a = self.access[job]
        ionode.admit(
            self.hosts[host], job, a.secret_file, a.roots, lease_s=lease_s,
            admin_secret_file=self.admin,
        )  # fmt: skip

    def release(self, host: str, job: str) -> None:
        try:
            ionode.release(self.hosts[host], job, admin_secret_file=self.admin)
        except ionode.IonodeError as e:
            if "no job" not in str(e):  # its lease ran out on the daemon first: gone already
                raise

    def revoke(self, host: str, job: str) -> None:
        try:
            ionode.revoke(self.hosts[host], job, admin_secret_file=self.admin)
        except ionode.IonodeError as e:
            if "no job" not in str(e):
                raise

    def renew(self, host: str, job: str, lease_s: float) -> None:
        ionode.renew(self.hosts[host], job, lease_s, admin_secret_file=self.admin)

    def jobs(self, host: str) -> Sequence[Mapping[str, Any]]:
        return ionode.jobs(self.hosts[host], admin_secret_file=self.admin)
