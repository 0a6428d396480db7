"""End-to-end data path: unmodified programs (fio, the project's test programs) run under the
interposer through real daemons on loopback, and the bytes are checked on the backend disk."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, DaemonFactory, require_built

from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

pytestmark = pytest.mark.needs_build()

FIO_JOBS = """\
[global]
ioengine=psync
directory={directory}
size=8m
bs=64k
verify=crc32c
verify_fatal=1
randrepeat=1
do_verify=1

[seq]
rw=write

[rand]
rw=randwrite

[seq-small]
rw=write
bs=4k
size=2m

[seq-direct]
rw=write
direct=1
"""


def run(cmd: list[str], env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(c) for c in cmd],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        **kw,
    )


def total_requests(daemons: LocalDaemons, index: int) -> int:
    stats = query_stats(daemons.addresses()[index], daemons.credential_file)
    return int(stats["total"]["requests"])


@pytest.mark.parametrize("count", [1, 2])
def test_fio_verifies_through_daemons_and_on_disk(daemon_factory: DaemonFactory, count: int):
    d = daemon_factory(count)
    job = Path(d.workdir) / "verify.fio"
    job.write_text(FIO_JOBS.format(directory=d.prefix))
    # Two fio processes as two client nodes, so that with 2 daemons each serves one of them
    # (block placement); fio forks a process per job, which the interposer must follow.
    halves = [["seq", "rand"], ["seq-small", "seq-direct"]]
    procs = []
    for node, sections in enumerate(halves):
        env = {**os.environ, **d.env(), "IORELAY_NODE_ID": str(node), "IORELAY_NODES": "2"}
        argv = ["fio", "--output-format=terse", *(f"--section={s}" for s in sections), str(job)]
        # fio's verify state files go to its working directory: the test's own.
        procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, cwd=d.workdir,
                                      stderr=subprocess.STDOUT, text=True))  # fmt: skip
    for p in procs:
        out, _ = p.communicate(timeout=SUBPROCESS_TIMEOUT_S)
        assert p.returncode == 0, out
    written = sorted(p.name for p in d.root_dir.iterdir())
    assert len(written) == 4, f"fio's files must be on the backend disk, found {written}"
    # Read the backend files with fio directly (no relay): the bytes on disk are right.
    direct_job = Path(d.workdir) / "verify-direct.fio"
    direct_job.write_text(FIO_JOBS.format(directory=d.root_dir))
    direct = run(["fio", "--verify_only", "--output-format=terse", str(direct_job)], cwd=d.workdir)
    assert direct.returncode == 0, direct.stdout + direct.stderr
    served = [total_requests(d, i) for i in range(count)]
    assert all(n > 0 for n in served), f"every daemon should have served requests: {served}"


def test_eight_processes_strided_shared_file_through_two_daemons(daemon_factory: DaemonFactory):
    writer = require_built("strided_writer")["strided_writer"]
    d = daemon_factory(2)
    ranks, segments, block = 8, 32, 8192
    shared = f"{d.prefix}/strided.dat"
    procs = []
    for rank in range(ranks):
        env = {**d.env(), "IORELAY_NODE_ID": str(rank // 4), "IORELAY_NODES": "2"}
        argv = [writer, "--file", shared, "--rank", rank, "--ranks", ranks,
                "--segments", segments, "--block", block]  # fmt: skip
        procs.append(
            subprocess.Popen([str(a) for a in argv], env={**os.environ, **env},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )  # fmt: skip
    for p in procs:
        out, err = p.communicate(timeout=SUBPROCESS_TIMEOUT_S)
        assert p.returncode == 0, out + err
    check = run([writer, "--file", d.root_dir / "strided.dat", "--rank", 0, "--ranks", ranks,
                 "--segments", segments, "--block", block, "--verify"])  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    assert "0 wrong words" in check.stdout
    assert total_requests(d, 0) > 0 and total_requests(d, 1) > 0, "both daemons share the work"


def test_sigkill_gives_eio_promptly_and_loses_nothing_acknowledged(disk_tmp: Path):
    writer = require_built("strided_writer")["strided_writer"]
    (disk_tmp / "root").mkdir()
    # Not the daemon_factory fixture: it insists on a clean exit, and this daemon is killed.
    with LocalDaemons(1, disk_tmp / "root", str(disk_tmp / "fwd"), disk_tmp / "work",
                      extra_args=["--delay-us", "20000"]) as d:  # fmt: skip
        env = {**os.environ, **d.env(), "IORELAY_TIMEOUT_MS": "2000"}
        report = d.workdir / "acks.txt"
        argv = [writer, "--file", f"{d.prefix}/crash.dat", "--rank", 0, "--ranks", 1,
                "--segments", 100000, "--block", 4096, "--report"]  # fmt: skip
        with (
            open(report, "w") as out,
            subprocess.Popen(
                [str(a) for a in argv], env=env, stdout=out, stderr=subprocess.DEVNULL
            ) as p,
        ):
            # Killed once writes have been acknowledged (not after a fixed second, in which a
            # loaded machine may start the writer and acknowledge nothing).
            deadline = time.monotonic() + 30
            while report.read_text().count("ok ") <= 10 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert p.poll() is None, "the writer should still be writing"
            os.kill(d.daemons[0].pid, signal.SIGKILL)
            killed_at = time.monotonic()
            p.wait(timeout=SUBPROCESS_TIMEOUT_S)
            elapsed = time.monotonic() - killed_at
        assert d.stop() == [-signal.SIGKILL]
    assert p.returncode != 0
    lines = report.read_text().splitlines()
    assert lines[-1].startswith("error") and "Input/output error" in lines[-1], lines[-3:]
    assert elapsed < 4.0, (
        f"EIO took {elapsed:.2f} s after the daemon died (liveness bound 2 s, plus the exit)"
    )
    acked = sum(1 for line in lines if line.startswith("ok"))
    assert acked > 10, "writes must have been acknowledged before the kill"
    check = run([writer, "--file", d.root_dir / "crash.dat", "--rank", 0, "--ranks", 1,
                 "--block", 4096, "--verify-acked", report])  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr


def test_sigstop_gives_eio_within_liveness_bound(daemon_factory: DaemonFactory):
    writer = require_built("strided_writer")["strided_writer"]
    d = daemon_factory(1)
    bound_s = 1.0
    env = {**d.env(), "IORELAY_TIMEOUT_MS": str(int(bound_s * 1000))}
    pid = d.daemons[0].pid
    os.kill(pid, signal.SIGSTOP)
    try:
        start = time.monotonic()
        result = run([writer, "--file", f"{d.prefix}/stopped.dat", "--rank", 0, "--ranks", 1,
                      "--segments", 4], env)  # fmt: skip
        elapsed = time.monotonic() - start
    finally:
        os.kill(pid, signal.SIGCONT)
    assert result.returncode != 0
    assert "Input/output error" in result.stderr or "Input/output" in result.stdout, result
    assert elapsed < bound_s + 2.0, f"took {elapsed:.2f} s for a {bound_s} s liveness bound"


def test_conflicting_record_locks_block_and_release(daemon_factory: DaemonFactory):
    probe = require_built("lock_probe")["lock_probe"]
    d = daemon_factory(2)
    path = f"{d.prefix}/locked.dat"
    # Two "nodes", so the two processes talk to different data daemons: the lock owner is
    # still one daemon per file.
    env_a = {**os.environ, **d.env(), "IORELAY_NODE_ID": "0", "IORELAY_NODES": "2"}
    env_b = {**os.environ, **d.env(), "IORELAY_NODE_ID": "1", "IORELAY_NODES": "2"}
    with subprocess.Popen([str(probe), path, "hold", "0", "100"], env=env_a, text=True,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE) as holder:  # fmt: skip
        try:
            assert holder.stdout.readline().strip() == "held"
            tried = run([probe, path, "try", "50", "10"], env_b)
            assert f"conflict pid={holder.pid} type=write" in tried.stdout, tried
            assert "EAGAIN" in tried.stdout
            assert "free" in run([probe, path, "try", "100", "10"], env_b).stdout, "no overlap"
            with subprocess.Popen([str(probe), path, "wait", "0", "0"], env=env_b,
                                  stdout=subprocess.PIPE, text=True) as waiter:  # fmt: skip
                time.sleep(0.5)
                assert waiter.poll() is None, "F_SETLKW must block while the lock is held"
                holder.stdin.write("release\n")
                holder.stdin.flush()
                out, _ = waiter.communicate(timeout=10)
                assert out.strip() == "acquired"
        finally:
            holder.kill()


def test_wrong_secret_is_refused(daemon_factory: DaemonFactory, disk_tmp: Path):
    from iorelay.credential import create_credential

    d = daemon_factory(1)
    wrong = create_credential(disk_tmp / "wrong-secret")
    env = {**d.env(), "IORELAY_SECRET_FILE": str(wrong)}
    script = f"""
