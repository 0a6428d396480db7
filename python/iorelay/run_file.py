"""The run file: how `iorelay run` hands the interposer's variables to `iorelay exec` on every rank.

Whoever can change what a rank reads here could run code in every rank, so the file is written
0600 without following a link planted at its path, read only when it is ours and not writable
by others, and only the keys in RUN_FILE_KEYS are taken from it (docs/security.md, "The run
file"). Light on imports: `iorelay exec` reads it once per rank.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RUN_FILE_ENV = "IORELAY_RUN_FILE"
RUN_FILE_VERSION = 1

# The interposer's variables `iorelay run` writes into the run file, and the only keys
# `iorelay exec` copies from it into a rank's environment. Anything else there (LD_PRELOAD,
# LD_LIBRARY_PATH, PYTHONPATH, IORELAY_PRELOAD, ...) would let whoever wrote the file choose the
# code a rank loads: `iorelay exec` ignores it and names it in a warning. They are the rows of
# the client's environment table (src/client/env_table.cc) marked for the run file
# (python/tests/test_env_table.py checks that the two agree).
RUN_FILE_KEYS: dict[str, str] = {
    "IORELAY_PREFIX": "path prefix the interposer forwards",
    "IORELAY_SECRET_FILE": "path of the job credential",
    "IORELAY_SERVERS": "the daemons' addresses",
    "IORELAY_RANKS_PER_NODE": "ranks per virtual node, for placement",
    "IORELAY_PLACEMENT": "client to I/O node placement",
    "IORELAY_NODES": "number of compute hosts (with node_ids)",
    "IORELAY_WRITE_BEHIND": "write-behind in the client (on/off)",
    "IORELAY_READ_AHEAD": "read-ahead in the client (on/off)",
    "IORELAY_ATTR_CACHE_MS": "lifetime of the client's attribute cache",
    "IORELAY_STAT_PREFETCH": "stat prefetch in the client (on/off)",
}


class RunFileError(RuntimeError):
    """The run file cannot be written safely, or is not one `iorelay exec` may trust."""


@dataclass
class RunFile:
    """What `iorelay exec` takes from a run file: allowlisted variables and node ids."""

    env: dict[str, str]
    node_ids: dict[str, int] = field(default_factory=dict)
    ignored_keys: list[str] = field(default_factory=list)  # in the file, not in RUN_FILE_KEYS


def write_run_file(path: Path, env: dict[str, str], node_ids: dict[str, int]) -> None:
    """Writes the run file at `path`, 0600: only the keys of `env` in RUN_FILE_KEYS.

    A link, or anything but a regular file of ours, at `path` is refused, never followed; an
    earlier run's file of ours (the same --workdir again) is replaced.
    """
    try:
        old = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISLNK(old.st_mode):
            raise RunFileError(f"{path} is a symbolic link: refusing to write the run file there")
        if not stat.S_ISREG(old.st_mode) or old.st_uid != os.geteuid():
            raise RunFileError(
                f"{path} exists and is not a regular file of user {os.geteuid()}: refusing to "
                "write the run file there"
            )
        os.unlink(path)
    doc: dict[str, Any] = {
        "version": RUN_FILE_VERSION,
        "env": {k: v for k, v in env.items() if k in RUN_FILE_KEYS},
    }
    if node_ids:
        doc["node_ids"] = node_ids
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)  # O_EXCL: a link planted since the check fails too
    except FileExistsError as e:
        raise RunFileError(f"{path} appeared while the run file was written: refusing") from e
    with os.fdopen(fd, "w") as f:
        os.fchmod(fd, 0o600)  # whatever the umask
        f.write(json.dumps(doc, indent=2) + "\n")


def read_run_file(path: str) -> RunFile:
    """The allowlisted variables and node ids of the run file at `path`.

    Refused (RunFileError): a link, a file that is not regular, not owned by this user, or
    writable by group or others, and a file that is not a run file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as e:
        raise RunFileError(f"cannot open the run file: {e}") from e
    with os.fdopen(fd) as f:
        _check_trusted(path, os.fstat(fd))
        try:
            doc = json.load(f)
            carried = doc["env"]
            node_ids = doc.get("node_ids") or {}
            if not isinstance(carried, dict) or not isinstance(node_ids, dict):
                raise TypeError("env and node_ids must be objects")
            node_ids = {str(host): int(i) for host, i in node_ids.items()}
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise RunFileError(f"cannot read the run file: {e}") from e
    env = {str(k): str(v) for k, v in carried.items() if k in RUN_FILE_KEYS}
    ignored = sorted(str(k) for k in carried if k not in RUN_FILE_KEYS)
    return RunFile(env, node_ids, ignored)


def _check_trusted(path: str, st: os.stat_result) -> None:
    uid = os.geteuid()
    if not stat.S_ISREG(st.st_mode):
        raise RunFileError(f"the run file {path} is not a regular file")
    if st.st_uid != uid:
        raise RunFileError(
            f"the run file {path} belongs to uid {st.st_uid}, not to this user (uid {uid}): "
            "refusing it, since its variables decide what every rank runs"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise RunFileError(
            f"the run file {path} is writable by group or others (mode "
            f"{stat.S_IMODE(st.st_mode):04o}): refusing it"
        )
