"""Write-behind and read-ahead (IORELAY_WRITE_BEHIND, IORELAY_READ_AHEAD): programs under the
interposer see their own writes in order, errors reach fsync and close, processes that share a
file through record locks see each other's data, and the daemons really got fewer requests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S

from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

pytestmark = pytest.mark.needs_build()

ON = {"IORELAY_WRITE_BEHIND": "on", "IORELAY_READ_AHEAD": "on"}


def run_py(code: str, d: LocalDaemons, *args: str, extra: dict | None = None) -> str:
    env = {**os.environ, **d.env("unix"), **ON, **(extra or {})}
    p = subprocess.run([sys.executable, "-c", code, d.prefix, *args], env=env, text=True,
                       capture_output=True, timeout=SUBPROCESS_TIMEOUT_S)  # fmt: skip
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return p.stdout


def by_op(d: LocalDaemons) -> dict[str, int]:
    total: dict[str, int] = {}
    for addr in d.addresses():
        for op, n in query_stats(addr, d.credential_file)["total"]["by_op"].items():
            total[op] = total.get(op, 0) + n
    return total


# 3000 small writes (in order, overlapping, going back, past a hole, with write() at the held
# offset), each checked against a model by a pread and an fstat at random moments; the model is
# printed at the end (hex) for the test to compare with the file on disk.
ORDER = """
import os, random, sys
random.seed(7)
path = sys.argv[1] + "/order.bin"
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
model = bytearray()
def put(off, data):
    global model
    if len(model) < off + len(data):
        model += bytes(off + len(data) - len(model))
    model[off:off + len(data)] = data
pos = 0
for i in range(3000):
    data = bytes([i % 251]) * random.choice((1, 100, 512, 4096, 5000))
    r = random.random()
    if r < 0.6:
        off = pos
    elif r < 0.8:
        off = max(0, pos - random.randrange(0, 9000))
    else:
        off = pos + random.randrange(1, 70000)
    if r < 0.3:
        os.lseek(fd, off, os.SEEK_SET)
        assert os.write(fd, data) == len(data)
    else:
        assert os.pwrite(fd, data, off) == len(data)
    put(off, data)
    pos = off + len(data)
    if i % 97 == 0:
        k = random.randrange(0, len(model))
        assert os.pread(fd, 8192, k) == bytes(model[k:k + 8192]), i
        assert os.fstat(fd).st_size == len(model), i
    if i % 401 == 0:
        assert os.stat(path).st_size == len(model), i
os.close(fd)
print(model.hex())
"""


def test_write_behind_keeps_order_and_read_after_write(daemon_factory):
    d = daemon_factory(1)
    model = bytes.fromhex(run_py(ORDER, d).strip())
    assert (d.root_dir / "order.bin").read_bytes() == model
    ops = by_op(d)
    # Coalesced: far fewer write requests than the 3000 writes.
    assert 0 < ops.get("pwrite", 0) + ops.get("pwrite_ranges", 0) < 1500, ops


# One of RANKS processes writing its 8-byte elements of a shared file with a stride of RANKS
# elements (as HDF5's element-strided selections do, every write a range of its own), checking
# reads that overlap written elements and holes part way, then fsync; the holes are the other
# processes' elements.
STRIDED = """
import os, struct, sys
rank, ranks, n = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
fd = os.open(sys.argv[1] + "/strided.bin", os.O_RDWR | os.O_CREAT, 0o644)
def elem(i):
    return struct.pack("<q", (rank << 32) | i)
for i in range(n):
    os.pwrite(fd, elem(i), (i * ranks + rank) * 8)
    if i == n // 2:
        # Partly over element i - 1's tail, the others' holes (zeros, or their elements), and i.
        got = os.pread(fd, 8 * ranks + 4, ((i - 1) * ranks + rank) * 8 + 4)
        assert got[:4] == elem(i - 1)[4:] and got[-8:] == elem(i), got
