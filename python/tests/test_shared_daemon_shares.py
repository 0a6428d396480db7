"""Jobs sharing one iorelayd: a job at any of its shares (open files, locks, connections, data in
flight) gets the error or the back-pressure while another job works normally at the same time;
release drains a job that keeps writing and leaves nothing of it in the scheduler; a job's
counters are its own."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, DaemonFactory
from shared_jobs import WRITER, SharedDaemon, start_shared

from iorelay import ionode


@pytest.fixture
def shared(daemon_factory: DaemonFactory, disk_tmp: Path) -> SharedDaemon:
    return start_shared(daemon_factory, disk_tmp)


def held_by(shared: SharedDaemon, job: str, key: str, want: int, timeout_s: float = 5.0) -> dict:
    """The job's listing once its `key` ("open_files", "locks", ...) is `want` (or at timeout)."""
    deadline = time.monotonic() + timeout_s
    while True:
        listed = {j["name"]: j for j in ionode.jobs(shared.address, admin_secret_file=shared.admin)}
        if listed[job][key] == want or time.monotonic() > deadline:
            return listed[job]
        time.sleep(0.05)


# Opens files under argv[1] until refused, prints how many it got and the errno, then holds them
# (and its connection) until its standard input closes.
HOLDER = r"""
import errno, os, sys
fds = []
err = "none"
for i in range(int(sys.argv[2])):
    try:
        fds.append(os.open(f"{sys.argv[1]}/f{i}", os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError as e:
        err = errno.errorcode[e.errno]
        break
print(len(fds), err, flush=True)
sys.stdin.read()
"""


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_a_job_at_its_shares_leaves_the_other_job_unhindered(shared: SharedDaemon) -> None:
    _, key_a, fwd_a = shared.admit("greedy", max_open_files=5, max_connections=1)
    _, key_b, fwd_b = shared.admit("other")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, fwd_a, "50"],
        env=shared.env(key_a, [fwd_a]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    with holder:
        assert holder.stdout is not None
        assert holder.stdout.readline().split() == ["5", "EMFILE"]  # its share of open files
        # Its share of connections is held: another connection of the job is refused ...
        r = shared.ctl(key_a, "ping", shared.address)
        assert r.returncode == ionode.EXIT_REFUSED, r.stderr
        # ... while the other job connects and opens files as it likes.
        assert shared.ctl(key_b, "ping", shared.address).returncode == 0
        got = shared.probe(key_b, [fwd_b], *[f"write:{fwd_b}/g{i}:x" for i in range(8)])
        assert set(got.values()) == {"x"}, got
        holder.communicate(input="", timeout=SUBPROCESS_TIMEOUT_S)
    greedy = held_by(shared, "greedy", "open_files", 0)
    assert greedy["shares"]["max_open_files"] == 5
    assert greedy["open_files"] == 0 and greedy["connections"] == 0  # given back at its end


# Takes write locks on one byte in two of FILE (argv[1]), argv[2] of them at most, apart so that
# none merges, until refused; prints how many it got and the errno, then holds them until its
# standard input closes.
LOCKER = r"""
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
n, err = 0, "none"
for i in range(int(sys.argv[2])):
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 2 * i)
        n += 1
    except OSError as e:
        err = errno.errorcode[e.errno]
        break
print(n, err, flush=True)
sys.stdin.read()
"""


def start_locker(shared: SharedDaemon, key: Path, fwd: str, path: str, n: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", LOCKER, path, str(n)],
        env=shared.env(key, [fwd]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_a_job_at_its_lock_share_gets_enolck_while_the_other_locks(shared: SharedDaemon) -> None:
    _, key_a, fwd_a = shared.admit("greedy", max_locks=5)
    _, key_b, fwd_b = shared.admit("other")
    greedy = start_locker(shared, key_a, fwd_a, f"{fwd_a}/locked", 50)
    with greedy:
        assert greedy.stdout is not None
        assert greedy.stdout.readline().split() == ["5", "ENOLCK"]  # its share of the lock table
        # A second process (session) of the same job: the share is the job's, not the session's.
        second = start_locker(shared, key_a, fwd_a, f"{fwd_a}/other", 5)
        with second:
            assert second.stdout is not None
            assert second.stdout.readline().split() == ["0", "ENOLCK"]
            second.communicate(input="", timeout=SUBPROCESS_TIMEOUT_S)
        # Meanwhile the other job locks as it likes.
        other = start_locker(shared, key_b, fwd_b, f"{fwd_b}/locked", 50)
        with other:
            assert other.stdout is not None
            assert other.stdout.readline().split() == ["50", "none"]
            assert held_by(shared, "other", "locks", 50)["locks"] == 50
            other.communicate(input="", timeout=SUBPROCESS_TIMEOUT_S)
        listed = held_by(shared, "greedy", "locks", 5)
        assert listed["locks"] == 5 and listed["shares"]["max_locks"] == 5
        greedy.communicate(input="", timeout=SUBPROCESS_TIMEOUT_S)
    assert held_by(shared, "greedy", "locks", 0)["locks"] == 0  # released with its session
    assert held_by(shared, "other", "locks", 0)["locks"] == 0
    default = held_by(shared, "other", "locks", 0)["shares"]["max_locks"]
    assert default == 2**19  # half of the daemon's table


# Writes CHUNK-byte blocks from 8 threads, a file each, until its standard input closes.
HOG = r"""
import os, sys, threading
chunk = int(sys.argv[2])
fds = [os.open(f"{sys.argv[1]}{t}", os.O_WRONLY | os.O_CREAT, 0o600) for t in range(8)]
stop = threading.Event()
def loop(fd):
    data = b"h" * chunk
    while not stop.is_set():
        os.pwrite(fd, data, 0)
threads = [threading.Thread(target=loop, args=(fd,)) for fd in fds]
for th in threads:
    th.start()
print("ready", flush=True)
sys.stdin.read()
stop.set()
for th in threads:
    th.join()
"""

# Writes 4 KiB 20 times, one after the other; prints the slowest and the total time (s).
TIMED = r"""
import json, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
took = []
for i in range(20):
    t = time.monotonic()
    os.pwrite(fd, b"b" * 4096, 4096 * i)
    took.append(time.monotonic() - t)
print(json.dumps({"slowest": max(took), "total": sum(took)}))
"""


# Over a socket the hog's writes carry their data; over shared memory, 256 KiB goes through a
# pipe beside the frame (piped writes): both are held at the share.
@pytest.mark.parametrize("shm", ["off", "on"])
@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_a_job_at_its_inflight_share_is_held_back_while_the_other_writes(
    daemon_factory: DaemonFactory, disk_tmp: Path, shm: str
) -> None:
    # Each backend call takes 20 ms, two at a time: the hog's writes would pile up in flight.
    shared = start_shared(daemon_factory, disk_tmp, "--delay-us", "20000", "--workers", "2")
    share, chunk = 1 << 20, 256 << 10
    _, key_a, fwd_a = shared.admit("hog", max_inflight_bytes=share)
    root_b, key_b, fwd_b = shared.admit("other")
    hog = subprocess.Popen(
        [sys.executable, "-c", HOG, f"{fwd_a}/h", str(chunk)],
        env={**shared.env(key_a, [fwd_a]), "IORELAY_SHM": shm},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    with hog:
        assert hog.stdout is not None and hog.stdout.readline().strip() == "ready"
        time.sleep(0.3)  # 8 x 256 KiB wanted in flight, 1 MiB let in
        r = subprocess.run(
            [sys.executable, "-c", TIMED, f"{fwd_b}/b"],
            env=shared.env(key_b, [fwd_b]),
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT_S,
        )
        stats = shared.stats()
        hog.communicate(input="", timeout=SUBPROCESS_TIMEOUT_S)
    assert r.returncode == 0, r.stderr
    timed = json.loads(r.stdout)
    # The other job's writes wait for a backend call or two of the hog's at most (20 ms each):
    # well under a second each (seconds if it queued behind 2 MiB of the hog's in 256 KiB calls).
    assert timed["slowest"] < 1.0, timed
    assert (root_b / "b").stat().st_size == 20 * 4096
    hog_stats, other_stats = stats["apps"]["hog"], stats["apps"]["other"]
    assert stats["connections_paused_app_inflight_limit"] > 0  # the hog was held back ...
    assert share <= hog_stats["inflight_bytes_peak"] <= share + chunk, hog_stats  # ... at its share
    assert other_stats["paused_connections"] == 0
    assert other_stats["inflight_bytes_peak"] <= 16384, other_stats  # a write or two: far below


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_release_drains_a_writing_job_then_leaves_nothing_of_it(
    daemon_factory: DaemonFactory, disk_tmp: Path
) -> None:
    # Each backend call takes 20 ms, one at a time: writes queue in the scheduler (wfq, where
    # the job has a weight and a queue of its own).
    shared = start_shared(
        daemon_factory, disk_tmp, "--delay-us", "20000", "--workers", "1", "--scheduler", "wfq"
    )
    root, key, fwd = shared.admit("moving", weight=3)
    app = next(
        j["app"]
        for j in ionode.jobs(shared.address, admin_secret_file=shared.admin)
        if j["name"] == "moving"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, f"{fwd}/log"],  # log0 .. log7
        env=shared.env(key, [fwd]),
        stdout=subprocess.PIPE,
        text=True,
    )
    with writer:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # 8 writers, each with a write queued behind the slow backend
        before = shared.stats()
        start = time.monotonic()
        ionode.release(shared.address, "moving", admin_secret_file=shared.admin)
        took = time.monotonic() - start
        out, _ = writer.communicate(timeout=SUBPROCESS_TIMEOUT_S)
    # It kept writing: release stopped reading its requests, served what it had read, and closed
    # its connections once each was answered (seconds before the 30 s timeout).
    assert took < 5.0, took
    written = json.loads(out)["written"]
    # Every write the job was told had succeeded is in its file, and nothing else.
    for t in range(8):
        lines = (root / f"log{t}").read_text().splitlines()
        assert lines == [f"{t}:{n}" for n in range(written[t])], (t, written[t], len(lines))
    assert sum(written) > 8
    after = shared.stats()
    assert after["fenced_writes"] == 0  # nothing dropped
    assert after["apps"]["moving"]["departed"] is True
    assert after["apps"]["moving"]["bytes_written"] == sum(
        (root / f"log{t}").stat().st_size for t in range(8)
    )
    # No queue or weight of it stays in the scheduler.
    assert app in before["scheduler_apps"] and before["scheduler"]["weights"][str(app)] == 3
    assert app not in after["scheduler_apps"]
    assert str(app) not in after["scheduler"]["weights"]
    assert after["scheduler_apps_removed"] == 1
    assert "moving" not in [
        j["name"] for j in ionode.jobs(shared.address, admin_secret_file=shared.admin)
    ]
    assert shared.ctl(key, "ping", shared.address).returncode == ionode.EXIT_REFUSED


# Opens FILE (one slow backend call), says so, then writes one line (another).
SLOW_WRITE = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
print("opened", flush=True)
try:
    os.write(fd, b"late\n")
    print("written", flush=True)
except OSError as e:
    print(e.strerror, flush=True)
"""


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_release_that_does_not_drain_in_time_revokes_instead(
    daemon_factory: DaemonFactory, disk_tmp: Path
) -> None:
    # A backend call takes 1 s; the release waits 300 ms.
    shared = start_shared(
        daemon_factory, disk_tmp, "--delay-us", "1000000", "--release-timeout-ms", "300"
    )
    _, key, fwd = shared.admit("stuck")
    writer = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITE, f"{fwd}/f"],
        env=shared.env(key, [fwd]),
        stdout=subprocess.PIPE,
        text=True,
    )
    with writer:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "opened"
        time.sleep(0.2)  # its write is in the backend's hands for the next 800 ms
        start = time.monotonic()
        with pytest.raises(ionode.IonodeError, match="did not drain within 300 ms: revoked"):
            ionode.release(shared.address, "stuck", admin_secret_file=shared.admin)
        took = time.monotonic() - start
        writer.communicate(timeout=SUBPROCESS_TIMEOUT_S)
    assert 0.25 <= took < 0.8, took
    assert "stuck" not in [
        j["name"] for j in ionode.jobs(shared.address, admin_secret_file=shared.admin)
    ]
    assert shared.ctl(key, "ping", shared.address).returncode == ionode.EXIT_REFUSED
    assert shared.stats()["apps"]["stuck"]["departed"] is True


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_a_job_sees_its_own_counters_only(shared: SharedDaemon) -> None:
    _, key_a, fwd_a = shared.admit("jobA")
    _, key_b, fwd_b = shared.admit("jobB")
    shared.probe(key_a, [fwd_a], f"write:{fwd_a}/a:{'a' * 100}")
    shared.probe(key_b, [fwd_b], f"write:{fwd_b}/b:{'b' * 7000}")

    def stats_of(key: Path) -> dict:
        r = shared.ctl(key, "stats", shared.address)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    seen_by_a = stats_of(key_a)
    assert seen_by_a["scope"] == "job" and seen_by_a["job"] == "jobA"
    assert list(seen_by_a["apps"]) == ["jobA"]
    assert seen_by_a["total"]["bytes_written"] == 100
    assert seen_by_a["total"]["bytes_read"] == 100  # (the probe reads it back)
    for daemon_wide in ("files", "scheduler", "backend_calls", "connections_accepted"):
        assert daemon_wide not in seen_by_a, daemon_wide
    assert list(stats_of(key_b)["apps"]) == ["jobB"]
    # The admin, and the operator's credential given at start, see every job.
    for key in (shared.admin, shared.d.credential_file):
        everything = stats_of(key)
        assert {"jobA", "jobB"} <= set(everything["apps"]), everything["apps"]
        assert everything["total"]["bytes_written"] >= 7100 and "files" in everything
