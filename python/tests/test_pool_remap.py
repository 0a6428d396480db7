"""Re-mapping a running job (IORELAY_MAP_FILE): fio with crc32c verification moves from 1 to 2
to 1 I/O nodes of a live pool while it runs, as the arbiter re-decides on other jobs' departure
and arrival; it verifies, the daemons' byte counts add up to fio's, and the daemon it left gets
no request of it from then on."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S
from pool_process import PoolProcess

from iorelay import ionode
from iorelay.pool import wire
from iorelay.pool.job_map import placed_daemon
from iorelay.stats import query_stats

pytestmark = pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")

FIO_JOB = """\
[global]
ioengine=psync
filename={files}
size=48m
bs=64k
rate=12m
verify=crc32c
verify_fatal=1
do_verify=1

[w]
rw=write
"""

# Ops that are not the job's data or path requests (the pool's and the test's own).
NOT_THE_JOBS = {"stats", "ping", "admit", "release", "revoke", "renew", "jobs"}


def job_ops(pool: PoolProcess, host: str) -> dict[str, int]:
    by_op = query_stats(pool.status()["hosts"][host], pool.admin)["total"]["by_op"]
    return {op: n for op, n in by_op.items() if op not in NOT_THE_JOBS}


def writes(pool: PoolProcess, host: str) -> int:
    return sum(n for op, n in job_ops(pool, host).items() if "write" in op)


@pytest.fixture
def pool(disk_tmp: Path) -> Iterator[PoolProcess]:
    if subprocess.run(["fio", "--version"], capture_output=True).returncode != 0:
        pytest.skip("fio is not installed")
    p = PoolProcess(disk_tmp, 2)
    yield p
    assert p.stop() == 0, (disk_tmp / "pool.log").read_text()


@pytest.mark.parametrize(
    "buffering", [[], ["--write-behind"]], ids=["write-through", "write-behind"]
)
def test_fio_verifies_moved_from_one_to_two_to_one_ionodes(
    pool: PoolProcess, disk_tmp: Path, buffering: list[str]
) -> None:
    """With write-behind, the client holds ranges of fio's writes when its files move: they are
    flushed where the file was before it moves."""
    key_b, root_b = pool.job("B")
    key_c, root_c = pool.job("C")
    key_a, root_a = pool.job("A")
    # Two files placed on each daemon when the job has two.
    names = [f"{root_a}/f{i}" for i in range(64)]
    files = [n for d in (0, 1) for n in [m for m in names if placed_daemon(m, 2) == d][:2]]
    # B takes io0; A (worth 450 on 2, 300 on 1) gets io1: 300 + 300 beats 450 + 100.
    assert pool.join("B", "0=100,1=300", key_b, root_b)["hosts"] == ["io0"]
    job = disk_tmp / "job.fio"
    job.write_text(FIO_JOB.format(files=":".join(files)))
    argv = [sys.executable, "-m", "iorelay", "run", "--pool", str(pool.dir), "--job", "A",
            "--secret-file", str(key_a), "--job-root", str(root_a), "--values",
            "0=100,1=300,2=450", *buffering, "--", "fio", "--output-format=json",
            str(job)]  # fmt: skip
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as fio:
        deadline = time.monotonic() + SUBPROCESS_TIMEOUT_S
        while writes(pool, "io1") < 8:  # fio writes through io1
            assert fio.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        assert job_ops(pool, "io0") == {}, "A on io0 before it was given it"
        grown = wire.request(pool.dir, {"op": "leave", "job": "B"})["record"]
        assert grown["hosts"] == {"A": ["io1", "io0"]}  # 1 -> 2
        while writes(pool, "io0") < 8:  # its io0 files moved there
            assert fio.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        shrunk = pool.join("C", "0=100,1=300", key_c, root_c)["record"]
        moved_at = time.monotonic()
        assert shrunk["hosts"] == {"A": ["io1"], "C": ["io0"]}  # 2 -> 1, io0 released
        assert {"action": "release", "job": "A", "host": "io0"} in shrunk["actions"]
        time.sleep(max(0.0, moved_at + 1.0 - time.monotonic()))
        at_1s = job_ops(pool, "io0")
        assert fio.poll() is None, "fio ended before the moves were done"
        out, err = fio.communicate(timeout=SUBPROCESS_TIMEOUT_S)
    assert fio.returncode == 0, out[-3000:] + err[-3000:]
    assert "does not answer" not in err, err  # planned moves, no daemon taken for dead
    result = json.loads(out[out.index("{") :])["jobs"][0]
    assert result["error"] == 0
    written, read = result["write"]["io_bytes"], result["read"]["io_bytes"]
    assert written == 48 << 20 and read == written  # every block read back and verified
    after = job_ops(pool, "io0")
    assert after == at_1s, "io0 got requests of A more than 1 s after A left it"
    totals = [query_stats(pool.status()["hosts"][h], pool.admin)["total"] for h in ("io0", "io1")]
    assert sum(t["bytes_written"] for t in totals) == written, totals
    assert sum(t["bytes_read"] for t in totals) == read, totals
    assert all(t["bytes_written"] > 0 for t in totals)  # both carried some of it


# Under job A: writes its file, takes a write lock on it, then (a line on stdin) writes it again,
# which moves it when the map changed, and (another line) closes it, which drops the lock.
LOCKER = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
os.pwrite(fd, b"x" * 65536, 0)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
sys.stdin.readline()
os.pwrite(fd, b"y" * 65536, 0)
print("written", flush=True)
sys.stdin.readline()
os.close(fd)
"""
# Under job A, another process: tries the lock once.
TRY_LOCK = r"""
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("got")
except OSError as e:
    print(errno.errorcode[e.errno])
"""


