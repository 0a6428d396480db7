"""Failover: with two I/O nodes, the files of a daemon that dies move to the survivor and the
positional requests it had not acknowledged are repeated there; appends get EIO."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, require_built

from iorelay import mpi, paths
from iorelay.explore import mpirun_argv
from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

pytestmark = pytest.mark.needs_build()

# Writes 64 blocks of 64 KiB with os.pwrite and os.write (the client holds the offset), and an
# O_APPEND file; after block 16 it says "ready" and waits for a line on stdin (the test kills
# the file's daemon meanwhile). Prints the append's outcome.
WRITER = """
import os, sys
fd = os.open(sys.argv[1] + "/data.bin", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
log = os.open(sys.argv[1] + "/log.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(log, b"before\\n")
block = lambda i: bytes([i % 251]) * 65536
for i in range(64):
    if i == 16:
        print("ready", flush=True)
        sys.stdin.readline()
    if i % 2:
        os.pwrite(fd, block(i), i * 65536)
    else:
        os.lseek(fd, i * 65536, os.SEEK_SET)
        os.write(fd, block(i))
os.fsync(fd)
os.close(fd)
try:
    os.write(log, b"after\\n")
    print("append ok")
except OSError as e:
    print("append", e.errno)
"""


def holder(d: LocalDaemons) -> int:
    """The index of the daemon that holds the job's open files."""
    for i, addr in enumerate(d.addresses()):
        if query_stats(addr, d.credential_file)["total"]["by_op"].get("open", 0) > 0:
            return i
    raise AssertionError("no daemon holds a file")


def test_killed_daemon_files_move_to_the_survivor(disk_tmp: Path):
    (disk_tmp / "root").mkdir()
    # Not the daemon_factory fixture: it insists on a clean exit, and one daemon is killed.
    with LocalDaemons(2, disk_tmp / "root", str(disk_tmp / "fwd"), disk_tmp / "work") as d:
        env = {**os.environ, **d.env(), "IORELAY_TIMEOUT_MS": "2000"}
        with subprocess.Popen([sys.executable, "-c", WRITER, d.prefix], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as p:  # fmt: skip
            assert p.stdout.readline().strip() == "ready"
            victim = holder(d)
            os.kill(d.daemons[victim].pid, signal.SIGKILL)
            killed_at = time.monotonic()
            out, err = p.communicate("go\n", timeout=SUBPROCESS_TIMEOUT_S)
            elapsed = time.monotonic() - killed_at
        survivor = 1 - victim
        total = query_stats(d.addresses()[survivor], d.credential_file)["total"]["by_op"]
        codes = d.stop()
    assert p.returncode == 0, err
    assert codes[victim] == -signal.SIGKILL
    assert f"daemon {victim}" in err and f"move to daemon {survivor}" in err, err
    assert out.strip() == "append 5", out  # EIO: the daemon held the append offset
    assert elapsed < 5.0
    data = (d.root_dir / "data.bin").read_bytes()
    assert data == b"".join(bytes([i % 251]) * 65536 for i in range(64))
    assert total.get("open", 0) >= 1 and total.get("pwrite", 0) >= 48, total


FIO_JOB = """\
[global]
ioengine=psync
directory={directory}
size=24m
bs=64k
rate=16m
verify=crc32c
verify_fatal=1
do_verify=1

[w]
rw=write
"""


@pytest.mark.parametrize("write_behind", ["off", "on"])
def test_fio_verifies_when_a_daemon_dies_mid_run(disk_tmp: Path, write_behind: str):
    """With write-behind on, the daemon dies with ranges of fio's 64 KiB writes held by the
    client or in flight: they go to the survivor, and fio's crc32c verify of every block passes
    (or fio fails: never a silent loss)."""
    require_built("iorelayd")
    (disk_tmp / "root").mkdir()
    with LocalDaemons(2, disk_tmp / "root", str(disk_tmp / "fwd"), disk_tmp / "work") as d:
        env = {**os.environ, **d.env(), "IORELAY_TIMEOUT_MS": "2000",
               "IORELAY_WRITE_BEHIND": write_behind}  # fmt: skip
        job = disk_tmp / "job.fio"
        job.write_text(FIO_JOB.format(directory=d.prefix))
        with subprocess.Popen(["fio", str(job)], env=env, text=True, cwd=disk_tmp,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:  # fmt: skip
            victim = None
            for _ in range(100):  # until fio has its file open (it lays it out first)
                time.sleep(0.1)
                with contextlib.suppress(AssertionError):
                    victim = holder(d)
                    break
            assert victim is not None and p.poll() is None
            time.sleep(0.3)
            os.kill(d.daemons[victim].pid, signal.SIGKILL)
            p.wait(timeout=SUBPROCESS_TIMEOUT_S)
            out, err = p.stdout.read(), p.stderr.read()
        d.stop()
    assert p.returncode == 0, out[-2000:] + err[-2000:]
    assert "move to daemon" in err, err


def test_mpi_bench_verifies_when_a_daemon_dies_mid_run(disk_tmp: Path):
    """iorelay-bench, 2 MPI ranks writing one 1D-strided shared file through 2 daemons, then
    reading it back word by word: the file's daemon is SIGKILLed during the write phase (its
    backend calls slowed to 5 ms so that the phase lasts), the ranks' writes move to the
    survivor, and every word reads back right."""
    require_built("iorelayd", "iorelay-bench")
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not installed")
    (disk_tmp / "root").mkdir()
    with LocalDaemons(2, disk_tmp / "root", str(disk_tmp / "fwd"), disk_tmp / "work",
                      extra_args=("--delay-us", "5000")) as d:  # fmt: skip
        relay_env = {k: v for k, v in d.env().items() if k != "LD_PRELOAD"}
        relay_env["IORELAY_TIMEOUT_MS"] = "2000"
        argv = [*mpirun_argv(2, list(relay_env), [str(paths.find("iorelay-bench"))]),
                "--write", "--read", "--verify", "--spatiality", "strided", "--request", "64K",
                "--segments", "256", "--dir", d.prefix]  # fmt: skip
        env = {**os.environ, **mpi.launcher().run_env, **relay_env}
        with subprocess.Popen(argv, env=env, text=True, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:  # fmt: skip
            victim = None
            for _ in range(300):  # until the file's daemon has taken 64 of the 512 writes
                time.sleep(0.05)
                with contextlib.suppress(AssertionError):
                    victim = holder(d)
                    by_op = query_stats(d.addresses()[victim], d.credential_file)["total"]["by_op"]
                    if by_op.get("pwrite", 0) >= 64:
                        break
            assert victim is not None and p.poll() is None
            os.kill(d.daemons[victim].pid, signal.SIGKILL)
            out, err = p.communicate(timeout=SUBPROCESS_TIMEOUT_S)
        survivor = 1 - victim
        moved = query_stats(d.addresses()[survivor], d.credential_file)["total"]["by_op"]
        d.stop()
    assert p.returncode == 0, out[-2000:] + err[-2000:]
    result = json.loads(out)
    assert result["ok"] and [ph["wrong_words"] for ph in result["phases"]] == [0, 0, 0]
    assert "move to daemon" in err, err[-2000:]
    assert moved.get("pwrite", 0) > 0 and moved.get("pread", 0) > 0, moved


def test_failover_off_keeps_eio(disk_tmp: Path):
    (disk_tmp / "root").mkdir()
    with LocalDaemons(2, disk_tmp / "root", str(disk_tmp / "fwd"), disk_tmp / "work") as d:
        env = {**os.environ, **d.env(), "IORELAY_TIMEOUT_MS": "2000", "IORELAY_FAILOVER": "off"}
        with subprocess.Popen([sys.executable, "-c", WRITER, d.prefix], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as p:  # fmt: skip
            assert p.stdout.readline().strip() == "ready"
            os.kill(d.daemons[holder(d)].pid, signal.SIGKILL)
            _, err = p.communicate("go\n", timeout=SUBPROCESS_TIMEOUT_S)
        d.stop()
    assert p.returncode != 0 and "Input/output error" in err, err


# Writes 64 blocks of 64 KiB with pwrite twice: pass 1 all "A", pass 2 all "B"; says "ready"
# after 8 blocks of pass 1 and waits for a line (the test stops the file's daemon then).
TWO_PASSES = """
import os, sys
fd = os.open(sys.argv[1] + "/fenced.bin", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
for byte in (b"A", b"B"):
    for i in range(64):
        if byte == b"A" and i == 8:
            print("ready", flush=True)
            sys.stdin.readline()
        os.pwrite(fd, byte * 65536, i * 65536)
os.close(fd)
print("done", flush=True)
"""


def test_stopped_daemon_resumed_lands_no_stale_write(disk_tmp: Path):
    """Fencing: the file's daemon is stopped mid-run, the client fails over and finishes both
    passes elsewhere, then the stopped daemon resumes: nothing of pass 1 may land over pass 2."""
    (disk_tmp / "root").mkdir()
    with LocalDaemons(2, disk_tmp / "root", str(disk_tmp / "fwd"), disk_tmp / "work") as d:
        env = {**os.environ, **d.env(), "IORELAY_TIMEOUT_MS": "1000"}
        with subprocess.Popen([sys.executable, "-c", TWO_PASSES, d.prefix], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as p:  # fmt: skip
            assert p.stdout.readline().strip() == "ready"
            victim = holder(d)
            os.kill(d.daemons[victim].pid, signal.SIGSTOP)
            out, err = p.communicate("go\n", timeout=SUBPROCESS_TIMEOUT_S)
            os.kill(d.daemons[victim].pid, signal.SIGCONT)
            time.sleep(1.0)  # what the resumed daemon had queued is carried out or dropped now
        d.stop()
    assert p.returncode == 0 and out.strip() == "done", err
    assert "move to daemon" in err
    assert (d.root_dir / "fenced.bin").read_bytes() == b"B" * 64 * 65536
