"""Keeps the command of `iorelay run` from outliving it, its grandchildren included.

`iorelay run` starts COMMAND as `python -m iorelay.app_guard FD -- COMMAND`. The guard adopts
every orphan of the command's tree (it is a child subreaper) and holds the read end of a pipe
whose write end only `iorelay run` holds. When `iorelay run` ends in any way, SIGKILL included,
the kernel closes that end: the guard reads end-of-file, kills every process left beneath it
and exits. Unlike PR_SET_PDEATHSIG this reaches grandchildren, also those in another process
group or session, and does not depend on which thread of `iorelay run` started it. SIGTERM,
SIGINT and SIGHUP sent to the guard go to the whole tree; its exit status is the command's.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

from iorelay.prctl import become_subreaper
from iorelay.proc_tree import descendants, signal_all

_FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_KILL_TIMEOUT_S = 2.0


class GuardedCommand:
    """COMMAND run under the guard, in a new session, with `env` as its whole environment.

    The guard itself runs without LD_PRELOAD (it is passed on to COMMAND), so the interposer
    loads only into the command. Call close() (or leave the `with`) when done with it.
    """

    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        read_end, self._lifeline = os.pipe()  # both ends close-on-exec: ours stays ours
        guard_env = dict(env)
        preload = guard_env.pop("LD_PRELOAD", None)
        preload_args = ["--ld-preload", preload] if preload is not None else []
        argv = [sys.executable, "-m", "iorelay.app_guard", str(read_end), *preload_args, "--"]
        try:
            self.proc = subprocess.Popen(
                [*argv, *command], env=guard_env, pass_fds=(read_end,), start_new_session=True
            )
        except BaseException:
            os.close(self._lifeline)
            raise
        finally:
            os.close(read_end)

    def wait(self, timeout_s: float | None = None) -> int:
        """The command's exit status (negative: the signal that ended it)."""
        return self.proc.wait(timeout=timeout_s)

    def stop(self, grace_s: float) -> None:
        """SIGTERM to the command's tree; if it is still there after grace_s, SIGKILL to all."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            pass
        self.close()  # the guard kills the tree
        try:
            self.proc.wait(timeout=_KILL_TIMEOUT_S + 1)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def close(self) -> None:
        if self._lifeline >= 0:
            os.close(self._lifeline)
            self._lifeline = -1

    def __enter__(self) -> GuardedCommand:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# -- the guard process ------------------------------------------------------------------------


def _signal_tree(signum: int) -> None:
    signal_all(descendants(os.getpid()), signum)


def _reap(command_pid: int) -> int | None:
    """Reaps every exited child (orphans are ours too); the command's wait status if it ended."""
    status = None
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == command_pid:
            status = wait_status


def _kill_tree() -> None:
    """SIGKILL to everything beneath the guard until nothing is left (new forks included)."""
    deadline = time.monotonic() + _KILL_TIMEOUT_S
    while (left := descendants(os.getpid())) and time.monotonic() < deadline:
        signal_all(left, signal.SIGKILL)
        _reap(-1)
        time.sleep(0.01)
    _reap(-1)


def _exit_like(wait_status: int) -> int:
    """Ends the guard as the command ended: its exit code, or killed by its signal."""
    code = os.waitstatus_to_exitcode(wait_status)
    if code >= 0:
        return code
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the command's core dump, not ours
    with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
        signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
    return 128 - code  # a signal that does not end a process


def guard(lifeline: int, command: Sequence[str], ld_preload: str | None) -> int:
    os.set_inheritable(lifeline, False)
    become_subreaper()
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)  # SIGCHLD (or a forwarded signal) wakes the poll below
    signal.signal(signal.SIGCHLD, lambda *_: None)
    for s in _FORWARDED_SIGNALS:
        signal.signal(s, lambda signum, _frame: _signal_tree(signum))
    env = dict(os.environ)
    if ld_preload is not None:
        env["LD_PRELOAD"] = ld_preload
    try:
        # Python ignores SIGPIPE and SIGXFSZ; the command gets their defaults, as from Popen.
        command_pid = os.posix_spawnp(
            command[0], list(command), env, setsigdef=(signal.SIGPIPE, signal.SIGXFSZ)
        )
    except FileNotFoundError:
        print(f"iorelay run: {command[0]}: not found", file=sys.stderr)
        return 127
    except OSError as e:
        print(f"iorelay run: {command[0]}: {e}", file=sys.stderr)
        return 126
    poller = select.poll()
    poller.register(lifeline, select.POLLIN)
    poller.register(wake_read, select.POLLIN)
    while (status := _reap(command_pid)) is None:
        for fd, _events in poller.poll():
            if fd == lifeline:  # `iorelay run` is gone, or asks for the end
                _kill_tree()
                os.kill(os.getpid(), signal.SIGKILL)  # ended as the tree was
            with contextlib.suppress(BlockingIOError):
                os.read(wake_read, 512)
    return _exit_like(status)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    ld_preload = None
    if len(args) >= 3 and args[1] == "--ld-preload":
        ld_preload = args.pop(2)
        del args[1]
    if len(args) < 3 or not args[0].isdigit() or args[1] != "--":
        print(
            "usage: python -m iorelay.app_guard FD [--ld-preload V] -- COMMAND...", file=sys.stderr
        )
        return 2
    return guard(int(args[0]), args[2:], ld_preload)


if __name__ == "__main__":
    sys.exit(main())
