"""A Darshan log as the advisor's input, read without trusting the log: its header is checked
here (version, magic number, and whether the file holds every region the header places), then a
copy is parsed by pydarshan in a child process with a timeout (darshan_child.py), because on
damaged logs pydarshan can hang, abort the interpreter when closing, crash, or read zero records
without an error. Every failure is an AdviceError with one line saying what is wrong."""

from __future__ import annotations

import json
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from iorelay.advise.observed import Observed, ObservedError
from iorelay.advise.service import AdviceError

MAGIC = 6567223  # DARSHAN_MAGIC_NR
# darshan_header: version string (8 bytes), magic number (int64), compression type, partial
# flag, then the name map and DARSHAN_MAX_MODS (16) module maps, each (offset, length) as uint64.
MAPS_OFFSET = 24
MAPS = 1 + 16
HEADER_BYTES = MAPS_OFFSET + 16 * MAPS


def regions_end(header: bytes) -> int:
    """The byte just past the last region (name map, module data) the header places; ValueError
    naming what is wrong when the header is not a Darshan 3 header."""
    if len(header) < HEADER_BYTES:
        raise ValueError(f"it is {len(header)} bytes long, shorter than a Darshan log's header")
    version = header[:8].split(b"\0")[0].decode("ascii", "replace")
    for endian in "<>":
        (magic,) = struct.unpack(endian + "q", header[8:16])
        if magic == MAGIC:
            break
    else:
        raise ValueError("it is not a Darshan log (no Darshan magic number in its header)")
    if not version.startswith("3."):
        raise ValueError(f"its format version {version!r} is not one pydarshan reads (3.x)")
    maps = struct.unpack(f"{endian}{2 * MAPS}Q", header[MAPS_OFFSET:HEADER_BYTES])
    return max(maps[i] + maps[i + 1] for i in range(0, 2 * MAPS, 2))


def parse_in_child(copy: Path, timeout_s: float) -> dict:
    """darshan_child's summary of `copy`; AdviceError on a timeout, a crash or a refusal."""
    argv = [sys.executable, "-m", "iorelay.advise.darshan_child", str(copy)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise AdviceError(
            f"the Darshan parser did not finish within {timeout_s:g} s (pydarshan can hang on a "
            "damaged log)"
        ) from None
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        raise AdviceError(f"the Darshan parser crashed ({name}): the log is damaged")
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise AdviceError(f"pydarshan cannot read the log: {reason}")
    return json.loads(done.stdout)


def darshan_observed(path: str, timeout_s: float = 60.0) -> Observed:
    """The pattern a Darshan log records, with its evidence; AdviceError when the log is
    unreadable, truncated, of another version, without POSIX or MPI-IO records, or holds no
    data requests."""
    from iorelay.advise.from_darshan import darshan_pattern

    log = Path(path)
    try:
        size = log.stat().st_size
        with log.open("rb") as f:
            header = f.read(HEADER_BYTES)
    except OSError as e:
        raise AdviceError(f"cannot read the Darshan log: {e}") from None
    try:
        end = regions_end(header)
    except ValueError as e:
        raise AdviceError(f"{path} is not a Darshan log pydarshan reads: {e}") from None
    if end > size:
        raise AdviceError(
            f"{path} is truncated: its header places data up to byte {end}, and it has {size} bytes"
        )
    with tempfile.TemporaryDirectory(prefix="iorelay-darshan-") as tmp:
        copy = Path(tmp) / "log.darshan"
        try:
            shutil.copyfile(log, copy)
        except OSError as e:
            raise AdviceError(f"cannot copy the Darshan log: {e}") from None
        summary = parse_in_child(copy, timeout_s)
    try:
        return darshan_pattern(summary)
    except ObservedError as e:
        raise AdviceError(f"{path}: {e}") from None
