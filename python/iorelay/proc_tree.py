"""The processes beneath a process, from /proc: for ending a tree whose members left its
process group (salloc's command, MPI launchers' srun steps, commands under the guard)."""

from __future__ import annotations

import contextlib
import os


def descendants(root: int) -> list[int]:
    """Live (not zombie) processes beneath `root`, parents before their children."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue  # it ended meanwhile
        state, ppid = fields[0], int(fields[1])
        if state != "Z":
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):  # gone, or not ours to signal (set-user-ID)
            os.kill(pid, signum)
