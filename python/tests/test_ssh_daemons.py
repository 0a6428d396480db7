"""SshDaemons without sshd: IORELAY_SSH names a stand-in that runs the remote command here, so
the remote script itself (credential from stdin into a 0600 file, ready line, stop, clean-up)
and the 10 s deadline are tested anywhere. The real ssh is tested on the testbed."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from iorelay.launch.local import DaemonError
from iorelay.launch.ssh import SSH_ENV, SshDaemons
from iorelay.stats import query_stats

# argv: HOST COMMAND; "unreachable" hangs like a host that does not answer.
FAKE_SSH = """#!/bin/sh
[ "$1" = unreachable ] && exec sleep 30
exec sh -c "$2"
"""


@pytest.fixture
def fake_ssh(tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "fake-ssh"
    script.write_text(FAKE_SSH)
    script.chmod(0o755)
    return {SSH_ENV: str(script)}


def _holds(directory: Path, secret: bytes) -> bool:
    try:
        return (directory / "credential").read_bytes() == secret
    except OSError:
        return False


@pytest.mark.needs_build("iorelayd", "iorelay-ctl")
def test_daemons_start_answer_and_leave_nothing(tmp_path: Path, fake_ssh: dict[str, str]) -> None:
    root = tmp_path / "root"
    root.mkdir()
    before = set(Path("/tmp").glob("iorelayd.*"))
    with SshDaemons(["h1", "h2"], root, "/fwd", tmp_path / "work", environ=fake_ssh) as d:
        addrs = d.addresses()
        assert len(addrs) == 2 and all(a.startswith("tcp:") for a in addrs)
        assert d.credential_file is not None
        secret = d.credential_file.read_bytes()
        # this run's directories (another test run may have made some too)
        new = {p for p in set(Path("/tmp").glob("iorelayd.*")) - before if _holds(p, secret)}
        assert len(new) == 2
        for directory in new:
            assert stat.S_IMODE(directory.stat().st_mode) == 0o700
            assert stat.S_IMODE((directory / "credential").stat().st_mode) == 0o600
        for addr in addrs:
            assert "total" in query_stats(addr, d.credential_file)
    assert d.exit_codes == [0, 0]
    assert not any(directory.exists() for directory in new)


@pytest.mark.needs_build("iorelayd")
def test_a_host_that_does_not_answer_fails_within_the_deadline(
    tmp_path: Path, fake_ssh: dict[str, str]
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    t0 = time.monotonic()
    daemons = SshDaemons(["h1", "unreachable"], root, "/fwd", tmp_path / "w", environ=fake_ssh,
                         ready_timeout_s=2.0)  # fmt: skip
    with pytest.raises(DaemonError, match="iorelayd on unreachable was not ready within 2 s"):
        daemons.start()
    assert time.monotonic() - t0 < 10
    assert daemons.exit_codes[0] == 0  # h1's daemon was started, then stopped


@pytest.mark.needs_build("iorelayd")
def test_a_daemon_that_cannot_start_is_named(tmp_path: Path, fake_ssh: dict[str, str]) -> None:
    daemons = SshDaemons(["h1"], tmp_path, "/fwd", tmp_path / "w", environ=fake_ssh,
                         interface="nosuch0")  # fmt: skip
    with pytest.raises(DaemonError, match=r"iorelayd on h1 exited with status 2(.|\n)*nosuch0"):
        daemons.start()


@pytest.mark.needs_build("iorelayd")
def test_the_end_of_the_sessions_stdin_stops_the_daemon(
    tmp_path: Path, fake_ssh: dict[str, str]
) -> None:
    """If iorelay dies, ssh's stdin closes: the remote script then stops its daemon."""
    with SshDaemons(["h1"], tmp_path, "/fwd", tmp_path / "w", environ=fake_ssh) as d:
        remote = d._remotes[0]
        pid = int(remote.pid or 0)
        assert Path(f"/proc/{pid}").exists()
        assert remote.proc.stdin is not None
        remote.proc.stdin.close()
        assert remote.proc.wait(timeout=10) == 0  # the daemon's status after SIGTERM
        assert not Path(f"/proc/{pid}").exists()
