"""`iorelay ionode`: admit, renew, release and revoke jobs on a shared I/O-node daemon, and list
them, through its admin channel (docs/security.md).

Each action runs `iorelay-ctl` with the daemon's admin credential; secrets are read from files,
never taken from the command line. The functions (admit, revoke, ...) are what the arbiter calls;
they raise IonodeError with the daemon's reason, and carry iorelay-ctl's exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iorelay import paths

TIMEOUT_S = 10.0
# A release waits for the job's requests to drain (the daemon gives up after 30 s).
RELEASE_TIMEOUT_S = 40.0
ADMIN_ENV = "IORELAY_ADMIN_SECRET_FILE"
# iorelay-ctl's exit statuses.
EXIT_FAILED, EXIT_USAGE, EXIT_REFUSED = 1, 2, 3


class IonodeError(RuntimeError):
    """An admin request failed: `status` is iorelay-ctl's exit status (1 failed or unreachable,
    2 usage, 3 refused: not the admin credential)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _admin_file(admin_secret_file: str | os.PathLike[str] | None) -> str:
    path = admin_secret_file or os.environ.get(ADMIN_ENV)
    if not path:
        raise IonodeError(f"no admin credential: give --admin-secret-file or set {ADMIN_ENV}", 2)
    return str(path)


def _ctl(
    args: Sequence[str],
    admin_secret_file: str | os.PathLike[str] | None,
    timeout_s: float = TIMEOUT_S,
) -> str:
    """Runs iorelay-ctl with the admin credential; its standard output, or IonodeError."""
    cmd = [
        str(paths.find("iorelay-ctl")),
        "--secret-file",
        _admin_file(admin_secret_file),
        "--timeout-ms",
        str(int(timeout_s * 1000)),
        *args,
    ]
    try:
        proc = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s + 5,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        raise IonodeError(f"{' '.join(args[:2])}: no answer within {timeout_s:g} s", 1) from e
    if proc.returncode != 0:
        raise IonodeError(proc.stderr.strip() or f"status {proc.returncode}", proc.returncode)
    return proc.stdout


