"""The run file is trusted only as far as it must be (issue 45, finding 5): a link planted at its
path is refused, `iorelay exec` takes only the keys iorelay writes there, and a run file of
another user, or one others may change, is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S
from test_run import iorelay_run

from iorelay.exec_cmd import ExecError, exec_env
from iorelay.run_file import RunFileError, write_run_file

NOBODY_UID = 65534
INJECTED = {
    "LD_PRELOAD": "/tmp/evil.so",
    "LD_LIBRARY_PATH": "/tmp/evil-libs",
    "PYTHONPATH": "/tmp/evil-py",
    "IORELAY_PRELOAD": "/tmp/evil-preload.so",
}


def test_a_link_planted_at_the_run_file_path_is_refused_not_followed(
    fake_build: Path, disk_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work, victim = disk_tmp / "work", disk_tmp / "victim"
    work.mkdir()
    victim.write_text("precious\n")
    (work / "run.json").symlink_to(victim)
    marker = disk_tmp / "ran"
    status = iorelay_run(
        "--ionodes", "1", "--root", str(disk_tmp / "root"), "--workdir", str(work),
        "--no-preload", "--", "touch", str(marker),
    )  # fmt: skip
    assert status == 1
    assert "run.json is a symbolic link: refusing" in capsys.readouterr().err
    assert victim.read_text() == "precious\n" and not marker.exists()


def test_the_run_file_is_0600_whatever_the_umask_and_replaces_our_earlier_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.json"
    path.write_text("an earlier run's\n")
    old_umask = os.umask(0)
    try:
        write_run_file(path, {"IORELAY_SERVERS": "unix:/s", "LD_PRELOAD": "/x.so"}, {})
    finally:
        os.umask(old_umask)
    assert path.stat().st_mode & 0o777 == 0o600
    assert json.loads(path.read_text())["env"] == {"IORELAY_SERVERS": "unix:/s"}


def test_exec_ignores_variables_planted_in_the_run_file(fake_build: Path, tmp_path: Path) -> None:
    run_file, out = tmp_path / "run.json", tmp_path / "env.json"
    carried = {"IORELAY_SERVERS": "tcp:127.0.0.1:1", "IORELAY_PREFIX": "/fwd", **INJECTED}
    run_file.write_text(json.dumps({"version": 1, "env": carried}))
    run_file.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if k not in INJECTED}
    env["IORELAY_RUN_FILE"] = str(run_file)
    dump = f"import json, os, sys; json.dump(dict(os.environ), open({str(out)!r}, 'w'))"
    proc = subprocess.run(
        [sys.executable, "-m", "iorelay.exec_cmd", "--", sys.executable, "-c", dump],
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rank_env = json.loads(out.read_text())
    assert rank_env["IORELAY_SERVERS"] == "tcp:127.0.0.1:1" and rank_env["IORELAY_PREFIX"] == "/fwd"
    assert rank_env["LD_PRELOAD"] == str(fake_build / "src/preload/libiorelay_preload.so")
    for key in ("LD_LIBRARY_PATH", "PYTHONPATH", "IORELAY_PRELOAD"):
        assert key not in rank_env, key
    assert (
        "ignoring variables the run file may not set: IORELAY_PRELOAD, LD_LIBRARY_PATH, "
        "LD_PRELOAD, PYTHONPATH" in proc.stderr
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_exec_refuses_a_run_file_of_another_user(tmp_path: Path) -> None:
    run_file = tmp_path / "run.json"
    run_file.write_text(json.dumps({"version": 1, "env": {"IORELAY_SERVERS": "unix:/s"}}))
    run_file.chmod(0o644)
    os.chown(run_file, NOBODY_UID, NOBODY_UID)
    with pytest.raises(ExecError, match=f"belongs to uid {NOBODY_UID}, not to this user"):
        exec_env({"IORELAY_RUN_FILE": str(run_file), "IORELAY_PRELOAD": "/p.so"})


def test_exec_refuses_a_run_file_others_may_write_or_a_link(tmp_path: Path) -> None:
    run_file = tmp_path / "run.json"
    run_file.write_text(json.dumps({"version": 1, "env": {"IORELAY_SERVERS": "unix:/s"}}))
    run_file.chmod(0o622)
    with pytest.raises(ExecError, match=r"writable by group or others \(mode 0622\)"):
        exec_env({"IORELAY_RUN_FILE": str(run_file)})
    run_file.chmod(0o600)
    (tmp_path / "link.json").symlink_to(run_file)
    with pytest.raises(ExecError, match="cannot open the run file"):
        exec_env({"IORELAY_RUN_FILE": str(tmp_path / "link.json")})


def test_writing_over_something_not_ours_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run.json").mkdir()
    with pytest.raises(RunFileError, match="not a regular file"):
        write_run_file(tmp_path / "run.json", {}, {})
