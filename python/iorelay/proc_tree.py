"""The processes beneath a process, from /proc: for ending a tree whose members left its
process group (salloc's command, MPI launchers' srun steps, commands under the guard)."""

from __future__ import annotations

import contextlib
import os

Processes = dict[int, tuple[int, int]]  # pid -> (parent pid, session id)


def live_processes() -> Processes:
    """pid -> (parent pid, session id) of every live (not zombie) process."""
    found: Processes = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue  # it ended meanwhile
        if fields[0] != "Z":  # state, ppid, pgrp, session
            found[int(entry)] = (int(fields[1]), int(fields[3]))
    return found


def descendants(root: int, processes: Processes | None = None) -> list[int]:
    """Live processes beneath `root` (of `processes`, default: now), parents before their
    children."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in (live_processes() if processes is None else processes).items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def in_session(leader: int, processes: Processes | None = None) -> list[int]:
    """Live processes of the session `leader` began (start_new_session): also those whose
    parent has died (then init's children), which a walk down from the leader misses."""
    now = live_processes() if processes is None else processes
    return [pid for pid, (_, sid) in now.items() if sid == leader]


def signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):  # gone, or not ours to signal (set-user-ID)
            os.kill(pid, signum)
