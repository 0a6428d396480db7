"""Creates the per-job secret that iorelayd and the clients share for challenge-response auth.

Format: 32 random bytes as 64 lowercase hex characters and a newline, in a file of mode 0600.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys
from pathlib import Path

SECRET_BYTES = 32
_FORMAT = re.compile(r"[0-9a-f]{64}\n")


def create_credential(path: str | os.PathLike[str]) -> Path:
    """Writes a fresh secret to `path`, which must not exist yet (FileExistsError otherwise).

    The file is created with O_EXCL and mode 0600 (whatever the umask), and never follows a
    symlink. On a write error the partial file is removed.
    """
    target = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(target, flags, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the umask may have removed bits; set exactly 0600
        data = (secrets.token_bytes(SECRET_BYTES).hex() + "\n").encode("ascii")
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        target.unlink(missing_ok=True)
        raise
    os.close(fd)
    return target


def read_credential(path: str | os.PathLike[str]) -> str:
    """Returns the 64-hex-character secret in `path`; ValueError if the file is malformed."""
    text = Path(path).read_text(encoding="ascii")
    if not _FORMAT.fullmatch(text):
        raise ValueError(f"{path}: not an iorelay credential (expected 64 hex characters)")
    return text.strip()


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "credential",
        help="make a job credential file for daemons started by hand (iorelayd --credential)",
        description=(
            "Write a fresh job credential to PATH: 32 random bytes as 64 hex digits, mode 0600, "
            "never over an existing file. Give it to iorelayd (--credential APP=PATH) and to the "
            "clients (IORELAY_SECRET_FILE=PATH). `iorelay run` makes one per job itself."
        ),
    )
    p.add_argument("path", type=Path, help="the file to create")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        print(create_credential(args.path))
    except OSError as e:
        print(f"iorelay credential: {args.path}: {e.strerror}", file=sys.stderr)
        return 1
    return 0