import os
try:
    os.open({d.prefix + "/x"!r}, os.O_WRONLY | os.O_CREAT)
except OSError as e:
    print(e.errno)
"""
    result = run([sys.executable, "-c", script], env)
    assert result.stdout.strip() == "13", result.stdout + result.stderr  # EACCES
    assert not (d.root_dir / "x").exists()


def test_symlink_escape_is_refused_by_the_daemon_and_followed_in_the_callers_tree(
    daemon_factory: DaemonFactory, disk_tmp: Path
):
    """The daemon never follows a link out of its export (EACCES); the interposer then follows
    it in the calling process's own tree, as the kernel would on a mounted file system, with the
    process's own rights: what it reaches is what it could open without iorelay."""
    d = daemon_factory(1)
    outside = disk_tmp / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("keep out")
    (d.root_dir / "escape").symlink_to(outside)
    (d.root_dir / "abs").symlink_to(outside / "secret.txt")
    script = f"""
import os
for path, flags in [({d.prefix + "/escape/new.txt"!r}, os.O_WRONLY | os.O_CREAT),
                    ({d.prefix + "/escape/secret.txt"!r}, os.O_RDONLY),
                    ({d.prefix + "/abs"!r}, os.O_RDONLY)]:
    fd = os.open(path, flags)
    # a kernel file: the daemon refused it, the process opened it itself
    print(os.readlink(f"/proc/self/fd/{{fd}}"))
    os.close(fd)
"""
    result = run([sys.executable, "-c", script], d.env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        str(outside / "new.txt"),
        str(outside / "secret.txt"),
        str(outside / "secret.txt"),
    ]
    assert (outside / "secret.txt").read_text() == "keep out"
    stats = query_stats(d.addresses()[0], d.credential_file)["total"]
    assert stats["errors"] >= 3, stats  # the daemon's refusals
    by_op = stats["by_op"]
    assert by_op.get("open", 0) >= 3 and by_op.get("readlink", 0) >= 3, by_op


