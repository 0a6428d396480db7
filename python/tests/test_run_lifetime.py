"""Nothing `iorelay run` started outlives it (issue 45, finding 6): SIGKILLed, its command's
whole tree (grandchildren in another session too) and its own daemons are gone within 2 s, while
daemons it only attached to live on."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, DaemonFactory

from iorelay.app_guard import GuardedCommand
from iorelay.stats import query_stats

GONE_WITHIN_S = 2.0
# A shell whose children are a sleep in its process group and one that left it (setsid).
SHELL_WITH_GRANDCHILDREN = ["sh", "-c", "sleep 60 & setsid sleep 60 & wait"]


def live_descendants(root: int) -> dict[int, str]:
    """pid -> command name of every live (not zombie) process beneath `root`."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, ppid = stat.rpartition(")")[2].split()[:2]
        if state != "Z":
            children.setdefault(int(ppid), []).append((int(entry), name))
    found, todo = {}, [root]
    while todo:
        for pid, name in children.get(todo.pop(), []):
            found[pid] = name
            todo.append(pid)
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def wait_for_sleeps(root: int, count: int, proc: subprocess.Popen[Any]) -> dict[int, str]:
    """The processes beneath `root` once `count` sleeps run among them."""
    deadline = time.monotonic() + SUBPROCESS_TIMEOUT_S
    while list((tree := live_descendants(root)).values()).count("sleep") < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, tree
        time.sleep(0.05)
    return tree


def unix_socket_dirs(pids: dict[int, str]) -> set[Path]:
    """The directories of the Unix sockets these processes (daemons) were told to listen on."""
    dirs = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for arg in Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0"):
                if arg.startswith("unix:/"):
                    dirs.add(Path(arg.removeprefix("unix:")).parent)
    return dirs


def assert_gone_soon(pids: list[int]) -> None:
    deadline = time.monotonic() + GONE_WITHIN_S
    while (left := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"still running {GONE_WITHIN_S} s after iorelay run was SIGKILLed: {left}"


@pytest.mark.parametrize(
    ("command", "sleeps"),
    [(["sleep", "60"], 1), (SHELL_WITH_GRANDCHILDREN, 2)],
    ids=["sleep", "sh"],
)
def test_sigkilled_run_leaves_nothing_it_started(
    fake_build: Path, disk_tmp: Path, command: list[str], sleeps: int
) -> None:
    argv = ["run", "--ionodes", "1", "--root", str(disk_tmp / "root"), "--no-preload",
            "--workdir", str(disk_tmp / "work")]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "iorelay", *argv, "--", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    started: dict[int, str] = {}
    socket_dirs: set[Path] = set()
    try:
        started = wait_for_sleeps(proc.pid, sleeps, proc)
        socket_dirs = unix_socket_dirs(started)
        assert socket_dirs  # the (fake) daemon is among them
        proc.kill()
        proc.wait(timeout=SUBPROCESS_TIMEOUT_S)
        assert_gone_soon(list(started))
    finally:
        proc.kill()
        proc.communicate()
        for pid in filter(alive, started):  # after a failure: nothing left behind for CI
            os.kill(pid, signal.SIGKILL)
        for sock_dir in socket_dirs:  # LocalDaemons.stop, which did not run, removes them
            shutil.rmtree(sock_dir, ignore_errors=True)


def test_a_command_that_ignores_sigterm_is_killed_with_its_tree_after_the_grace(
    disk_tmp: Path,
) -> None:
    script = "trap '' TERM; setsid sleep 60 & sleep 60 & wait"
    with GuardedCommand(["sh", "-c", script], dict(os.environ)) as app:
        started = wait_for_sleeps(app.proc.pid, 2, app.proc)
        app.stop(grace_s=0.3)
        assert app.proc.returncode == -signal.SIGKILL
    assert_gone_soon(list(started))
    with GuardedCommand(["sh", "-c", "kill -USR1 $$"], dict(os.environ)) as app:
        assert app.wait(SUBPROCESS_TIMEOUT_S) == -signal.SIGUSR1  # the command's own end
    with GuardedCommand([str(disk_tmp / "no-such-program")], dict(os.environ)) as app:
        assert app.wait(SUBPROCESS_TIMEOUT_S) == 127


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_attached_daemons_survive_a_sigkilled_run(
    daemon_factory: DaemonFactory, disk_tmp: Path
) -> None:
    daemons = daemon_factory(1)
    secret = str(daemons.credential_file)
    argv = ["run", "--attach", *daemons.addresses(), "--secret-file", secret, "--no-preload",
            "--prefix", daemons.prefix, "--workdir", str(disk_tmp / "w")]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "iorelay", *argv, "--", "sleep", "60"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        started = wait_for_sleeps(proc.pid, 1, proc)
        proc.kill()
        proc.wait(timeout=SUBPROCESS_TIMEOUT_S)
        assert_gone_soon(list(started))
    finally:
        proc.kill()
        proc.communicate()
    assert all(alive(d.pid) for d in daemons.daemons)
    assert "total" in query_stats(daemons.addresses()[0], daemons.credential_file)  # still serving
