"""The live pool (`iorelay pool start`, `iorelay run --pool`): real shared daemons admitting,
renewing, releasing and revoking jobs as the arbiter decides; each job confined to its root;
a departed, crashed or revoked job's I/O nodes back in the pool."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S
from pool_process import PoolProcess
from shared_jobs import PROBE, WRITER

from iorelay import ionode
from iorelay.pool import wire
from iorelay.stats import query_stats

pytestmark = pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")

ONE_NODE = "0=100,1=300"  # a job that gains from 1 I/O node and takes no more


@pytest.fixture
def pools(disk_tmp: Path) -> Iterator[list[PoolProcess]]:
    started: list[PoolProcess] = []
    yield started
    for p in started:
        assert p.stop() == 0, (p.tmp / "pool.log").read_text()


def start(pools: list[PoolProcess], tmp: Path, ionodes: int = 2, **kw: object) -> PoolProcess:
    pools.append(PoolProcess(tmp, ionodes, **kw))  # type: ignore[arg-type]
    return pools[-1]


def probe(env: dict[str, str], *attempts: str) -> dict[str, str]:
    r = subprocess.run([sys.executable, "-c", PROBE, *attempts], env=env, capture_output=True,
                       text=True, timeout=SUBPROCESS_TIMEOUT_S)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def admitted(pool: PoolProcess, host: str) -> list[str]:
    address = pool.status()["hosts"][host]
    return [j["name"] for j in ionode.jobs(address, admin_secret_file=pool.admin)]


def test_two_jobs_get_ionodes_per_the_arbiter_and_reach_only_their_own_roots(
    pools: list[PoolProcess], disk_tmp: Path
) -> None:
    pool = start(pools, disk_tmp)
    key_a, root_a = pool.job("A")
    key_b, root_b = pool.job("B")
    (root_b / "secret").write_text("B's data")
    a = pool.join("A", ONE_NODE, key_a, root_a)
    b = pool.join("B", ONE_NODE, key_b, root_b)
    # The knapsack: 1 I/O node each (300 + 300 beats 2 + 0 for either).
    assert (a["hosts"], b["hosts"]) == (["io0"], ["io1"])
    assert b["record"]["ionodes"] == [1, 1] and b["record"]["policy"] == "knapsack"
    assert "A" in admitted(pool, "io0") and "A" not in admitted(pool, "io1")
    assert "B" in admitted(pool, "io1") and "B" not in admitted(pool, "io0")
    both = [str(root_a), str(root_b)]  # a hostile job forwards the other's root too
    env_a = pool.env(a, key_a, both)
    got = probe(env_a, f"write:{root_a}/mine:from A", f"{root_b}/secret",
                f"create:{root_b}/planted")  # fmt: skip
    assert got == {f"write:{root_a}/mine:from A": "from A", f"{root_b}/secret": "EACCES",
                   f"create:{root_b}/planted": "EACCES"}, got  # fmt: skip
    # A map of its own naming B's daemon: that daemon does not know A's credential.
    forged = disk_tmp / "forged.map"
    forged.write_text(json.dumps({"epoch": 1, "active": [1]}))
    got = probe({**env_a, "IORELAY_MAP_FILE": str(forged)}, f"{root_b}/secret")
    assert got[f"{root_b}/secret"] != "B's data", got
    assert not (root_b / "planted").exists()
    # A's bytes went through A's daemon only.
    st = pool.status()
    stats = [query_stats(st["hosts"][h], pool.admin)["total"] for h in ("io0", "io1")]
    assert stats[0]["bytes_written"] >= len("from A"), stats[0]
    assert stats[1]["bytes_written"] == 0, stats[1]


def test_a_departing_job_returns_its_ionodes(pools: list[PoolProcess], disk_tmp: Path) -> None:
    pool = start(pools, disk_tmp)
    key, root = pool.job("J")
    r = subprocess.run(
        [sys.executable, "-m", "iorelay", "run", "--pool", str(pool.dir), "--job", "J",
         "--secret-file", str(key), "--job-root", str(root), "--values", "0=100,1=300,2=500",
         "--", "sh", "-c", f"echo ok > {root}/done && cat $IORELAY_MAP_FILE"],
        capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["active"] == [0, 1]  # it had both
    assert (root / "done").read_text() == "ok\n"
    st = pool.status()
    assert st["free"] == ["io0", "io1"] and st["jobs"] == []
    events = [(d["event"], [a["action"] for a in d["actions"]]) for d in st["decisions"]]
    assert events == [("arrival", ["admit", "admit"]), ("departure", ["release", "release"])]
    assert "J" not in admitted(pool, "io0") + admitted(pool, "io1")
    lines = (pool.dir / "decisions.jsonl").read_text().splitlines()
    assert [json.loads(x)["event"] for x in lines] == ["arrival", "departure"]


def test_a_crashed_job_returns_its_ionodes_within_its_lease(
    pools: list[PoolProcess], disk_tmp: Path
) -> None:
    lease_s = 2.0
    pool = start(pools, disk_tmp, lease_s=lease_s)
    key, root = pool.job("C")
    job = subprocess.Popen(
        [sys.executable, "-m", "iorelay", "run", "--pool", str(pool.dir), "--job", "C",
         "--secret-file", str(key), "--job-root", str(root), "--values", "0=100,1=300,2=500",
         "--", "sleep", "60"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    with job:
        deadline = time.monotonic() + SUBPROCESS_TIMEOUT_S
        while not pool.status()["jobs"]:
            assert time.monotonic() < deadline and job.poll() is None
            time.sleep(0.05)
        time.sleep(lease_s)  # renewed meanwhile: still there
        assert [j["name"] for j in pool.status()["jobs"]] == ["C"]
        os.killpg(job.pid, signal.SIGKILL)  # the job and its command, without leaving
        crashed = time.monotonic()
        job.wait(timeout=SUBPROCESS_TIMEOUT_S)
        while pool.status()["jobs"]:
            assert time.monotonic() - crashed < lease_s + 5
            time.sleep(0.05)
        returned_s = time.monotonic() - crashed
    assert returned_s <= lease_s + 0.3, returned_s  # its lease, and a poll of the controller
    st = pool.status()
    assert st["free"] == ["io0", "io1"]
    assert [a["action"] for a in st["decisions"][-1]["actions"]] == ["revoke", "revoke"]
    assert "C" not in admitted(pool, "io0") + admitted(pool, "io1")


def test_a_revoked_job_gets_errors_within_a_second(
    pools: list[PoolProcess], disk_tmp: Path
) -> None:
    pool = start(pools, disk_tmp)
    key, root = pool.job("V")
    reply = pool.join("V", "0=100,1=300,2=500", key, root)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, f"{root}/log"],
                              env=pool.env(reply, key, [str(root)]), stdout=subprocess.PIPE,
                              text=True)  # fmt: skip
    with writer:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        revoked_at = time.monotonic()
        wire.request(pool.dir, {"op": "revoke", "job": "V"})
        out, _ = writer.communicate(timeout=SUBPROCESS_TIMEOUT_S)
    first_error = json.loads(out)["first_failure"]
    assert first_error - revoked_at < 1.0, first_error - revoked_at
    assert pool.status()["free"] == ["io0", "io1"]
    assert "V" not in admitted(pool, "io0") + admitted(pool, "io1")


def test_a_job_its_daemons_refuse_is_told_and_leaves_no_trace(
    pools: list[PoolProcess], disk_tmp: Path
) -> None:
    pool = start(pools, disk_tmp)
    key, root = pool.job("R")
    with pytest.raises(wire.PoolError, match=r"not admitted.*No such file"):
        pool.join("R", "0=100,1=300", key, root / "missing")
    st = pool.status()
    assert st["free"] == ["io0", "io1"] and st["jobs"] == []
    assert pool.join("R", "0=100,1=300", key, root)["hosts"] == ["io0"]  # the name is free


def test_hysteresis_holds_a_mapping_until_its_interval_ends_then_the_pool_moves_it(
    pools: list[PoolProcess], disk_tmp: Path
) -> None:
    interval_s = 2.0
    pool = start(pools, disk_tmp, min_interval_s=interval_s)
    key_a, root_a = pool.job("A")
    key_b, root_b = pool.job("B")
    t0 = time.monotonic()
    assert pool.join("A", "0=100,1=300,2=450", key_a, root_a)["hosts"] == ["io0", "io1"]
    b = pool.join("B", ONE_NODE, key_b, root_b)
    assert time.monotonic() - t0 < interval_s, "too slow to test the hold"
    assert b["hosts"] == [] and b["record"]["held"] == ["A"]  # A keeps 2 for now
    while [j["hosts"] for j in pool.status()["jobs"]] != [["io0"], ["io1"]]:
        assert time.monotonic() - t0 < interval_s + 5
        time.sleep(0.05)
    assert time.monotonic() - t0 >= interval_s
    tick = pool.status()["decisions"][-1]
    assert tick["event"] == "tick" and tick["ionodes"] == [1, 1]  # 300 + 300 > 450 + 100
    assert [a["action"] for a in tick["actions"]] == ["release", "admit"]
    assert "A" not in admitted(pool, "io1") and "B" in admitted(pool, "io1")
    epoch, active = (json.loads(Path(b["map_file"]).read_text())[k] for k in ("epoch", "active"))
    assert active == [1] and epoch > 1


def test_anchored_pool_moves_a_job_after_its_measured_bandwidth(
    pools: list[PoolProcess], disk_tmp: Path
) -> None:
    pool = start(pools, disk_tmp, policy="anchored")
    key, root = pool.job("A")
    # predicted best on 1 I/O node, but static gives a lone job both: it stays there unmeasured
    a = pool.join("A", "0=100,1=300,2=250", key, root)
    assert a["hosts"] == ["io0", "io1"] and a["record"]["policy"] == "anchored"

    def measured(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "iorelay", "pool", "measured",
                               str(pool.dir), "A", *args], capture_output=True, text=True,
                              timeout=SUBPROCESS_TIMEOUT_S)  # fmt: skip

    unknown = subprocess.run([sys.executable, "-m", "iorelay", "pool", "measured",
                              str(pool.dir), "B", "200"], capture_output=True, text=True,
                             timeout=SUBPROCESS_TIMEOUT_S)  # fmt: skip
    assert unknown.returncode != 0 and "no job 'B' in the pool" in unknown.stderr, unknown
    stale = measured("200", "--ionodes", "1")  # of a mapping it does not have: dropped
    assert stale.returncode == 3 and json.loads(stale.stdout) == {"applied": False, "ionodes": 2}
    r = measured("200")  # at its 2: the predicted 300 on 1 is now worth the move
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"applied": True, "ionodes": 2}
    st = pool.status()
    assert [j["hosts"] for j in st["jobs"]] == [["io0"]]
    last = st["decisions"][-1]
    assert last["event"] == "measured" and last["jobs"][0]["measured"] == [2]
    assert last["ionodes"] == [1]
    deadline = time.monotonic() + 10  # the release of io1 runs in the background
    while "A" in admitted(pool, "io1"):
        assert time.monotonic() < deadline, "io1 still admits A"
        time.sleep(0.1)
