"""The live pool: a controller process that owns running shared iorelayd daemons (one per I/O
node, started with an admin credential), takes jobs' joins, renewals and departures on a Unix
socket, runs the policy core (controller.step) on each, and carries out its admin actions on the
daemons (DaemonChannel). Each job's current daemons are in its map file (job_map), which the
controller rewrites before a release (the job's clients move away first) and after an admit
(the daemon knows the job before its clients come). A job that stops renewing is revoked once
its lease has run out. Every decision is one JSON line of DIR/decisions.jsonl."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iorelay import ionode
from iorelay.arbiter.problem import ArbiterError, Job
from iorelay.credential import create_credential
from iorelay.launch.local import DaemonGroup, LocalDaemons
from iorelay.launch.ssh import SshDaemons
from iorelay.pool import wire
from iorelay.pool.actions import Release, carry_out
from iorelay.pool.controller import step
from iorelay.pool.daemon_channel import DaemonChannel, JobAccess
from iorelay.pool.events import Arrival, Departure, Event, Expiry, Measured, Tick
from iorelay.pool.job_map import write_map
from iorelay.pool.state import PoolState, Settings

_JOB_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_POLL_S = 0.1
RECENT_DECISIONS = 20


@dataclass
class Member:
    """A job in the pool as the controller tracks it besides the policy state."""

    access: JobAccess
    map_file: Path
    renewed_s: float  # controller time of its join or last renewal
    active: tuple[int, ...] = ()
    locks: int | None = None  # its lock daemon: its first I/O node, kept while it holds any


@dataclass(frozen=True)
class Remote:
    """A pool whose daemons run on other hosts, started over ssh (IORELAY_SSH in environ): the
    admin credential's path must be readable there (the daemon reads it at start), export_dir
    is each daemon's export (a path every I/O node sees), map_dir where the jobs' maps go (a
    path every compute host sees, e.g. the shared file system)."""

    hosts: tuple[str, ...]
    export_dir: Path
    map_dir: Path
    scheduler: str = "aioli"
    environ: dict[str, str] | None = None


class LivePool:
    """LivePool(workdir, ionodes, settings).serve() runs until a stop request or SIGTERM."""

    def __init__(
        self,
        workdir: Path,
        ionodes: int,
        settings: Settings,
        transport: str = "unix",
        remote: Remote | None = None,
    ) -> None:
        self.workdir = workdir.resolve()
        self.workdir.mkdir(parents=True, exist_ok=True)
        # The maps are read by the jobs' processes: on other hosts, from a directory they share.
        self.map_dir = self.workdir / "jobs" if remote is None else remote.map_dir
        self.map_dir.mkdir(parents=True, exist_ok=True)
        export = self.workdir / "export" if remote is None else remote.export_dir
        export.mkdir(parents=True, exist_ok=True)
        self.admin = create_credential(self.workdir / "admin.key")
        # A shrinking job's files whose offset the daemon keeps stay until closed (its release
        # serves them, within the daemon's release timeout).
        admin_args = ["--admin-credential", str(self.admin), "--release-keeps-offset-files"]
        self.daemons: DaemonGroup
        if remote is None:
            self.daemons = LocalDaemons(ionodes, export, str(export), self.workdir / "daemons",
                                        extra_args=admin_args)  # fmt: skip
            self.hosts = tuple(f"io{i}" for i in range(ionodes))
        else:
            self.daemons = SshDaemons(
                remote.hosts, export, str(export), self.workdir / "daemons", remote.scheduler,
                admin_args, environ=remote.environ,
            )  # fmt: skip
            self.hosts = tuple(remote.hosts)
            transport = "tcp"
        self.transport = transport
        self.settings = settings
        self.members: dict[str, Member] = {}
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT_DECISIONS)
        self.epoch = 0
        self._releasing: list[threading.Thread] = []  # shrinking jobs' releases under way
        self._late: list[str] = []
        self._late_mu = threading.Lock()
        self.t0 = time.monotonic()
        self.stopping = False

    def now(self) -> float:
        return time.monotonic() - self.t0

    # -- events --------------------------------------------------------------------------------

    def apply(self, event: Event) -> dict[str, Any]:
        """One step of the policy core, carried out on the daemons; the decision record."""
        before = {r.job.name: r.hosts for r in self.state.running}
        s = step(self.state, event)
        after = {r.job.name: r.hosts for r in s.state.running}
        # Jobs that lose hosts see their new map before the release drains them.
        for name, hosts in after.items():
            if set(hosts) < set(before.get(name, ())):
                self._write_map(name, hosts)
        errors = self._late_errors()
        for action in s.actions:  # each in the plan's order; one failing stops none of the rest
            if isinstance(action, Release) and action.job in after:
                self._release_in_background(action)  # a running job gives a host back
                continue
            try:
                carry_out([action], self.channel)
            except ionode.IonodeError as e:
                errors.append(f"{type(action).__name__.lower()} {action.job}: {e}")
        self.state = s.state
        for name, hosts in after.items():
            if hosts != before.get(name):
                self._write_map(name, hosts)
        if isinstance(event, Departure | Expiry):
            gone = self.members.pop(event.name, None)
            self.channel.forget(event.name)
            if gone is not None:
                gone.map_file.unlink(missing_ok=True)
        record = {**s.record, "wall_time": time.time()}
        if errors:
            record["error"] = "; ".join(errors)
        with open(self.workdir / "decisions.jsonl", "a") as log:
            log.write(json.dumps(record) + "\n")
        if s.actions or not isinstance(event, Tick):
            self.recent.append(record)
        return record

    def _release_in_background(self, action: Release) -> None:
        """A shrinking job's release waits, on its daemon, for the job's files whose offset
        the daemon keeps (O_APPEND, shared after fork) to close, up to the daemon's release
        timeout: the controller does not wait with it. Its failure goes in the next record."""

        def release() -> None:
            try:
                self.channel.release(action.host, action.job)
            except ionode.IonodeError as e:
                with self._late_mu:
                    self._late.append(f"release {action.job} on {action.host}: {e}")

        t = threading.Thread(target=release, name=f"release-{action.job}", daemon=True)
        t.start()
        self._releasing = [r for r in self._releasing if r.is_alive()] + [t]

    def _late_errors(self) -> list[str]:
        with self._late_mu:
            out, self._late = self._late, []
        return out

    def _write_map(self, name: str, hosts: tuple[str, ...]) -> None:
        member = self.members.get(name)
        if member is None:
            return
        active = tuple(sorted(self.hosts.index(h) for h in hosts))
        if active == member.active and member.map_file.exists():
            return
        if hosts and member.locks not in active:  # its first hosts, or (after none) new ones
            member.locks = self.hosts.index(hosts[0])
        self.epoch += 1
        write_map(member.map_file, self.epoch, active, member.locks if hosts else None)
        member.active = active

    def expire(self) -> None:
        """Jobs whose lease ran out without a renewal: revoked (presumed dead)."""
        now = self.now()
        for name, m in list(self.members.items()):
            if now - m.renewed_s > self.settings.lease_s:
                self.apply(Expiry(now, name))

    def tick(self) -> None:
        """Re-decides when a job held back by hysteresis is free to move."""
        now, last = self.now(), self.state.time_s
        interval = self.settings.min_interval_s
        if any(last - r.mapped_s < interval <= now - r.mapped_s for r in self.state.running):
            self.apply(Tick(now))  # a job held at the last step is free to move now

    # -- requests ------------------------------------------------------------------------------

    def handle(self, msg: dict[str, Any]) -> dict[str, Any]:
        op = msg["op"]
        if op == "join":
            return self.join(msg)
        if op == "status":
            return self.status()
        if op == "stop":
            self.stopping = True
            return {"stopping": True}
        name = str(msg.get("job", ""))
        if name not in self.members:
            raise ArbiterError(f"no job {name!r} in the pool")
        if op == "renew":
            self.members[name].renewed_s = self.now()
            holding = self.state.holding(name)
            errors = []
            for h in holding.hosts if holding else ():
                try:
                    self.channel.renew(h, name, self.settings.lease_s)
                except ionode.IonodeError as e:  # that daemon's lease runs on; the others renew
                    errors.append(f"{h}: {e}")
            return {"renewed": True, "errors": errors}
        if op == "measured":
            return self.measured(name, msg)
        if op == "leave":
            return {"left": True, "record": self.apply(Departure(self.now(), name))}
        if op == "revoke":
            return {"revoked": True, "record": self.apply(Expiry(self.now(), name))}
        raise ArbiterError(f"unknown op {op!r}: join, renew, measured, leave, revoke, status, stop")

    def join(self, msg: dict[str, Any]) -> dict[str, Any]:
        name = str(msg["job"])
        if not _JOB_NAME.fullmatch(name):
            raise ArbiterError(f"job names are 1-64 of [A-Za-z0-9_.-], not {name!r}")
        values = {int(k): float(v) for k, v in msg["values"].items()}
        job = Job(name, int(msg.get("compute_nodes", 1)), values)
        access = JobAccess(Path(msg["secret_file"]), tuple(msg["roots"]))
        if name in self.members:
            raise ArbiterError(f"job {name} is already in the pool")
        self.members[name] = Member(access, self.map_dir / f"{name}.map", self.now())
        self.channel.register(name, access)
        try:
            record = self.apply(Arrival(self.now(), job))
        except ArbiterError:
            self.members.pop(name, None)
            self.channel.forget(name)
            raise
        if "error" in record:  # a daemon refused it (its credential or roots): it leaves again
            self.apply(Departure(self.now(), name))
            raise ArbiterError(f"job {name} not admitted: {record['error']}")
        hosts = self.state.holding(name).hosts
        return {
            "job": name,
            "hosts": list(hosts),
            "servers": self.addresses,
            "active": [self.hosts.index(h) for h in hosts],
            "map_file": str(self.members[name].map_file),
            "lease_s": self.settings.lease_s,
            "record": record,
        }

    def measured(self, name: str, msg: dict[str, Any]) -> dict[str, Any]:
        """The job's bandwidth (mib_s) measured at the I/O nodes it holds now: the policy's value
        for that option becomes a measurement, and the arbiter re-decides (anchored: the job may
        now leave its static allocation for options valued at least as much). A report naming
        another number of I/O nodes (ionodes) than the job holds is of an older mapping: not
        applied."""
        holding = self.state.holding(name)
        k = len(holding.hosts) if holding is not None else 0
        if "ionodes" in msg and int(msg["ionodes"]) != k:
            return {"applied": False, "ionodes": k}
        record = self.apply(Measured(self.now(), name, k, float(msg["mib_s"])))
        return {"applied": True, "ionodes": k, "record": record}

    def status(self) -> dict[str, Any]:
        now = self.now()
        jobs = []
        for r in self.state.running:
            m = self.members.get(r.job.name)
            jobs.append({
                "name": r.job.name,
                "hosts": list(r.hosts),
                "mapped_s_ago": None if r.mapped_s == float("-inf") else now - r.mapped_s,
                "lease_left_s": None if m is None else self.settings.lease_s - (now - m.renewed_s),
            })  # fmt: skip
        held = {h for r in self.state.running for h in r.hosts}
        return {
            "hosts": {h: a for h, a in zip(self.hosts, self.addresses, strict=True)},
            "free": [h for h in self.hosts if h not in held],
            "jobs": jobs,
            "decisions": list(self.recent),
            "settings": self.settings.__dict__ | {"options": list(self.settings.options)},
        }

    # -- the process ---------------------------------------------------------------------------

    def serve(self) -> None:
        sock_path = self.workdir / wire.SOCKET_NAME
        with self.daemons, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as srv:
            self.addresses = self.daemons.addresses(self.transport)
            self.channel = DaemonChannel(dict(zip(self.hosts, self.addresses, strict=True)),
                                         self.admin)  # fmt: skip
            self.state = PoolState(self.hosts, self.settings)
            sock_path.unlink(missing_ok=True)
            srv.bind(str(sock_path))
            os.chmod(sock_path, 0o600)  # the pool is its user's (docs/security.md)
            srv.listen(16)
            srv.settimeout(_POLL_S)
            hosts = ", ".join(f"{h} {a}" for h, a in self.channel.hosts.items())
            print(
                f"iorelay pool: {sock_path} ready; I/O nodes {hosts}", file=sys.stderr, flush=True
            )
            try:
                while not self.stopping:
                    self.expire()
                    self.tick()
                    try:
                        conn, _ = srv.accept()
                    except TimeoutError:
                        continue
                    with conn:
                        self._serve_one(conn)
            finally:
                for t in self._releasing:  # before the daemons stop
                    t.join(timeout=ionode.RELEASE_TIMEOUT_S)
                with contextlib.suppress(OSError):
                    sock_path.unlink()

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            msg = wire.read_request(conn)
            reply = self.handle(msg)
        except (ArbiterError, ValueError, KeyError, TypeError, ionode.IonodeError) as e:
            reply = {"error": f"{type(e).__name__}: {e}"}
        with contextlib.suppress(OSError):
            wire.send_reply(conn, reply)
