"""System operations of the testbed, each with its undo: commands, processes, mounts, paths.

Processes are identified by pid *and* start time (from /proc), so an undo never signals a
process that merely reused a recorded pid. Nothing is killed by name.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

COMMAND_TIMEOUT_S = 60.0


class TestbedError(RuntimeError):
    """A step of the testbed failed; the message says which and why."""


class TestbedBusy(TestbedError):
    """A testbed is up, or being built, already (one per machine)."""


def sh(argv: Sequence[str], *, check: bool = True, timeout_s: float = COMMAND_TIMEOUT_S) -> str:
    """Runs a command, returns its stdout; raises TestbedError with its stderr on failure."""
    try:
        proc = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired as e:
        raise TestbedError(f"{' '.join(argv)}: no answer within {timeout_s:g} s") from e
    except FileNotFoundError as e:
        raise TestbedError(f"{argv[0]}: not installed (make testbed-deps)") from e
    if check and proc.returncode != 0:
        raise TestbedError(
            f"{' '.join(argv)} failed with status {proc.returncode}: "
            f"{(proc.stderr.strip() or proc.stdout.strip())[-2000:]}"
        )
    return proc.stdout


def in_netns(netns: str) -> list[str]:
    """Prefix that runs a command in a namespace's network only (mounts stay the root's)."""
    return ["nsenter", f"--net=/run/netns/{netns}"]


# -- processes --------------------------------------------------------------------------------


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None if it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def spawn(argv: Sequence[str], log: Path) -> int:
    """Starts a daemon in the foreground of its own session, output to `log`; returns its pid.

    The daemon outlives this process (no Popen object that would warn or wait for it)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    program = shutil.which(argv[0]) or argv[0]
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, str(log), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    return os.posix_spawn(program, list(argv), os.environ, file_actions=actions, setsid=True)


def exited(pid: int) -> int | None:
    """The exit status of a child started by spawn, or None while it runs."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None if start_time(pid) is not None else -1
    return os.waitstatus_to_exitcode(status) if done else None


def alive(pid: int, started: int | None) -> bool:
    """True while that process runs (a zombie has exited: its parent has yet to reap it)."""
    now = start_time(pid)
    return now is not None and (started is None or now == started) and not _is_zombie(pid)


def stop_process(pid: int, started: int | None, timeout_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after timeout_s; no-op if that process is gone."""
    if not alive(pid, started):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while alive(pid, started) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(0.05)
    if alive(pid, started):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        while alive(pid, started):
            _reap(pid)
            time.sleep(0.05)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _is_zombie(pid: int) -> bool | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return None


def netns_pids(netns: str) -> list[int]:
    """Processes whose network namespace is this one (`ip netns pids`)."""
    if not Path(f"/run/netns/{netns}").exists():
        return []
    out = sh(["ip", "netns", "pids", netns], check=False)
    return [int(p) for p in out.split()]


def stop_netns_processes(netns: str, timeout_s: float = 10.0) -> None:
    """Stops every process left in a namespace the testbed created (job steps, bricks...)."""
    pids = [(p, start_time(p)) for p in netns_pids(netns)]
    for pid, started in pids:
        if alive(pid, started):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    for pid, started in pids:
        while alive(pid, started) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.05)
        if alive(pid, started):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# -- mounts and paths -------------------------------------------------------------------------


def mounted(path: Path) -> bool:
    target = os.fsencode(str(path))
    with open("/proc/mounts", "rb") as f:
        return any(line.split()[1] == target for line in f if len(line.split()) > 1)


def unmount(path: Path, timeout_s: float = 10.0) -> None:
    """Unmounts path; no-op when nothing is mounted there.

    A FUSE mount whose server cannot reach its storage (its host lost the network) blocks every
    call on it, unkillably, until the server gives up (~80 s for GlusterFS). So a `stat -f` probe
    runs in a child that is not waited for; when it has no answer within 2 s, the mount's FUSE
    server (the process whose last argument is the mount point) is stopped, which aborts the
    connection and frees the probe, and the mount is detached lazily."""
    if not mounted(path):
        return
    servers = _fuse_servers(path)
    probe = subprocess.Popen(
        ["stat", "-f", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 2.0
    while probe.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if servers and probe.returncode is None:
        for pid in servers:
            stop_process(pid, start_time(pid), timeout_s=2.0)
        with contextlib.suppress(subprocess.TimeoutExpired):
            probe.wait(timeout=timeout_s)
        if mounted(path):
            sh(["umount", "-l", str(path)], timeout_s=timeout_s)
        return
    probe.wait()
    if subprocess.run(["umount", str(path)], capture_output=True, timeout=timeout_s).returncode:
        sh(["umount", "-l", str(path)], timeout_s=timeout_s)


def _fuse_servers(path: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")
            except OSError:
                continue
            if args and args[-1] == os.fsencode(str(path)):
                pids.append(int(entry.name))
    return pids


def new_entries(directory: Path) -> dict[str, Any]:
    """A snapshot of a directory's entries, to remove later only what appeared after it."""
    existed = directory.exists()
    return {
        "path": str(directory),
        "existed": existed,
        "before": sorted(os.listdir(directory)) if existed else [],
    }


def remove_new_entries(path: str, existed: bool, before: list[str]) -> None:
    directory = Path(path)
    if not directory.exists():
        return
    if not existed:
        shutil.rmtree(directory, ignore_errors=True)
        return
    for name in set(os.listdir(directory)) - set(before):
        entry = directory / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
