"""Large directories through the interposer (issue 45, finding 3): a listing streams page by page,
so concurrent listings of a 100,000-entry directory all succeed, each with bounded memory, and
telldir/seekdir/rewinddir name the right entries across the daemon's pages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DAEMON_BINARIES, SUBPROCESS_TIMEOUT_S, require_built

from iorelay.launch.local import LocalDaemons

pytestmark = pytest.mark.needs_build()

BIG_DIR_ENTRIES = 100_000
CONCURRENT_LISTINGS = 8
MAX_GROWTH_KIB = 16 * 1024
PAGE_ENTRIES = 4096  # kReaddirPageEntries (src/proto/wire.h)

# Counts the entries of argv[1] through os.scandir (opendir and readdir, as os.listdir, which
# failed with EAGAIN when a call inside the listing left its errno; but keeping no list, so the
# growth is the interposer's) and prints the count and how much the process's peak RSS grew
# meanwhile, in KiB.
LISTER = """
import os, sys
def peak_kib():
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith('VmHWM:'))
before = peak_kib()
count = sum(1 for _ in os.scandir(sys.argv[1]))
print(count, peak_kib() - before)
"""

# Walks argv[1] with the interposed opendir/readdir/telldir/seekdir/rewinddir (and scandir and
# nftw) through ctypes and prints what each step found, one line each, for the test to compare.
SEEKER = r"""
import ctypes, os, sys
class Dirent(ctypes.Structure):
    _fields_ = [("d_ino", ctypes.c_uint64), ("d_off", ctypes.c_int64),
                ("d_reclen", ctypes.c_ushort), ("d_type", ctypes.c_ubyte),
                ("d_name", ctypes.c_char * 256)]
libc = ctypes.CDLL(None, use_errno=True)  # the global scope: the interposer's names first
libc.opendir.restype = ctypes.c_void_p
libc.opendir.argtypes = [ctypes.c_char_p]
libc.readdir.restype = ctypes.POINTER(Dirent)
libc.readdir.argtypes = [ctypes.c_void_p]
libc.telldir.restype = ctypes.c_long
libc.telldir.argtypes = [ctypes.c_void_p]
libc.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
libc.rewinddir.argtypes = [ctypes.c_void_p]
libc.closedir.argtypes = [ctypes.c_void_p]
def read(d):
    ctypes.set_errno(1234)  # a successful readdir leaves errno alone
    e = libc.readdir(d)
    assert ctypes.get_errno() == 1234, ctypes.get_errno()
    return (e.contents.d_name.decode(), e.contents.d_off) if e else (None, None)
d = libc.opendir(sys.argv[1].encode())
assert d, os.strerror(ctypes.get_errno())
order, positions = [], []
while True:
    positions.append(libc.telldir(d))
    name, off = read(d)
    if name is None:
        break
    order.append(name)
    assert off == libc.telldir(d), (off, libc.telldir(d))  # d_off: the position after it
print("order", " ".join(order))
for i in [int(a) for a in sys.argv[2:]]:  # forwards and back across pages
    libc.seekdir(d, positions[i])
    print("seek", i, read(d)[0])
libc.rewinddir(d)
print("rewound", read(d)[0])
# scandir and nftw list through the same streams; scandir's copies are as long as their names.
namelist = ctypes.POINTER(ctypes.c_void_p)()
n = libc.scandir(sys.argv[1].encode(), ctypes.byref(namelist), None, None)
names = {ctypes.string_at(namelist[i] + Dirent.d_name.offset).decode() for i in range(n)}
print("scandir", n, names == set(order))
visited = []
Visit = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int,
                         ctypes.c_void_p)
walk = Visit(lambda path, st, kind, ftw: visited.append(path) or 0)
print("nftw", libc.nftw(sys.argv[1].encode(), walk, 4, 1), len(visited))  # 1: FTW_PHYS
open(os.environ["BACKING_DIR"] + "/added-after-open", "w").close()
libc.rewinddir(d)
seen = set()
while (name := read(d)[0]) is not None:
    seen.add(name)