def test_a_lock_held_across_a_move_still_excludes_another_process(
    pool: PoolProcess, disk_tmp: Path
) -> None:
    key_b, root_b = pool.job("B")
    key_a, root_a = pool.job("A")
    path = next(f"{root_a}/f{i}" for i in range(64) if placed_daemon(f"{root_a}/f{i}", 2) == 0)
    assert pool.join("B", "0=100,1=300", key_b, root_b)["hosts"] == ["io0"]
    reply = pool.join("A", "0=100,1=300,2=450", key_a, root_a)
    assert reply["hosts"] == ["io1"]  # its lock daemon from now on
    env = pool.env(reply, key_a, [str(root_a)])

    def try_lock() -> str:
        r = subprocess.run([sys.executable, "-c", TRY_LOCK, path], env=env, capture_output=True,
                           text=True, timeout=SUBPROCESS_TIMEOUT_S)  # fmt: skip
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    with subprocess.Popen([sys.executable, "-c", LOCKER, path], env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as locker:  # fmt: skip
        assert locker.stdin is not None and locker.stdout is not None
        assert locker.stdout.readline().strip() == "locked"
        assert writes(pool, "io0") == 0
        grown = wire.request(pool.dir, {"op": "leave", "job": "B"})["record"]
        assert grown["hosts"] == {"A": ["io1", "io0"]}
        time.sleep(0.2)  # past the client's re-read period
        locker.stdin.write("\n")
        locker.stdin.flush()
        assert locker.stdout.readline().strip() == "written"
        assert writes(pool, "io0") >= 1  # the file moved to io0 ...
        assert try_lock() in ("EAGAIN", "EACCES")  # ... and its lock still excludes
        locker.communicate("\n", timeout=SUBPROCESS_TIMEOUT_S)
    assert locker.returncode == 0
    assert try_lock() == "got"  # the close released it


# Under job A: opens its file O_APPEND (the daemon keeps the offset) and appends a line, then
# one more per line on stdin, printing "ok" or the error; "close" closes it.
APPENDER = r"""
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
os.write(fd, b"line 0\n")
print("opened", flush=True)
for i, cmd in enumerate(sys.stdin, start=1):
    if cmd.strip() == "close":
        os.close(fd)
        print("closed", flush=True)
        continue
    try:
        os.write(fd, b"line %d\n" % i)
        print("ok", flush=True)
    except OSError as e:
        print(errno.errorcode[e.errno], flush=True)
"""


def test_an_append_file_stays_on_its_released_daemon_until_closed(
    pool: PoolProcess, disk_tmp: Path
) -> None:
    """The daemon keeps an O_APPEND file's offset, so its client cannot move it: the release of
    a shrinking job waits for it to close (within the daemon's release timeout), and the
    controller does not wait with it."""
    key_b, root_b = pool.job("B")
    key_c, root_c = pool.job("C")
    key_a, root_a = pool.job("A")
    path = next(f"{root_a}/f{i}" for i in range(64) if placed_daemon(f"{root_a}/f{i}", 2) == 0)
    assert pool.join("B", "0=100,1=300", key_b, root_b)["hosts"] == ["io0"]
    reply = pool.join("A", "0=100,1=300,2=450", key_a, root_a)
    assert reply["hosts"] == ["io1"]
    assert wire.request(pool.dir, {"op": "leave", "job": "B"})["record"]["hosts"] == {
        "A": ["io1", "io0"]
    }
    io0 = pool.status()["hosts"]["io0"]

    def on_io0() -> list[str]:
        return [j["name"] for j in ionode.jobs(io0, admin_secret_file=pool.admin)]

    env = pool.env(reply, key_a, [str(root_a)])
    with subprocess.Popen([sys.executable, "-c", APPENDER, path], env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as appender:  # fmt: skip
        assert appender.stdin is not None and appender.stdout is not None
        assert appender.stdout.readline().strip() == "opened"
        assert writes(pool, "io0") == 1  # on io0, the daemon the map gave it
        started = time.monotonic()
        shrunk = pool.join("C", "0=100,1=300", key_c, root_c)["record"]
        assert time.monotonic() - started < 5  # the controller did not wait for the release
        assert shrunk["hosts"] == {"A": ["io1"], "C": ["io0"]}
        time.sleep(0.5)  # the release is under way; the client has read the new map
        for _ in range(3):
            appender.stdin.write("\n")
            appender.stdin.flush()
            assert appender.stdout.readline().strip() == "ok"  # before: EIO
        assert writes(pool, "io0") == 4  # still there: it stays until closed
        assert "A" in on_io0()  # released only once it closes
        appender.stdin.write("close\n")
        appender.stdin.flush()
        assert appender.stdout.readline().strip() == "closed"
        deadline = time.monotonic() + 5
        while "A" in on_io0():
            assert time.monotonic() < deadline, "A's release did not end after its close"
            time.sleep(0.05)
        appender.communicate(timeout=SUBPROCESS_TIMEOUT_S)
    assert Path(path).read_text() == "".join(f"line {i}\n" for i in range(4))
    assert "error" not in pool.status()["decisions"][-1]