def admit(
    address: str,
    job: str,
    secret_file: str | os.PathLike[str],
    roots: Sequence[str],
    *,
    weight: int = 1,
    lease_s: float = 0.0,
    max_open_files: int = 0,
    max_locks: int = 0,
    max_connections: int = 0,
    max_inflight_bytes: int = 0,
    admin_secret_file: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Admits `job` (its credential in secret_file, roots as PREFIX=DIR); returns {"job", "app"}."""
    args = ["admit", address, job, "--job-secret-file", str(secret_file)]
    for r in roots:
        args += ["--root", r]
    args += ["--weight", str(weight), "--lease", f"{lease_s:g}"]
    for name, value in (
        ("--max-open-files", max_open_files),
        ("--max-locks", max_locks),
        ("--max-connections", max_connections),
        ("--max-inflight-bytes", max_inflight_bytes),
    ):
        if value:
            args += [name, str(value)]
    return json.loads(_ctl(args, admin_secret_file))


def renew(
    address: str,
    job: str,
    lease_s: float = 0.0,
    *,
    admin_secret_file: str | os.PathLike[str] | None = None,
) -> None:
    """Restarts the job's lease: lease_s from now (0: its admitted length)."""
    _ctl(["renew", address, job, "--lease", f"{lease_s:g}"], admin_secret_file)


def revoke(
    address: str, job: str, *, admin_secret_file: str | os.PathLike[str] | None = None
) -> None:
    """Revokes the job at once: its connections close, its queued writes are dropped."""
    _ctl(["revoke", address, job], admin_secret_file)


def release(
    address: str, job: str, *, admin_secret_file: str | os.PathLike[str] | None = None
) -> None:
    """Removes the job once its requests in flight and queued writes have drained."""
    _ctl(["release", address, job], admin_secret_file, timeout_s=RELEASE_TIMEOUT_S)


def jobs(
    address: str, *, admin_secret_file: str | os.PathLike[str] | None = None
) -> list[dict[str, Any]]:
    """The daemon's admitted jobs (name, app, state, roots, weight, lease, shares, use)."""
    return json.loads(_ctl(["jobs", address], admin_secret_file))["jobs"]


def renew_own_lease(address: str, secret_file: str | os.PathLike[str]) -> float:
    """Renews the lease of the job whose credential is secret_file (its own connection, its
    admitted length); returns the lease's length in seconds. IonodeError when the job has no
    lease, is gone, or the daemon does not know the op."""
    out = _ctl(["renew", address], secret_file)
    return json.loads(out)["lease_ms"] / 1000.0


class LeaseKeeper:
    """The job's heartbeat while `iorelay run --attach` runs a command: renews the job's lease on
    each daemon at a third of its length. A daemon where the job has no lease (or that does not
    know leases) is left alone after the first answer; a refusal ends the renewals there (the
    job was revoked or released: its clients see their connections refused)."""

    def __init__(self, addresses: Sequence[str], secret_file: str | os.PathLike[str]) -> None:
        self._addresses = list(addresses)
        self._secret_file = secret_file
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def _keep(self, address: str) -> None:
        while not self._stop.is_set():
            try:
                lease_s = renew_own_lease(address, self._secret_file)
            except IonodeError:
                return
            self._stop.wait(min(30.0, max(0.1, lease_s / 3)))

    def __enter__(self) -> LeaseKeeper:
        for a in self._addresses:
            t = threading.Thread(target=self._keep, args=(a,), daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=TIMEOUT_S + 5)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ionode",
        help="admit, renew, release, revoke and list jobs on a shared I/O-node daemon",
        description="Manage the jobs of a running iorelayd through its admin channel "
        "(docs/security.md). Exit status: 0 ok, 1 failed or unreachable, 2 usage, "
        "3 refused (not the admin credential).",
    )
    p.add_argument(
        "--admin-secret-file",
        help=f"the daemon's admin credential (default: ${ADMIN_ENV})",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = actions.add_parser("admit", help="admit a job with its credential and roots")
    a.add_argument("address", help="daemon address: tcp:HOST:PORT or unix:PATH")
    a.add_argument("job", help="the job's name (e.g. $SLURM_JOB_ID)")
    a.add_argument("--secret-file", required=True, type=Path, help="the job's credential")
    a.add_argument(
        "--root", action="append", required=True, help="PREFIX=DIR (repeatable): its files"
    )
    a.add_argument("--weight", type=int, default=1, help="scheduler weight (1)")
    a.add_argument("--lease", type=float, default=0.0, help="seconds; 0: no lease (0)")
    for name in ("max-open-files", "max-locks", "max-connections"):
        a.add_argument(f"--{name}", type=int, default=0, help="the job's share (0: default)")
    a.add_argument("--max-inflight-bytes", type=int, default=0, help="(0: default)")
    for action, what in (
        ("renew", "restart a job's lease"),
        ("release", "drain a job's requests, then remove it"),
        ("revoke", "remove a job at once, dropping its queued writes"),
    ):
        r = actions.add_parser(action, help=what)
        r.add_argument("address")
        r.add_argument("job")
        if action == "renew":
            r.add_argument("--lease", type=float, default=0.0, help="seconds (0: admitted length)")
    j = actions.add_parser("jobs", help="list the admitted jobs")
    j.add_argument("address")
    j.add_argument("--json", action="store_true", help="print the daemon's JSON list")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    admin = args.admin_secret_file
    try:
        if args.action == "admit":
            out = admit(
                args.address,
                args.job,
                args.secret_file,
                args.root,
                weight=args.weight,
                lease_s=args.lease,
                max_open_files=args.max_open_files,
                max_locks=args.max_locks,
                max_connections=args.max_connections,
                max_inflight_bytes=args.max_inflight_bytes,
                admin_secret_file=admin,
            )
            print(json.dumps(out))
        elif args.action == "renew":
            renew(args.address, args.job, args.lease, admin_secret_file=admin)
        elif args.action == "release":
            release(args.address, args.job, admin_secret_file=admin)
        elif args.action == "revoke":
            revoke(args.address, args.job, admin_secret_file=admin)
        else:
            listed = jobs(args.address, admin_secret_file=admin)
            if args.json:
                print(json.dumps(listed, indent=2))
            else:
                for job in listed:
                    left = job["lease_ms_left"]
                    lease = "-" if left is None else f"{left / 1000:.1f}s"
                    roots = ",".join(f"{k}={v}" for k, v in job["roots"].items())
                    print(
                        f"{job['name']}\tapp={job['app']}\t{job['state']}\tweight={job['weight']}"
                        f"\tlease_left={lease}\tconnections={job['connections']}\t{roots}"
                    )
    except IonodeError as e:
        print(f"iorelay ionode {args.action}: {e}", file=sys.stderr)
        return e.status
    return 0