print("added seen after rewind", "added-after-open" in seen)
libc.closedir(d)
"""


def fill(directory: Path, count: int) -> None:
    """`count` empty files made directly in the daemon's backing root, not through the relay."""
    directory.mkdir()
    for i in range(count):
        os.close(os.open(directory / f"entry-{i:06d}", os.O_CREAT | os.O_WRONLY, 0o644))


@pytest.fixture
def daemon_on_tmpfs() -> Iterator[LocalDaemons]:
    """One daemon whose export root is on /dev/shm: 100,000 creates take ~1.5 s there where a
    disk busy with other work took up to a minute."""
    require_built(*DAEMON_BINARIES)
    base = Path(tempfile.mkdtemp(prefix="iorelay-test-", dir="/dev/shm"))
    try:
        (base / "root").mkdir()
        with LocalDaemons(1, base / "root", str(base / "fwd"), base / "work") as d:
            yield d
        assert d.exit_codes == [0], f"the daemon exited with {d.exit_codes}\n{d.logs()}"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_concurrent_listings_of_a_huge_directory_succeed_in_bounded_memory(
    daemon_on_tmpfs: LocalDaemons,
):
    d = daemon_on_tmpfs
    fill(d.root_dir / "big", BIG_DIR_ENTRIES)
    env = {**os.environ, **d.env()}
    started = time.monotonic()
    listers = [
        subprocess.Popen(
            [sys.executable, "-c", LISTER, f"{d.prefix}/big"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(CONCURRENT_LISTINGS)
    ]
    try:
        results = [p.communicate(timeout=SUBPROCESS_TIMEOUT_S) for p in listers]
    finally:
        for p in listers:  # a hung one fails the test without outliving it
            p.kill()
            p.wait()
    elapsed = time.monotonic() - started
    for p, (out, err) in zip(listers, results, strict=True):
        assert p.returncode == 0, err
        count, growth_kib = map(int, out.split())
        assert count == BIG_DIR_ENTRIES
        assert growth_kib <= MAX_GROWTH_KIB, f"peak RSS grew {growth_kib} KiB in one listing"
    print(f"{CONCURRENT_LISTINGS} listings in {elapsed:.1f} s, peak RSS growth (KiB):",
          [int(out.split()[1]) for out, _ in results])  # fmt: skip


def test_telldir_seekdir_and_rewinddir_across_pages(daemon_on_tmpfs: LocalDaemons):
    d = daemon_on_tmpfs
    backing = d.root_dir / "three-pages"
    fill(backing, 2 * PAGE_ENTRIES + 100)  # with "." and "..": two full pages and a short one
    total = 2 * PAGE_ENTRIES + 102
    picks = [0, PAGE_ENTRIES - 1, PAGE_ENTRIES, PAGE_ENTRIES + 1, 2 * PAGE_ENTRIES, total - 1]
    picks += [3, 2 * PAGE_ENTRIES + 5, PAGE_ENTRIES - 2]  # back to the first, on to the last
    out = subprocess.run(
        [sys.executable, "-c", SEEKER, f"{d.prefix}/three-pages", *map(str, picks)],
        env={**os.environ, **d.env(), "BACKING_DIR": str(backing)},
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    order = lines[0].split()[1:]
    assert len(order) == total
    assert set(order) == {".", "..", *(f"entry-{i:06d}" for i in range(total - 2))}
    assert lines[1 : 1 + len(picks)] == [f"seek {i} {order[i]}" for i in picks]
    assert lines[1 + len(picks)] == f"rewound {order[0]}"
    assert lines[2 + len(picks)] == f"scandir {total} True"
    assert lines[3 + len(picks)] == f"nftw 0 {total - 1}"  # the directory, not "." and ".."
    assert lines[4 + len(picks)] == "added seen after rewind True"
