"""`iorelay run --pool DIR`: the job's side of a live pool. Joins with its credential, roots
and predicted bandwidth per option, runs the command on the daemons the pool gives (all of the
pool's daemons in IORELAY_SERVERS, the ones it uses now in its map file, IORELAY_MAP_FILE),
renews its lease with the pool at a third of its length, and leaves at the end. A job the pool
gives no I/O node leaves at once and runs direct: its files stay direct for their lifetime."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from iorelay import paths
from iorelay.pool import wire


def parse_values(text: str) -> dict[str, float]:
    """--values "0=120,1=300,2=480": predicted MiB/s per number of I/O nodes."""
    out = {}
    for item in text.split(","):
        k, sep, v = item.partition("=")
        if not sep:
            raise ValueError(f"--values takes K=MIB_S,... not {item!r}")
        out[str(int(k))] = float(v)
    if "0" not in out:
        raise ValueError("--values needs 0=MIB_S (direct access)")
    return out


def job_env(reply: dict[str, Any], prefixes: Sequence[str], secret_file: Path) -> dict[str, str]:
    """The interposer's variables for a job the pool gave I/O nodes."""
    return {
        "LD_PRELOAD": str(paths.find("libiorelay_preload.so")),
        "IORELAY_PREFIX": ":".join(prefixes),
        "IORELAY_SECRET_FILE": str(secret_file),
        "IORELAY_SERVERS": ",".join(reply["servers"]),
        "IORELAY_MAP_FILE": reply["map_file"],
        "IORELAY_PLACEMENT": "file-hash",
    }


class Renewer:
    """Renews the job's lease with the pool every lease_s / 3 until stopped or refused."""

    def __init__(self, pool: Path, job: str, lease_s: float) -> None:
        self._pool, self._job, self._period = pool, job, max(0.1, lease_s / 3)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self._period):
            try:
                wire.request(self._pool, {"op": "renew", "job": self._job}, timeout_s=10)
            except wire.PoolError:
                return

    def __enter__(self) -> Renewer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=15)


def run_in_pool(
    pool: Path,
    job: str,
    secret_file: Path,
    roots: Sequence[str],
    values: dict[str, float],
    compute_nodes: int,
    run: Callable[[dict[str, str]], int],
    say: Callable[[str], None],
) -> int:
    """Joins, runs `run(env)` and leaves (also when run raises); run's exit status."""
    reply = wire.request(pool, {
        "op": "join", "job": job, "secret_file": str(secret_file.resolve()),
        "roots": list(roots), "values": values, "compute_nodes": compute_nodes,
    })  # fmt: skip
    prefixes = [r.partition("=")[0] for r in roots]
    if not reply["hosts"]:
        wire.request(pool, {"op": "leave", "job": job})
        say(f"job {job}: the pool gave no I/O node; runs direct (its files stay direct)")
        return run({})
    say(f"job {job}: I/O nodes {', '.join(reply['hosts'])}; map {reply['map_file']}")
    try:
        with Renewer(pool, job, reply["lease_s"]):
            return run(job_env(reply, prefixes, secret_file))
    finally:
        try:
            wire.request(pool, {"op": "leave", "job": job})
        except wire.PoolError as e:
            say(f"job {job}: leaving the pool: {e}")


def default_job_name() -> str:
    return os.environ.get("SLURM_JOB_ID") or f"job-{os.getpid()}"