os.fsync(fd)
os.close(fd)
"""


@pytest.mark.parametrize("transport", ["unix", "tcp"])  # (shared memory; sealed frames)
def test_strided_writes_go_out_as_few_ranged_requests(daemon_factory, transport: str):
    d = daemon_factory(1)
    ranks, n = 3, 3000
    env = {**os.environ, **d.env(transport), **ON}
    procs = [subprocess.Popen([sys.executable, "-c", STRIDED, d.prefix, str(r), str(ranks), str(n)],
                              env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for r in range(ranks)]  # fmt: skip
    outs = [p.communicate(timeout=SUBPROCESS_TIMEOUT_S) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    raw = (d.root_dir / "strided.bin").read_bytes()
    want = b"".join(((r << 32) | i).to_bytes(8, "little") for i in range(n) for r in range(ranks))
    assert raw == want
    ops = by_op(d)
    # 9000 writes: per process, the ranges up to the read, then those after it, at most 512
    # ranges a request (6 requests), and more where the flusher found ranges 0.2 s old (a
    # loaded machine); one at a time, they would be 9000.
    assert 0 < ops.get("pwrite_ranges", 0) + ops.get("pwrite", 0) <= 60, ops


# Writes 8 KiB, says "ready" and waits for a line (its daemon is killed meanwhile), then writes
# 4 KiB more to each of two files (buffered: the calls succeed), and reports what fsync of the
# first and close of the second return.
ERRORS = """
import os, sys
a = os.open(sys.argv[1] + "/a.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
b = os.open(sys.argv[1] + "/b.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(a, b"a" * 8192)
os.fsync(a)
print("ready", flush=True)
sys.stdin.readline()
if sys.argv[2] == "ranges":  # a range apart too: what a takes goes out as a pwrite_ranges
    os.pwrite(a, b"z" * 100, 1 << 20)
print("write", os.write(a, b"x" * 4096), os.write(b, b"y" * 4096), flush=True)
for what, call in (("fsync", lambda: os.fsync(a)), ("close", lambda: os.close(b))):
    try:
        call()
        print(what, 0)
    except OSError as e:
        print(what, e.errno)
"""


@pytest.mark.parametrize("held", ["range", "ranges"])
def test_write_behind_error_reaches_fsync_and_close(disk_tmp: Path, held: str):
    (disk_tmp / "root").mkdir()
    with LocalDaemons(1, disk_tmp / "root", str(disk_tmp / "fwd"), disk_tmp / "work") as d:
        env = {**os.environ, **d.env("unix"), **ON, "IORELAY_TIMEOUT_MS": "1000"}
        with subprocess.Popen([sys.executable, "-c", ERRORS, d.prefix, held], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as p:  # fmt: skip
            assert p.stdout.readline().strip() == "ready"
            os.kill(d.daemons[0].pid, signal.SIGKILL)
            out, err = p.communicate("go\n", timeout=SUBPROCESS_TIMEOUT_S)
        d.stop()
    # The writes were taken (the daemon is dead: write-through would have failed them), and
    # their failure reaches fsync and close as EIO.
    assert out.split("\n")[:3] == ["write 4096 4096", "fsync 5", "close 5"], out + err
    assert (disk_tmp / "root" / "a.bin").read_bytes() == b"a" * 8192


# One of two processes incrementing a counter in a shared file N times under a write lock on
# it, as ROMIO does for data sieving: lock, read, write, unlock. A write held past the unlock,
# or a read answered from before the lock, loses increments.
COUNTER = """
import fcntl, os, struct, sys
fd = os.open(sys.argv[1] + "/counter.bin", os.O_RDWR | os.O_CREAT, 0o644)
for _ in range(int(sys.argv[2])):
    fcntl.lockf(fd, fcntl.LOCK_EX, 8, 0)
    raw = os.pread(fd, 8, 0)
    n = struct.unpack("<q", raw)[0] if len(raw) == 8 else 0
    os.pwrite(fd, struct.pack("<q", n + 1), 0)
    fcntl.lockf(fd, fcntl.LOCK_UN, 8, 0)
os.close(fd)
"""

# A reader of the counter file opened read-only (read-ahead), under a read lock each time:
# prints the values it saw, which must never go down.
READER = """
import fcntl, os, struct, sys
fd = os.open(sys.argv[1] + "/counter.bin", os.O_RDONLY)
seen = []
for _ in range(int(sys.argv[2])):
    fcntl.lockf(fd, fcntl.LOCK_SH, 8, 0)
    raw = os.pread(fd, 8, 0)
    fcntl.lockf(fd, fcntl.LOCK_UN, 8, 0)
    seen.append(struct.unpack("<q", raw)[0] if len(raw) == 8 else 0)
print(" ".join(map(str, seen)))
"""


def test_processes_sharing_a_file_under_locks_see_each_other(daemon_factory):
    d = daemon_factory(2)
    (d.root_dir / "counter.bin").write_bytes(bytes(8))
    env = {**os.environ, **d.env("unix"), **ON}
    rounds = 60
    procs = [subprocess.Popen([sys.executable, "-c", code, d.prefix, str(rounds)], env=env,
                              text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for code in (COUNTER, COUNTER, READER)]  # fmt: skip
    outs = [p.communicate(timeout=SUBPROCESS_TIMEOUT_S) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert int.from_bytes((d.root_dir / "counter.bin").read_bytes(), "little") == 2 * rounds
    seen = [int(x) for x in outs[2][0].split()]
    assert seen == sorted(seen) and len(seen) == rounds, seen


# Reads a 1 MiB file opened read-only in 4 KiB pieces with read(), prints a checksum; then
# (after a line on stdin, meanwhile the test rewrites the file) reads 4 KiB at 0 again after
# taking a read lock, which must see the new bytes.
SEQUENTIAL = """
import fcntl, hashlib, os, sys
fd = os.open(sys.argv[1] + "/seq.bin", os.O_RDONLY)
h = hashlib.sha256()
while chunk := os.read(fd, 4096):
    h.update(chunk)
print(h.hexdigest(), flush=True)
sys.stdin.readline()
fcntl.lockf(fd, fcntl.LOCK_SH, 0, 0)
print(os.pread(fd, 4, 0).decode(), flush=True)
"""


def test_read_ahead_answers_sequential_reads_and_drops_at_a_lock(daemon_factory):
    import hashlib

    d = daemon_factory(1)
    data = os.urandom(1 << 20)
    (d.root_dir / "seq.bin").write_bytes(data)
    env = {**os.environ, **d.env("unix"), **ON}
    with subprocess.Popen([sys.executable, "-c", SEQUENTIAL, d.prefix], env=env, text=True,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as p:  # fmt: skip
        assert p.stdout.readline().strip() == hashlib.sha256(data).hexdigest()
        with open(d.root_dir / "seq.bin", "r+b") as f:
            f.write(b"NEW!")
        out, err = p.communicate("go\n", timeout=SUBPROCESS_TIMEOUT_S)
    assert p.returncode == 0, err
    assert out.strip() == "NEW!"
    # 257 reads of 4 KiB (the last at the end) took a 1 MiB window, an empty one at the end,
    # and the final pread.
    assert by_op(d).get("pread", 0) <= 8, by_op(d)
