"""Shared fixtures: built-binary checks that skip locally but fail in CI, and local daemons.

Mark a test @pytest.mark.needs_build("iorelayd", ...) when it needs built programs. Without
them it is skipped with the reason; with CI=true it fails, so CI never passes by skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from iorelay import paths
from iorelay.launch.local import LocalDaemons

# Every subprocess a test starts gets this timeout, so a hang fails the test instead of CI.
SUBPROCESS_TIMEOUT_S = 60.0
DAEMON_BINARIES = ("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
FAKE_DAEMON = Path(__file__).with_name("fake_iorelayd.py")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_built(*names: str) -> dict[str, Path]:
    """Paths of the named binaries; skips the test (fails it in CI) when one is missing."""
    found: dict[str, Path] = {}
    for name in names:
        try:
            found[name] = paths.find(name)
        except paths.NotBuiltError as e:
            reason = " ".join(line.strip() for line in str(e).splitlines())
            if in_ci():
                pytest.fail(f"CI=true and a needed binary is missing. {reason}", pytrace=False)
            pytest.skip(reason)
    return found


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers(name="needs_build"):
        require_built(*(marker.args or DAEMON_BINARIES))


@pytest.fixture
def disk_tmp() -> Iterator[Path]:
    """A fresh directory on disk under /tmp (not tmpfs-only /dev/shm), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="iorelay-test-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def fake_build(disk_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A build directory holding the fake iorelayd and an empty stand-in for the interposer, so
    that the daemon-starting machinery is tested without the C++ daemon (nothing is forwarded:
    runs using it pass --no-preload)."""
    build = disk_tmp / "fake-build"
    daemon = build / "src/iorelayd/iorelayd"
    daemon.parent.mkdir(parents=True)
    daemon.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_DAEMON}" "$@"\n')
    daemon.chmod(0o755)
    preload = build / "src/preload/libiorelay_preload.so"
    preload.parent.mkdir(parents=True)
    preload.touch()
    monkeypatch.setenv("IORELAY_BUILD_DIR", str(build))
    return build


DaemonFactory = Callable[..., LocalDaemons]


@pytest.fixture
def daemon_factory(disk_tmp: Path) -> Iterator[DaemonFactory]:
    """start(count=2, **LocalDaemons kwargs) -> running LocalDaemons, stopped after the test.

    Each call gets its own export root (.../rootN), prefix (.../fwdN, absent locally) and
    work directory. After the test, every daemon must have exited cleanly on SIGTERM.
    """
    require_built(*DAEMON_BINARIES)
    started: list[LocalDaemons] = []

    def start(count: int = 2, **kwargs: object) -> LocalDaemons:
        n = len(started)
        root, work = disk_tmp / f"root{n}", disk_tmp / f"work{n}"
        root.mkdir()
        work.mkdir()
        daemons = LocalDaemons(count, root, str(disk_tmp / f"fwd{n}"), work, **kwargs)
        started.append(daemons)
        daemons.start()
        return daemons

    yield start
    codes = [(d, d.stop()) for d in started]
    for d, exit_codes in codes:
        assert all(c == 0 for c in exit_codes), (
            f"daemons exited with {exit_codes} on SIGTERM (expected 0)\n{d.logs()}"
        )


@pytest.fixture
def daemons(daemon_factory: DaemonFactory) -> LocalDaemons:
    """Two running iorelayd on loopback serving an on-disk export root."""
    return daemon_factory(2)


def run_strided_writers(d: LocalDaemons, path: str, ranks: int, segments: int, block: int) -> None:
    """`ranks` strided_writer processes writing one 1D-strided file through the daemons `d`,
    all at once; returns when every one exited 0."""
    writer = require_built("strided_writer")["strided_writer"]
    procs = []
    for rank in range(ranks):
        argv = [writer, "--file", path, "--rank", rank, "--ranks", ranks, "--segments", segments,
                "--block", block]  # fmt: skip
        procs.append(
            subprocess.Popen(
                [str(a) for a in argv],
                env={**os.environ, **d.env()},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for p in procs:
        out, err = p.communicate(timeout=SUBPROCESS_TIMEOUT_S)
        assert p.returncode == 0, out + err


@pytest.fixture(scope="session")
def advise_measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Made-up measured results for `iorelay advise` inputs (advise_synthetic) and one score
    cache for the session: the sources are scored once for all the tests that use them."""
    from advise_synthetic import write_results

    return (
        write_results(tmp_path_factory.mktemp("advise-measured")),
        tmp_path_factory.mktemp("advise-cache"),
    )
