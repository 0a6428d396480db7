"""The demo end to end: fio through the interposer and two real daemons, verified."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, in_ci

from iorelay.demo import fio_job_file

FAKE_DAEMON = Path(__file__).with_name("fake_iorelayd.py")


def test_fio_job_file_has_a_direct_job_and_verification() -> None:
    text = fio_job_file("/fwd/x")
    assert "directory=/fwd/x" in text
    assert "verify=crc32c" in text
    assert "direct=1" in text
    assert "ioengine=psync" in text


@pytest.mark.needs_build
@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_demo_passes(transport: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "iorelay", "demo", "--transport", transport],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=400,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "demo passed" in proc.stdout
    # A short summary, not the counters' table; and a clean run closed nothing for errors.
    assert "requests per dispatch" in proc.stdout
    assert "connections_" not in proc.stdout
    assert "protocol errors" not in proc.stdout, proc.stdout


def test_demo_fails_when_nothing_is_forwarded(disk_tmp: Path) -> None:
    """With a daemon that serves nothing and a preload that is not a library, fio writes
    locally: the demo must notice and fail, never pass without forwarding."""
    if shutil.which("fio") is None:
        if in_ci():
            pytest.fail("fio is not installed (make deps installs it)")
        pytest.skip("fio is not installed (make deps installs it)")
    build = disk_tmp / "build"
    daemon = build / "src/iorelayd/iorelayd"
    ctl = build / "src/client/iorelay-ctl"
    preload = build / "src/preload/libiorelay_preload.so"
    for f in (daemon, ctl, preload):
        f.parent.mkdir(parents=True, exist_ok=True)
    daemon.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_DAEMON}" "$@"\n')
    ctl.write_text("#!/bin/sh\necho '{\"applications\": []}'\n")
    preload.write_text("not a shared object\n")
    daemon.chmod(0o755)
    ctl.chmod(0o755)
    proc = subprocess.run(
        [sys.executable, "-m", "iorelay", "demo", "--base-dir", str(disk_tmp)],
        capture_output=True,
        text=True,
        env={**os.environ, "IORELAY_BUILD_DIR": str(build)},
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "not forwarded" in " ".join(proc.stdout.split())


def test_the_story_is_one_line_per_daemon_and_names_the_idle_one() -> None:
    from iorelay.demo import carried_story

    busy = {"total": {"bytes_written": 12 << 20, "bytes_read": 12 << 20, "requests": 428,
                      "dispatches": 384, "mean_requests_per_dispatch": 1.0,
                      "existence_answers": 12, "errors": 0},
            "connections_closed_protocol_error": 0}  # fmt: skip
    idle = {"total": {"requests": 1, "dispatches": 0}, "connections_closed_protocol_error": 0}
    text = carried_story([("tcp:h:1", busy), ("tcp:h:2", idle)])
    assert text.splitlines()[:2] == [
        "   tcp:h:1: 428 requests, 12 MiB written, 12 MiB read, 1.00 requests per dispatch, "
        "0 errors, 12 existence answers",
        "   tcp:h:2: 1 requests, 0 MiB written, 0 MiB read, no data dispatched, 0 errors, "
        "0 existence answers",
    ]
    assert "tcp:h:2 carried no data: placement is per node" in text
    assert "carried no data" not in carried_story([("a", busy), ("b", busy)])
    refused = {**busy, "connections_closed_protocol_error": 3}
    assert "3 connections closed for protocol errors" in carried_story([("a", refused)])


def test_the_demo_says_whether_the_testbed_demo_can_run_here() -> None:
    from iorelay.demo import testbed_hint
    from iorelay.testbed.cluster import unmet_requirements

    hint = testbed_hint()
    why = unmet_requirements()
    if not why:
        assert "This machine can build the testbed, so `make demo` explores there" in hint
    elif os.geteuid() == 0 and Path("/dev/fuse").exists():  # make demo installs the packages
        assert "once its packages are installed, which `make demo` does" in hint
    else:
        assert "not here: " + "; ".join(why) in hint