def test_python_c_extensions_import_from_a_forwarded_directory(
    daemon_factory: DaemonFactory, disk_tmp: Path
):
    """A Python package with C extensions kept in a forwarded directory (a virtual environment
    on the parallel file system): the dynamic loader cannot open forwarded files, so the
    interposer stages each shared object, and the forwarded ones it needs, in a local directory.
    numpy's extension needs OpenBLAS through its RUNPATH $ORIGIN/../../numpy.libs; numpy then
    imports from the forwarded copy and computes."""
    import numpy

    source = Path(numpy.__file__).parent
    d = daemon_factory(1)
    shutil.copytree(source, d.root_dir / "site" / "numpy")
    if (source.parent / "numpy.libs").is_dir():
        shutil.copytree(source.parent / "numpy.libs", d.root_dir / "site" / "numpy.libs")
    staged = disk_tmp / "staged"
    script = (
        f"import sys; sys.path.insert(0, {d.prefix + '/site'!r}); import numpy; "
        "print(numpy.__file__); print(numpy.linalg.inv(numpy.eye(2) * 4)[1][1])"
    )
    result = run([sys.executable, "-c", script], {**d.env(), "IORELAY_STAGE_DIR": str(staged)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [f"{d.prefix}/site/numpy/__init__.py", "0.25"]
    names = [p.name for p in staged.iterdir()]
    assert any("_multiarray_umath" in n for n in names), names
    assert staged.stat().st_mode & 0o777 == 0o700


def test_paths_outside_the_prefix_are_untouched(daemon_factory: DaemonFactory, disk_tmp: Path):
    d = daemon_factory(1)
    local = disk_tmp / "local.txt"
    script = f"""
with open({str(local)!r}, "w") as f:
    f.write("local data")
with open({d.prefix + "/forwarded.txt"!r}, "w") as f:
    f.write("forwarded data")
print(open({str(local)!r}).read(), "|", open({d.prefix + "/forwarded.txt"!r}).read())
"""
    result = run([sys.executable, "-c", script], d.env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "local data | forwarded data"
    assert local.read_text() == "local data"
    assert (d.root_dir / "forwarded.txt").read_text() == "forwarded data"
    assert not Path(d.prefix).exists(), "the prefix exists only through the relay"


def test_chmod_through_the_interposer(daemon_factory: DaemonFactory):
    """chmod(1) on a forwarded path changes the file in the export root, less set-user-ID."""
    d = daemon_factory(1)
    (d.root_dir / "prog").write_text("x")
    (d.root_dir / "prog").chmod(0o600)
    result = run(["chmod", "4750", f"{d.prefix}/prog"], d.env())
    assert result.returncode == 0, result.stderr
    assert (d.root_dir / "prog").stat().st_mode & 0o7777 == 0o750
    missing = run(["chmod", "644", f"{d.prefix}/missing"], d.env())
    assert missing.returncode != 0 and "No such file" in missing.stderr


def test_shell_and_subshells_share_the_offset_of_one_description(daemon_factory: DaemonFactory):
    """A shell's redirection, written by the shell, a forked subshell and again the shell: one
    description, one offset, whether the client or (after the fork) the daemon holds it."""
    d = daemon_factory(1)
    target = f"{d.prefix}/shared.txt"
    script = (
        "exec 3>" + target + "; echo one >&3; (echo two >&3); echo three >&3; "
        "(echo four >&3) & wait; echo five >&3"
    )
    result = run(["bash", "-c", script], d.env())
    assert result.returncode == 0, result.stderr
    assert (d.root_dir / "shared.txt").read_text() == "one\ntwo\nthree\nfour\nfive\n"


def test_seeks_at_the_file_offset_cost_no_round_trip(daemon_factory: DaemonFactory):
    """IOR's POSIX pattern (lseek, then write at the file offset) reaches the daemon as
    positional writes alone."""
    d = daemon_factory(1)
    script = f"""
import os
fd = os.open({d.prefix + "/seek.dat"!r}, os.O_WRONLY | os.O_CREAT, 0o644)
for k in (3, 1, 2, 0):
    os.lseek(fd, k * 4096, os.SEEK_SET)
    os.write(fd, bytes([65 + k]) * 4096)
os.lseek(fd, 4 * 4096, os.SEEK_CUR)  # from 4096: past EOF, a hole of one block
os.write(fd, b"E")
print(os.lseek(fd, 0, os.SEEK_END))
os.close(fd)
"""
    result = run([sys.executable, "-c", script], d.env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(5 * 4096 + 1)
    data = (d.root_dir / "seek.dat").read_bytes()
    assert data[: 4 * 4096] == b"A" * 4096 + b"B" * 4096 + b"C" * 4096 + b"D" * 4096
    assert data[4 * 4096 : 5 * 4096] == bytes(4096) and data[-1:] == b"E"
    by_op = query_stats(d.addresses()[0], d.credential_file)["total"]["by_op"]
    assert by_op.get("pwrite") == 5 and "write" not in by_op
    assert by_op.get("lseek") == 1  # SEEK_END only


def test_posix_aio_keeps_requests_in_flight_and_they_merge(daemon_factory: DaemonFactory):
    """fio's posixaio engine at iodepth 16: the requests wait at the daemon together, aioli
    merges them, and fio's verification passes. Each backend call costs 300 us more, so that
    requests in flight together queue behind a running call whatever the machine's load (calls
    faster than the requests arrive would each run alone, which is no sign of one request in
    flight at a time)."""
    d = daemon_factory(1, scheduler="aioli", extra_args=["--delay-us", "300"])
    job = (
        "[aio]\nioengine=posixaio\niodepth=16\nrw=write\nbs=8k\nsize=4m\ndirect=1\n"
        "verify=crc32c\nverify_fatal=1\ndo_verify=1\n"
    )
    result = run(["fio", f"--directory={d.prefix}", "-"], d.env(), input=job, cwd=d.workdir)
    assert result.returncode == 0, result.stdout + result.stderr
    total = query_stats(d.addresses()[0], d.credential_file)["total"]
    assert total["by_op"]["pwrite"] == 512 and total["by_op"]["pread"] == 512
    assert total["mean_requests_per_dispatch"] > 2, total


def test_libaio_keeps_requests_in_flight_and_they_merge(daemon_factory: DaemonFactory):
    """fio's libaio engine (io_submit/io_getevents) at iodepth 16 on forwarded files: the
    requests go to the daemon, wait there together and merge, fio's verification passes, and a
    file outside the prefix in the same job stays the kernel's (the shape of the posixaio test
    above)."""
    d = daemon_factory(1, scheduler="aioli", extra_args=["--delay-us", "300"])
    job = (
        "[global]\nioengine=libaio\niodepth=16\nrw=write\nbs=8k\nsize=4m\ndirect=1\n"
        "verify=crc32c\nverify_fatal=1\ndo_verify=1\n"
        f"[forwarded]\ndirectory={d.prefix}\n[local]\ndirectory={d.workdir}\n"
    )
    result = run(["fio", "-"], d.env(), input=job, cwd=d.workdir)
    assert result.returncode == 0, result.stdout + result.stderr
    total = query_stats(d.addresses()[0], d.credential_file)["total"]
    assert total["by_op"]["pwrite"] == 512 and total["by_op"]["pread"] == 512, total["by_op"]
    assert total["mean_requests_per_dispatch"] > 2, total
    # A queue deeper than the client's connections (each request in flight holds one until its
    # event is taken): the requests past the budget are carried out at once, never waiting for
    # a connection that only this process could free.
    deep = job.replace("iodepth=16", "iodepth=64").replace("rw=write", "rw=randrw")
    env = {**d.env(), "IORELAY_MAX_CONNECTIONS": "4"}
    result = run(["fio", "-"], env, input=deep, cwd=d.workdir)
    assert result.returncode == 0, result.stdout + result.stderr


def test_times_and_links_through_the_interposer(daemon_factory: DaemonFactory):
    """touch, ln -s, ln and touch -h on forwarded paths change the files in the export root,
    through the daemon (its counters show the calls)."""
    d = daemon_factory(1)
    prefix = d.prefix
    for argv in (
        ["touch", "-d", "@1000000000", f"{prefix}/t.dat"],
        ["ln", "-s", "t.dat", f"{prefix}/t.lnk"],
        ["ln", f"{prefix}/t.dat", f"{prefix}/t.hard"],
        ["touch", "-h", "-d", "@1100000000", f"{prefix}/t.lnk"],
    ):
        result = run(argv, d.env())
        assert result.returncode == 0, (argv, result.stderr)
    root = d.root_dir
    assert (root / "t.dat").stat().st_mtime == 1000000000
    assert (root / "t.lnk").is_symlink() and (root / "t.lnk").readlink() == Path("t.dat")
    assert (root / "t.lnk").lstat().st_mtime == 1100000000
    assert (root / "t.hard").stat().st_ino == (root / "t.dat").stat().st_ino
    by_op = query_stats(d.addresses()[0], d.credential_file)["total"]["by_op"]
    assert by_op.get("symlink") == 1 and by_op.get("link") == 1, by_op
    assert by_op.get("utimens", 0) + by_op.get("futimens", 0) >= 2, by_op


def test_a_shell_works_inside_a_forwarded_directory(daemon_factory: DaemonFactory):
    """`cd` into a forwarded directory (which the kernel cannot enter): the shell's redirections,
    its children (cat, ls, /bin/pwd) and their relative paths all go to the export root."""
    d = daemon_factory(1)
    (d.root_dir / "job").mkdir()
    script = f"cd {d.prefix}/job && echo hi > out.txt && /bin/pwd && cat out.txt && ls && cd /"
    result = run(["bash", "-c", script], d.env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [f"{d.prefix}/job", "hi", "out.txt"]
    assert (d.root_dir / "job" / "out.txt").read_text() == "hi\n"


def test_tar_extracts_into_a_forwarded_directory(daemon_factory: DaemonFactory, tmp_path: Path):
    """GNU tar, run in a forwarded working directory, recreates a tree with a symbolic link, a
    hard link, modes and times (ownership it asks for is the owner the files already have)."""
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a").write_text("data\n")
    (src / "a").chmod(0o640)
    os.utime(src / "a", (1000000000, 1000000000))
    (src / "l").symlink_to("a")
    os.link(src / "a", src / "h")
    archive = tmp_path / "t.tar"
    subprocess.run(["tar", "cf", str(archive), "-C", str(src), "."], check=True)
    d = daemon_factory(1)
    result = run(["bash", "-c", f"cd {d.prefix} && tar xf {archive}"], d.env())
    assert result.returncode == 0, result.stderr
    root = d.root_dir
    assert (root / "a").read_text() == "data\n"
    assert (root / "a").stat().st_mode & 0o777 == 0o640
    assert (root / "a").stat().st_mtime == 1000000000
    assert (root / "l").readlink() == Path("a")
    assert (root / "h").stat().st_ino == (root / "a").stat().st_ino
    assert (root / "sub").is_dir()
    by_op = query_stats(d.addresses()[0], d.credential_file)["total"]["by_op"]
    assert by_op.get("symlink") == 1 and by_op.get("link") == 1, by_op
    # find, du and tar (gnulib's fts and savedir: directories opened without O_DIRECTORY, then
    # fchdir and fdopendir) and rm -r walk the tree as they do a local one.
    walk = run(["bash", "-c", f"cd {d.prefix} && find . | sort && du -s --apparent-size . "
                "&& tar cf - . | tar tf - | sort && rm -r ./*"], d.env())  # fmt: skip
    assert walk.returncode == 0, walk.stderr
    names = sorted(["."] + [f"./{p.relative_to(src)}" for p in src.rglob("*")])
    assert walk.stdout.splitlines()[: len(names)] == names
    assert list(root.iterdir()) == []


def test_programs_on_forwarded_paths_run(daemon_factory: DaemonFactory):
    """A job script and a program kept in a forwarded directory run from a shell there, as they
    would from the file system itself: the script finds its sibling files by $0, the program
    (a copy of a local binary) runs, and a link to a program outside the tree runs that."""
    d = daemon_factory(1)
    job = d.root_dir / "job"
    job.mkdir()
    (job / "input").write_text("42\n")
    (job / "run.sh").write_text('#!/bin/sh\ncat "$(dirname "$0")/input"\n./echo-copy "$1"\n')
    (job / "run.sh").chmod(0o755)
    shutil.copy("/bin/echo", job / "echo-copy")
    (job / "true-link").symlink_to("/bin/true")
    script = f"cd {d.prefix}/job && ./run.sh arg && ./true-link && echo linked"
    result = run(["bash", "-c", script], d.env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["42", "arg", "linked"]


def test_private_mappings_are_copies_up_to_a_limit(daemon_factory: DaemonFactory):
    """Python's copy-on-write mmap of a forwarded file holds its bytes; past
    IORELAY_MMAP_COPY_MAX the mapping is ENODEV, as is a shared one."""
    d = daemon_factory(1)
    (d.root_dir / "data").write_bytes(bytes(range(256)) * 32)  # 8 KiB
    script = f"""
import mmap, os
f = open({d.prefix + "/data"!r}, "rb")
for access in (mmap.ACCESS_COPY, mmap.ACCESS_READ):
    try:
        m = mmap.mmap(f.fileno(), 0, access=access)
        print(len(m), m[255], m[8191])
    except OSError as e:
        print("errno", e.errno)
"""
    result = run([sys.executable, "-c", script], d.env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["8192 255 255", "errno 19"]
    small = run([sys.executable, "-c", script], {**d.env(), "IORELAY_MMAP_COPY_MAX": "4KiB"})
    assert small.stdout.split("\n")[:2] == ["errno 19", "errno 19"], small.stdout + small.stderr


def test_git_works_in_a_forwarded_directory(daemon_factory: DaemonFactory):
    """git maps its config, index and packs privately (mmap of a forwarded descriptor is an
    anonymous copy): init, commit, gc into a pack, log and fsck through the interposer, and the
    repository checks out locally."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    d = daemon_factory(1)
    git = "git -c user.email=t@example.org -c user.name=t"
    script = (
        f"cd {d.prefix} && git init -q repo && cd repo && seq 1 500 > a && git add a && "
        f"{git} commit -qm one && echo more >> a && {git} commit -qam two && "
        "git gc -q && git log --format=%s && git fsck --strict && git show HEAD:a | wc -l"
    )
    result = run(["bash", "-c", script], d.env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["two", "one", "501"]
    assert list((d.root_dir / "repo" / ".git" / "objects" / "pack").glob("*.pack"))
    local = run(["git", "-C", str(d.root_dir / "repo"), "log", "--format=%s"])
    assert local.returncode == 0 and local.stdout.split() == ["two", "one"], local.stderr
    by_op = query_stats(d.addresses()[0], d.credential_file)["total"]["by_op"]
    assert by_op.get("pread", 0) + by_op.get("read", 0) > 0, by_op


def test_relative_paths_that_leave_a_forwarded_directory(daemon_factory: DaemonFactory):
    """From a forwarded working directory, `..` out of the prefix is taken lexically against it
    (the kernel's working directory is a removed directory elsewhere, whose `..` is not the
    prefix's parent)."""
    d = daemon_factory(1)
    (d.root_dir / "job").mkdir()
    outside = d.root_dir.parent  # the prefix's parent, a real directory
    script = (f"cd {d.prefix}/job && echo out > ../../marker && ls ../.. && "
              "mkdir ../../made && stat -c %F ../../made && mv ../../made ../../moved")  # fmt: skip
    result = run(["bash", "-c", script], d.env())
    assert result.returncode == 0, result.stderr
    assert (outside / "marker").read_text() == "out\n"
    assert "marker" in result.stdout.split() and "directory" in result.stdout
    assert (outside / "moved").is_dir() and not (outside / "made").exists()


def test_a_walk_stats_from_the_listing(daemon_factory: DaemonFactory):
    """find and du over a forwarded tree: each directory's listing carries its entries'
    attributes, so the walk asks the daemon for a page, not for every entry; the sizes are
    right."""
    d = daemon_factory(1)
    for i in range(50):
        (d.root_dir / f"f{i}").write_bytes(b"x" * (4096 * (i % 3)))
    result = run(["bash", "-c", f"find {d.prefix} -type f -size +1k | wc -l && "
                  f"du -s -B1 --apparent-size {d.prefix}"], d.env())  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")
    assert lines[0].strip() == "33"
    total = sum(4096 * (i % 3) for i in range(50))
    assert int(lines[1].split()[0]) >= total
    by_op = query_stats(d.addresses()[0], d.credential_file)["total"]["by_op"]
    assert by_op.get("stat", 0) < 20, by_op  # 2 walks of 50 entries, stats from the listings
