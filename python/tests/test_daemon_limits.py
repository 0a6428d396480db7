"""iorelayd under resource exhaustion: it refuses what it cannot serve and recovers after."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, DaemonFactory

from iorelay import paths


def _ping(address: str, secret: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, IORELAY_SECRET_FILE=str(secret), IORELAY_TIMEOUT_MS="2000")
    return subprocess.run(
        [str(paths.find("iorelay-ctl")), "ping", address],
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )


@pytest.mark.needs_build("iorelayd", "iorelay-ctl")
def test_accept_survives_descriptor_exhaustion(daemon_factory: DaemonFactory) -> None:
    """Regression: one EMFILE from accept stopped the daemon accepting for good."""
    d = daemon_factory(1)
    daemon = d.daemons[0]
    address = d.addresses("unix")[0]
    resource.prlimit(daemon.pid, resource.RLIMIT_NOFILE, (64, 64))
    held = []
    try:
        for _ in range(80):  # more than the daemon has descriptors; the rest wait in the backlog
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(address.removeprefix("unix:"))
            held.append(s)
        deadline = time.monotonic() + 10
        while "Too many open files" not in daemon.stderr_path.read_text():
            assert time.monotonic() < deadline, "the daemon never ran out of descriptors"
            time.sleep(0.05)
    finally:
        for s in held:
            s.close()
    assert d.credential_file is not None
    deadline = time.monotonic() + 10
    while (r := _ping(address, d.credential_file)).returncode != 0:
        assert time.monotonic() < deadline, f"the daemon stopped accepting: {r.stderr}"
        time.sleep(0.1)
