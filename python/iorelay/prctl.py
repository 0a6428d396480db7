"""Linux process-lifetime controls (prctl through ctypes), so that nothing `iorelay run` starts
outlives it: a child's signal when its parent dies, and adopting orphaned descendants."""

from __future__ import annotations

import ctypes
import os
import signal

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def die_with_parent() -> None:
    """A Popen preexec_fn: SIGTERM this child when the thread that forked it ends (as the
    whole launcher does when it is SIGKILLed), so spawn from the main thread. Only calls prctl."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def become_subreaper() -> None:
    """Orphaned descendants of this process are reparented to it, not to init, so that it can
    still find (and stop) the whole tree beneath it."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
