"""Who uses the testbed: a process that runs on it holds it, and it comes down with its last holder.

One testbed per machine, shared by every `iorelay demo --testbed` and `iorelay explore
--testbed` on it. Each of them records itself (pid and start time) under the testbed's state
directory while it runs; a record whose process is gone no longer counts. A testbed brought up
by a holder comes down when the last holder lets go; one brought up by hand (`iorelay testbed
up`) stays until `iorelay testbed down`, which refuses while a holder runs. Every change of
holders, and bringing the testbed up or down for them, happens under one lock file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from iorelay.testbed.state import STATE_FILE, State
from iorelay.testbed.system import TestbedError, start_time

LOCK_WAIT_S = 600.0  # at most this long behind another user's `up` or `down` (up: 10-30 s)
# The fact that says the testbed goes with its last holder (absent: brought up by hand).
WITH_LAST_HOLDER = "down_with_last_holder"


class TestbedGone(TestbedError):
    """No testbed is up (any more) for a run that needs one."""


def lock_path(state_file: Path) -> Path:
    """Beside the state directory, not in it: `down` removes that directory."""
    return state_file.parent.with_name(state_file.parent.name + ".lock")


def holders_dir(state_file: Path) -> Path:
    return state_file.parent / "holders"


@contextlib.contextmanager
def locked(state_file: Path = STATE_FILE, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """The testbed's lock: one process at a time changes holders or brings it up or down."""
    path = lock_path(state_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as f:
        _flock(f, path, wait_s)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _flock(f: IO[str], path: Path, wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TestbedError(
                    f"{path} stayed locked for {wait_s:g} s (another user bringing the testbed "
                    "up or down)"
                ) from None
            time.sleep(0.2)


@dataclass(frozen=True)
class Holder:
    pid: int
    started: int | None  # clock ticks since boot, from /proc: a reused pid is not the holder
    command: str

    def alive(self) -> bool:
        return self.started is not None and start_time(self.pid) == self.started


def _read(path: Path) -> Holder | None:
    try:
        doc = json.loads(path.read_text())
        return Holder(int(doc["pid"]), doc.get("started"), str(doc.get("command", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def holders(state_file: Path = STATE_FILE) -> list[Holder]:
    """The live holders (records of processes that are gone are removed)."""
    live = []
    for path in sorted(holders_dir(state_file).glob("*.json")):
        holder = _read(path)
        if holder is not None and holder.alive():
            live.append(holder)
        else:
            path.unlink(missing_ok=True)
    return live


def _command_line(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)[:200]


def _add(state_file: Path, pid: int) -> Holder:
    holder = Holder(pid, start_time(pid), _command_line(pid))
    directory = holders_dir(state_file)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f"{pid}.tmp"
    tmp.write_text(json.dumps(holder.__dict__) + "\n")
    os.replace(tmp, directory / f"{pid}.json")
    return holder


def describe(live: list[Holder]) -> str:
    return ", ".join(f"pid {h.pid} ({h.command or '?'})" for h in live)


@dataclass
class Hold:
    """This process's hold on the testbed: `made` when it brought the testbed up."""

    state: State
    made: bool
    others: list[Holder]
    down_seconds: float | None = None  # set on release when this holder took the testbed down


def acquire(
    state_file: Path = STATE_FILE,
    bring_up: Callable[[], State] | None = None,
    pid: int | None = None,
) -> Hold:
    """Holds the testbed that is up, or brings one up with `bring_up` (then it comes down with
    its last holder). Without `bring_up`, no testbed up raises TestbedGone."""
    pid = os.getpid() if pid is None else pid
    with locked(state_file):
        state = State.load(state_file)
        if state is not None and state.doc.get("phase") != "up":
            raise TestbedError(
                f"a testbed is recorded in {state_file} but not up (phase "
                f"{state.doc.get('phase')}): `iorelay testbed down` first"
            )
        made = state is None
        if state is None:
            if bring_up is None:
                raise TestbedGone("no testbed is up: `iorelay testbed up` first (root)")
            state = bring_up()
            state.set(**{WITH_LAST_HOLDER: True})
        others = holders(state_file)
        _add(state_file, pid)
        return Hold(state, made, others)


def release(
    state_file: Path = STATE_FILE,
    take_down: Callable[[], Any] | None = None,
    pid: int | None = None,
) -> bool:
    """Lets go of the testbed; the last holder of a testbed brought up by a holder takes it
    down with `take_down`. True when it did (a testbed that is gone already: False)."""
    pid = os.getpid() if pid is None else pid
    with locked(state_file):
        (holders_dir(state_file) / f"{pid}.json").unlink(missing_ok=True)
        state = State.load(state_file)
        if state is None or holders(state_file):
            return False
        if not state.doc.get("facts", {}).get(WITH_LAST_HOLDER) or take_down is None:
            return False
        take_down()
        return True


def doc(state_file: Path = STATE_FILE) -> list[dict[str, Any]]:
    """The live holders, for `iorelay testbed status`."""
    return [h.__dict__ for h in holders(state_file)]
