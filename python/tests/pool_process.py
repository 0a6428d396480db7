"""A live pool for tests: `iorelay pool start` as a process of its own, with its daemons, and
what a job needs to join it (a credential and a root); always stopped afterwards."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conftest import SUBPROCESS_TIMEOUT_S

from iorelay.credential import create_credential
from iorelay.pool import join, wire

START_TIMEOUT_S = 30.0


class PoolProcess:
    def __init__(self, tmp: Path, ionodes: int, *, lease_s: float = 30.0,
                 options: str = "0,1,2", min_interval_s: float = 0.0,
                 policy: str = "knapsack") -> None:  # fmt: skip
        self.tmp = tmp
        self.dir = tmp / "pool"
        argv = [sys.executable, "-m", "iorelay", "pool", "start", str(self.dir),
                "--ionodes", str(ionodes), "--options", options,
                "--min-interval", str(min_interval_s), "--lease", str(lease_s),
                "--policy", policy]  # fmt: skip
        self.log = open(tmp / "pool.log", "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with contextlib.suppress(wire.PoolError):
                self.status()
                break
            assert self.proc.poll() is None, (tmp / "pool.log").read_text()
            assert time.monotonic() < deadline, "the pool did not answer in time"
            time.sleep(0.1)

    def status(self) -> dict[str, Any]:
        return wire.request(self.dir, {"op": "status"}, timeout_s=10)

    @property
    def admin(self) -> Path:
        return self.dir / "admin.key"

    def job(self, name: str) -> tuple[Path, Path]:
        """A credential and a root (served at its own path) for job `name`."""
        root = self.tmp / name
        root.mkdir()
        return create_credential(self.tmp / f"{name}.key"), root

    def join(self, name: str, values: str, key: Path, root: Path) -> dict[str, Any]:
        """Joins as `iorelay run --pool` does; the reply (hosts, servers, map_file)."""
        return wire.request(self.dir, {
            "op": "join", "job": name, "secret_file": str(key), "roots": [f"{root}={root}"],
            "values": join.parse_values(values), "compute_nodes": 1,
        })  # fmt: skip

    def env(self, reply: dict[str, Any], key: Path, prefixes: list[str]) -> dict[str, str]:
        return {**os.environ, **join.job_env(reply, prefixes, key), "IORELAY_TIMEOUT_MS": "3000"}

    def stop(self) -> int | None:
        with contextlib.suppress(wire.PoolError):
            wire.request(self.dir, {"op": "stop"}, timeout_s=10)
        try:
            self.proc.wait(timeout=SUBPROCESS_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        return self.proc.returncode
