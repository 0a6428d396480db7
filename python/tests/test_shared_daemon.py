"""One iorelayd shared by jobs admitted while it runs: each job reaches its own root only, through
the interposer, whatever path or descriptor it tries; the admin channel refuses other
credentials and explains bad requests; revocation and leases end a job within a second."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, DaemonFactory
from shared_jobs import WRITER, SharedDaemon, start_shared

from iorelay import ionode, paths
from iorelay.credential import create_credential

# Sends a descriptor of its file (forwarded: the interposer's placeholder) to whoever connects.
SENDER = r"""
import os, socket, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sys.argv[2])
srv.listen(1)
print("ready", flush=True)
conn, _ = srv.accept()
socket.send_fds(conn, [b"x"], [fd])
conn.close()
"""


@pytest.fixture
def shared(daemon_factory: DaemonFactory, disk_tmp: Path) -> SharedDaemon:
    return start_shared(daemon_factory, disk_tmp)


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "libiorelay.so", "iorelay-ctl")
def test_jobs_admitted_at_run_time_reach_their_own_roots_only(shared: SharedDaemon) -> None:
    root_a, key_a, fwd_a = shared.admit("jobA", weight=3)
    root_b, key_b, fwd_b = shared.admit("jobB")
    both = [fwd_a, fwd_b]  # a hostile job forwards the other's prefix too
    own_a = shared.probe(key_a, both, f"write:{fwd_a}/a.txt:from A")
    own_b = shared.probe(key_b, both, f"write:{fwd_b}/secret:B's data")
    assert own_a == {f"write:{fwd_a}/a.txt:from A": "from A"}
    assert own_b == {f"write:{fwd_b}/secret:B's data": "B's data"}
    assert (root_a / "a.txt").read_text() == "from A"
    assert (root_b / "secret").read_text() == "B's data"
    # Through the interposer, which resolves paths lexically and follows links itself.
    (root_a / "toB").symlink_to(fwd_b)  # a link to B's prefix: the interposer follows it there
    attempts = [
        f"{fwd_b}/secret",  # absolute
        f"{fwd_a}/../fwd-jobB/secret",  # ..
        f"{fwd_a}/toB/secret",  # symlink
        f"at:{fwd_a}:../fwd-jobB/secret",  # openat from a directory descriptor
        f"create:{fwd_b}/planted",
    ]
    got = shared.probe(key_a, both, *attempts)
    # The daemon refuses the link (it leads out of A's root: EACCES, as the client library's
    # attempts below show); the interposer then follows it in the process's own tree, as the
    # kernel would (docs/interposer.md), where B's prefix is not a directory: ENOENT.
    link = f"{fwd_a}/toB/secret"
    assert got.pop(link) in ("EACCES", "ENOENT")
    assert got == {a: "EACCES" for a in attempts if a != link}, got
    # Paths as the client library sends them, for the daemon to resolve beneath A's root: ".."
    # out of it and a link to B's root on the node.
    (root_a / "toBroot").symlink_to(root_b)
    attempts = [
        f"api:{fwd_a}/../fwd-jobB/secret",
        f"api:{fwd_a}/../{root_b.name}/secret",
        f"api:{fwd_a}/toBroot/secret",
        f"api:{fwd_b}/secret",
    ]
    got = shared.probe(key_a, both, *attempts, preload=False)
    assert got == {a: "EACCES" for a in attempts}, got
    assert not (root_b / "planted").exists()
    # A descriptor of B's file passed to a process of job A over a Unix socket: an error, and
    # none of B's bytes.
    sock = shared.tmp / "pass.sock"
    sender = subprocess.Popen(
        [sys.executable, "-c", SENDER, f"{fwd_b}/secret", str(sock)],
        env=shared.env(key_b, [fwd_b]),
        stdout=subprocess.PIPE,
        text=True,
    )
    with sender:
        assert sender.stdout is not None and sender.stdout.readline().strip() == "ready"
        got = shared.probe(key_a, both, f"fd:{sock}")
        sender.wait(timeout=SUBPROCESS_TIMEOUT_S)
    assert got[f"fd:{sock}"] in ("EBADF", "EACCES"), got
    listed = {j["name"]: j for j in ionode.jobs(shared.address, admin_secret_file=shared.admin)}
    assert listed["jobA"]["weight"] == 3 and listed["jobA"]["state"] == "active"
    assert listed["jobB"]["roots"] == {fwd_b: str(root_b)}


@pytest.mark.needs_build("iorelayd", "iorelay-ctl")
def test_admin_ops_refuse_other_credentials_and_explain_bad_requests(
    shared: SharedDaemon,
) -> None:
    root_a, key_a, _ = shared.admit("jobA")
    # The job's own credential (and the start-time one) may not use the admin channel.
    for key in (key_a, shared.d.credential_file):
        r = shared.ctl(key, "jobs", shared.address)
        assert r.returncode == ionode.EXIT_REFUSED and "Permission denied" in r.stderr
    for unknown in (ionode.revoke, ionode.release, ionode.renew):
        with pytest.raises(ionode.IonodeError, match="no job 'nope'"):
            unknown(shared.address, "nope", admin_secret_file=shared.admin)
    with pytest.raises(ionode.IonodeError, match="already admitted"):
        ionode.admit(
            shared.address, "jobA", key_a, [f"/x={shared.tmp}/x"], admin_secret_file=shared.admin
        )
    other = shared.tmp / "other"
    other.mkdir()
    with pytest.raises(ionode.IonodeError, match="credential is job 'jobA'"):
        ionode.admit(shared.address, "jobC", key_a, [f"/c={other}"], admin_secret_file=shared.admin)
    key_c = create_credential(shared.tmp / "c.key")
    link = shared.tmp / "link"
    link.symlink_to(other)
    bad_roots = {
        f"/c={link}": "reached through a symlink",
        f"/c={root_a}/sub": "overlaps job jobA",
        f"/c={shared.tmp}": "overlaps job",
        f"/c={shared.tmp}/missing": "No such file",
        "relative=/x": "PREFIX=DIR",
    }
    if os.geteuid() == 0:
        foreign = shared.tmp / "foreign"
        foreign.mkdir()
        os.chown(foreign, 12345, 12345)
        bad_roots[f"/c={foreign}"] = "not owned by the daemon's user"
    (root_a / "sub").mkdir()
    for root, why in bad_roots.items():
        with pytest.raises(ionode.IonodeError, match=why):
            ionode.admit(shared.address, "jobC", key_c, [root], admin_secret_file=shared.admin)
    # None of the refusals admitted anything.
    assert [j["name"] for j in ionode.jobs(shared.address, admin_secret_file=shared.admin)] == [
        "app0",
        "jobA",
    ]


@pytest.mark.needs_build("iorelayd", "iorelay-ctl")
def test_lease_expires_within_its_length_plus_one_second(shared: SharedDaemon) -> None:
    start = time.monotonic()
    _, key, _ = shared.admit("leased", lease_s=1.0)
    _, renewed_key, _ = shared.admit("renewed", lease_s=1.0)
    expired_at = None
    while time.monotonic() - start < 3.0:
        ionode.renew(shared.address, "renewed", admin_secret_file=shared.admin)
        if expired_at is None and shared.ctl(key, "ping", shared.address).returncode != 0:
            expired_at = time.monotonic() - start
        time.sleep(0.1)
    assert expired_at is not None and expired_at <= 2.0, expired_at
    assert shared.ctl(renewed_key, "ping", shared.address).returncode == 0
    r = shared.ctl(key, "ping", shared.address)
    assert r.returncode == ionode.EXIT_REFUSED, r.stderr


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_revoked_job_fails_within_a_second_and_no_queued_write_lands(
    daemon_factory: DaemonFactory, disk_tmp: Path
) -> None:
    # Each backend call takes 20 ms, one at a time: writes queue in the scheduler.
    shared = start_shared(daemon_factory, disk_tmp, "--delay-us", "20000", "--workers", "1")
    root, key, fwd = shared.admit("victim")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, f"{fwd}/log"],  # log0 .. log7
        env=shared.env(key, [fwd]),
        stdout=subprocess.PIPE,
        text=True,
    )
    with writer:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # writes flowing, queued behind the slow backend
        revoked_at = time.monotonic()
        ionode.revoke(shared.address, "victim", admin_secret_file=shared.admin)
        # What a write in the backend's hands at the revocation may still add: one call.
        time.sleep(0.1)
        landed = [(root / f"log{t}").read_bytes() for t in range(8)]
        out, _ = writer.communicate(timeout=SUBPROCESS_TIMEOUT_S)
    first_error = json.loads(out)["first_failure"]
    assert first_error - revoked_at < 1.0, first_error - revoked_at
    time.sleep(0.5)
    after = [(root / f"log{t}").read_bytes() for t in range(8)]
    assert after == landed, "a write landed after the revocation"
    assert any(landed), "no write landed before the revocation"
    stats = shared.stats()
    assert stats["fenced_writes"] > 0, "no queued write was dropped"
    assert stats["apps"].get("victim", {}).get("departed") is True or "victim" not in stats["apps"]
    r = shared.ctl(key, "ping", shared.address)
    assert r.returncode == ionode.EXIT_REFUSED


@pytest.mark.needs_build("iorelayd")
def test_max_connections_above_what_descriptors_carry_is_refused(disk_tmp: Path) -> None:
    key = create_credential(disk_tmp / "k")
    r = subprocess.run(
        [
            str(paths.find("iorelayd")),
            "--credential",
            f"a={key}",
            "--max-connections",
            "1000000",
        ],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    assert r.returncode == 2 and "RLIMIT_NOFILE" in r.stderr, r.stderr


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_iorelay_run_renews_its_jobs_lease(shared: SharedDaemon) -> None:
    # Renewed every 8 s (a third of the lease); long enough for an interpreter starting on a
    # loaded machine (it took 19 s on one) to renew it the first time.
    lease_s = 24.0
    root, key, fwd = shared.admit("leased", lease_s=lease_s)
    admitted = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "iorelay", "run", "--attach", shared.address, "--secret-file",
         str(key), "--prefix", fwd, "--", "sh", "-c", f"sleep 9 && echo ok > {fwd}/done"],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert (root / "done").read_text() == "ok\n"
    jobs = ionode.jobs(shared.address, admin_secret_file=shared.admin)
    left_s = next(j for j in jobs if j["name"] == "leased")["lease_ms_left"] / 1000
    unrenewed_s = lease_s - (time.monotonic() - admitted)
    # Renewed at the run's start and 8 s later: at least 8 s more left than without renewals.
    assert left_s > unrenewed_s + 7, (left_s, unrenewed_s)
