"""`iorelay testbed`: the plan and the state file (anywhere), and on a machine that can build a
testbed (root, /dev/fuse, make testbed-deps) a real one: Slurm steps run in their host's
network namespace, a file written through GlusterFS on one host is read on another, the bytes
cross the capped links, and `down` (also after a failed `up`) leaves nothing behind."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from iorelay.testbed import cluster, hold
from iorelay.testbed import explore as testbed_explore
from iorelay.testbed import slurm as testbed_slurm
from iorelay.testbed import ssh as testbed_ssh
from iorelay.testbed.net import link_bytes
from iorelay.testbed.plan import (
    BRIDGE,
    DATA_DIR,
    NETNS_PREFIX,
    RUN_DIR,
    SHARED_PATH,
    VETH_PREFIX,
    Host,
    make_hosts,
    tbf_burst_bytes,
)
from iorelay.testbed.plan import (
    TestbedConfig as Config,
)
from iorelay.testbed.state import STATE_FILE, State
from iorelay.testbed.system import TestbedBusy as Busy
from iorelay.testbed.system import TestbedError as StepError
from iorelay.testbed.system import new_entries, remove_new_entries

STEP_TIMEOUT_S = 60
DAEMONS = ("glusterd", "glusterfsd", "glusterfs", "munged", "slurmctld", "slurmd", "slurmstepd")


# -- anywhere ---------------------------------------------------------------------------------


def test_plan_roles_addresses_and_rates() -> None:
    hosts = make_hosts(Config())
    assert [h.name for h in hosts] == ["st1", "ion1", "ion2", "node1", "node2", "node3"]
    assert len({h.address for h in hosts}) == len(hosts)
    assert all(h.address.startswith("10.199.77.") for h in hosts)
    rate = {h.role: h.rate_mbit for h in hosts}
    assert rate["compute"] < rate["ionode"] <= rate["storage"]
    assert all(len(h.veth) <= 15 for h in hosts)  # IFNAMSIZ
    assert tbf_burst_bytes(200) == 125_000
    assert tbf_burst_bytes(2000) == 1_250_000


@pytest.mark.parametrize(
    "config",
    [
        Config(storage=0),
        Config(compute=0, ionode=0),
        Config(subnet="8.8.8.0/24"),
    ],
)
def test_plan_refuses_bad_configs(config: Config) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        make_hosts(config)


def test_state_is_written_before_each_step(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    state = State.create(path, Config().to_json(), [])
    state.record("link", name="x")
    loaded = State.load(path)
    assert loaded is not None and loaded.steps == [{"kind": "link", "name": "x"}]
    assert State.load(tmp_path / "absent.json") is None


def test_remove_new_entries_keeps_what_was_there(tmp_path: Path) -> None:
    (tmp_path / "old").touch()
    snap = new_entries(tmp_path)
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "f").touch()
    (tmp_path / "new2").touch()
    remove_new_entries(**snap)
    assert sorted(os.listdir(tmp_path)) == ["old"]


def test_status_and_down_without_a_testbed(tmp_path: Path) -> None:
    assert cluster.status(tmp_path / "state.json") is None
    assert cluster.down(tmp_path / "state.json") == 0.0


def test_check_says_whether_a_testbed_can_be_built_and_why_not() -> None:
    """`iorelay testbed check` (which `make demo` asks): exit 0 where one can be built, else 1
    with every unmet requirement named."""
    proc = subprocess.run(
        [sys.executable, "-m", "iorelay", "testbed", "check"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    why = cluster.unmet_requirements()
    assert proc.returncode == (1 if why else 0), proc.stdout + proc.stderr
    for reason in why:
        assert reason in proc.stdout


# -- on a real testbed ------------------------------------------------------------------------


def _skip_reason() -> str | None:
    why = cluster.unmet_requirements()
    if why:
        return "cannot build a testbed here: " + "; ".join(why)
    if STATE_FILE.exists():
        return f"a testbed is already up ({STATE_FILE}); not touching it"
    return None


needs_testbed = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


def _daemon_pids() -> set[int]:
    """Pids of running (not zombie) processes named like the testbed's daemons."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if comm in DAEMONS and stat != "Z":
            pids.add(int(entry.name))
    return pids


def assert_nothing_left(pids_before: set[int]) -> None:
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    assert NETNS_PREFIX not in netns.stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True)
    assert BRIDGE not in links.stdout and f" {VETH_PREFIX}" not in links.stdout
    mounts = Path("/proc/mounts").read_text()
    assert str(RUN_DIR) not in mounts and "fuse.glusterfs" not in mounts
    assert _daemon_pids() - pids_before == set()
    assert not RUN_DIR.exists() and not STATE_FILE.exists()


def srun(host: str, *command: str) -> str:
    env = {**os.environ, **testbed_slurm.env()}
    proc = subprocess.run(
        ["srun", "-N1", "-n1", f"--nodelist={host}", *command],
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT_S,
        env=env,
    )
    assert proc.returncode == 0, f"srun on {host}: {proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def tb() -> Iterator[tuple[dict[str, Host], set[int]]]:
    pids_before = _daemon_pids()
    try:
        state = cluster.up(Config(compute=2, ionode=2, storage=1))
    except Busy as e:  # another run's testbed: leave it alone
        pytest.skip(str(e))
    except BaseException:
        cluster.down()
        raise
    try:
        yield {h.name: h for h in cluster.hosts_of(state)}, pids_before
    finally:
        cluster.down()


@needs_testbed
def test_srun_runs_in_the_hosts_network_namespace(tb: tuple[dict[str, Host], set[int]]) -> None:
    hosts, _ = tb
    for name in ("node1", "ion1"):
        host = hosts[name]
        inside = srun(name, "ip", "-o", "-4", "addr", "show", "dev", "eth0")
        direct = subprocess.run(
            ["ip", "netns", "exec", host.netns, "ip", "-o", "-4", "addr", "show", "dev", "eth0"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert inside == direct and f"inet {host.address}/" in inside
        assert srun(name, "hostname").strip() == name


@needs_testbed
def test_glusterfs_file_written_on_one_host_is_read_on_another(
    tb: tuple[dict[str, Host], set[int]],
) -> None:
    hosts, _ = tb
    size = 8 * 1024 * 1024
    data = os.urandom(size)
    src = RUN_DIR / "test-input"
    src.write_bytes(data)
    before = {n: link_bytes(h) for n, h in hosts.items()}
    target = SHARED_PATH / "written-on-node1"
    srun("node1", "dd", f"if={src}", f"of={target}", "bs=1M", "oflag=direct", "status=none")
    digest = srun("node2", "sha256sum", str(target)).split()[0]
    assert digest == hashlib.sha256(data).hexdigest()
    after = {n: link_bytes(h) for n, h in hosts.items()}
    assert after["node1"]["sent"] - before["node1"]["sent"] >= size  # out of the writer
    assert after["st1"]["received"] - before["st1"]["received"] >= size  # into the storage
    assert after["node2"]["received"] - before["node2"]["received"] >= size  # into the reader


@needs_testbed
def test_a_block_appended_on_one_host_reads_at_once_on_another(
    tb: tuple[dict[str, Host], set[int]],
) -> None:
    """What a rank that reads another's data after a barrier relies on: the other mount knows
    the file's new size at once (a stale size gives a short read at the end of the file)."""
    script = r"""
set -eu
a=$1; b=$2; f=appended.$$; short=0
for i in $(seq 1 20); do
  dd if=/dev/urandom of=$a/$f bs=256K count=1 seek=$i oflag=direct conv=notrunc status=none
  n=$(dd if=$b/$f bs=256K count=1 skip=$i iflag=direct status=none | wc -c)
  [ "$n" -eq 262144 ] || short=$((short + 1))
done
rm -f $a/$f
echo $short
"""
    mnt = RUN_DIR / "mnt"
    out = subprocess.run(["bash", "-c", script, "-", str(mnt / "ion1"), str(mnt / "ion2")],
                         capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    assert out.stdout.strip() == "0", out.stdout + out.stderr


@needs_testbed
def test_status_reports_the_volume_options(tb: tuple[dict[str, Host], set[int]]) -> None:
    doc = cluster.status()
    assert doc is not None and doc["phase"] == "up"
    assert doc["facts"]["volume_options"]["performance.strict-o-direct"] == "on"
    assert doc["facts"]["volume_options"]["performance.stat-prefetch"] == "off"
    assert all(p["alive"] for p in doc["processes"])
    assert all(h["mounted"] for h in doc["hosts"] if h["role"] != "storage")


# -- iorelay run in an allocation on the testbed ----------------------------------------------

RUN_SCRIPT = r"""
set -eu
out=$1
for ns in {netns}; do
  for pid in $(ip netns pids $ns); do echo "$ns $(cat /proc/$pid/comm)"; done
done > $out/daemon-netns.txt
srun --exclude=$IORELAY_IONODE_HOSTS -N1 -n1 sh -c \
  'hostname; dd if={shared}/run-input of=/fwd/out bs=1M status=none' > $out/rank-host.txt
i=0
for a in $(echo $IORELAY_SERVERS | tr , ' '); do
  {iorelay} stats $a --json > $out/stats-$i.json; i=$((i+1))
done
echo "$IORELAY_SERVERS" > $out/servers.txt
"""


def _run_through_two_ionodes(
    hosts: dict[str, Host], root: Path, script: str, out: Path, timeout_s: float
) -> subprocess.CompletedProcess[str]:
    """`sh -c SCRIPT sh OUT` under `iorelay run --ionodes 2` inside salloc over every host but
    the storage one, exporting `root` at /fwd."""
    env = {**os.environ, **testbed_slurm.env()}
    return subprocess.run(
        ["salloc", f"--nodes={len(hosts) - 1}", "--quiet", sys.executable, "-m", "iorelay",
         "run", "--ionodes", "2", "--shared-dir", str(SHARED_PATH), "--root", str(root),
         "--prefix", "/fwd", "--", "sh", "-c", script, "sh", str(out)],
        capture_output=True, text=True, timeout=timeout_s, env=env,
    )  # fmt: skip


def _assert_links_carried(ions: list[Host], before: dict[str, dict[str, int]], size: int) -> None:
    """The I/O nodes' links together took in and sent out at least `size` bytes since `before`."""
    after = {h.name: link_bytes(h) for h in ions}
    assert sum(after[n]["received"] - before[n]["received"] for n in after) >= size
    assert sum(after[n]["sent"] - before[n]["sent"] for n in after) >= size


def _max_key(doc: object, key: str) -> int:
    if isinstance(doc, dict):
        return max([int(v) if k == key else _max_key(v, key) for k, v in doc.items()] or [0])
    if isinstance(doc, list):
        return max([_max_key(v, key) for v in doc] or [0])
    return 0


@needs_testbed
@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_iorelay_run_puts_daemons_on_the_ionode_hosts(
    tb: tuple[dict[str, Host], set[int]],
) -> None:
    """salloc over every host; `iorelay run --ionodes 2` starts iorelayd on ion1 and ion2 (in
    their namespaces, at their addresses); a rank on a compute host writes through them and
    the data lands on GlusterFS, crossing the I/O nodes' links."""
    hosts, _ = tb
    ions = [h for h in hosts.values() if h.role == "ionode"]
    size = 6 * 1024 * 1024
    data = os.urandom(size)
    (SHARED_PATH / "run-input").write_bytes(data)
    out = SHARED_PATH / "run-out"
    out.mkdir()
    root = SHARED_PATH / "run-root"
    script = RUN_SCRIPT.format(
        netns=" ".join(h.netns for h in ions),
        shared=SHARED_PATH,
        iorelay=Path(sys.executable).with_name("iorelay"),
    )
    before = {h.name: link_bytes(h) for h in ions}
    proc = _run_through_two_ionodes(hosts, root, script, out, timeout_s=120)
    assert proc.returncode == 0, proc.stderr
    servers = (out / "servers.txt").read_text().strip().split(",")
    assert sorted(s.split(":")[1] for s in servers) == sorted(h.address for h in ions)
    netns = (out / "daemon-netns.txt").read_text().splitlines()
    for h in ions:
        assert f"{h.netns} iorelayd" in netns, netns
    assert (out / "rank-host.txt").read_text().split()[0].startswith("node")
    assert (root / "out").read_bytes() == data  # on GlusterFS, through the daemons
    written = sum(_max_key(json.loads(p.read_text()), "bytes_written") for p in out.glob("stats-*"))
    assert written >= size
    _assert_links_carried(ions, before, size)
    for h in ions:  # stopped at the end
        assert (
            "iorelayd"
            not in subprocess.run(
                ["ip", "netns", "pids", h.netns], capture_output=True, text=True
            ).stdout
        )


FIO_SCRIPT = r"""
set -eu
out=$1
srun --exclude=$IORELAY_IONODE_HOSTS -N2 -n2 sh -c 'hostname > {out}/host-$SLURM_PROCID; \
  exec fio --name=v --filename=/fwd/fio-$SLURM_PROCID --rw=write --bs=64k --size=4m \
  --direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
  --output={out}/fio-$SLURM_PROCID.txt'
i=0
for a in $(echo $IORELAY_SERVERS | tr , ' '); do
  {iorelay} stats $a --json > $out/stats-$i.json; i=$((i+1))
done
"""


@needs_testbed
@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_fio_verifies_through_the_ionodes_from_both_compute_hosts(
    tb: tuple[dict[str, Host], set[int]],
) -> None:
    """fio with crc32c verification, one job on each compute host, O_DIRECT through
    `iorelay run --ionodes 2` inside salloc: both verify, the files are on GlusterFS, and the
    daemons' counters and the I/O nodes' links carried the writes and the verifying reads."""
    hosts, _ = tb
    ions = [h for h in hosts.values() if h.role == "ionode"]
    out = SHARED_PATH / "fio-out"
    out.mkdir()
    root = SHARED_PATH / "fio-root"
    script = FIO_SCRIPT.format(out=out, iorelay=Path(sys.executable).with_name("iorelay"))
    before = {h.name: link_bytes(h) for h in ions}
    proc = _run_through_two_ionodes(hosts, root, script, out, timeout_s=180)
    logs = "".join(p.read_text() for p in out.glob("fio-*.txt"))
    assert proc.returncode == 0, proc.stderr + logs
    size = 4 << 20
    ranks_on = {(out / f"host-{i}").read_text().strip() for i in range(2)}
    assert ranks_on == {h.name for h in hosts.values() if h.role == "compute"}
    for i in range(2):  # --verify_fatal: a bad block would also have failed the run
        assert "err= 0" in (out / f"fio-{i}.txt").read_text()
        assert (root / f"fio-{i}").stat().st_size == size  # on GlusterFS, through the daemons
    stats = [json.loads(p.read_text()) for p in out.glob("stats-*.json")]
    assert len(stats) == 2
    assert sum(_max_key(s, "bytes_written") for s in stats) >= 2 * size
    assert sum(_max_key(s, "bytes_read") for s in stats) >= 2 * size  # the verify
    _assert_links_carried(ions, before, 2 * size)


@needs_testbed
@pytest.mark.needs_build("iorelayd")
def test_iorelay_run_fails_fast_when_a_daemon_cannot_start(
    tb: tuple[dict[str, Host], set[int]],
) -> None:
    """A daemon that cannot bind (no such interface) fails `iorelay run` within 10 s + launch,
    with the host named, and leaves no step running."""
    env = {**os.environ, **testbed_slurm.env()}
    t0 = time.monotonic()
    proc = subprocess.run(
        ["salloc", "--nodes=2", "--nodelist=ion1,node1", "--quiet", sys.executable, "-m",
         "iorelay", "run", "--ionode-hosts", "ion1", "--ionode-interface", "nosuch0",
         "--shared-dir", str(SHARED_PATH), "--", "true"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "ion1" in proc.stderr and "nosuch0" in proc.stderr
    assert time.monotonic() - t0 < 20
    steps = subprocess.run(["squeue", "-h", "-s"], capture_output=True, text=True, env=env)
    assert "iorelayd" not in steps.stdout


@needs_testbed
@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_each_compute_host_writes_through_its_own_ionode(
    tb: tuple[dict[str, Host], set[int]],
) -> None:
    """Ranks on node1 and node2 started through `iorelay exec` get node ids 0 and 1 from the
    run file (their index among the allocation's compute hosts), so block placement sends
    each host's file to its own daemon: both daemons carry data."""
    root = SHARED_PATH / "ids-root"
    script = (
        f"srun --exclude=$IORELAY_IONODE_HOSTS -N2 -n2 {sys.executable} -m iorelay.exec_cmd -- "
        "sh -c 'dd if=/dev/zero of=/fwd/out-$SLURMD_NODENAME bs=64k count=16 status=none' && "
        f"for a in $(echo $IORELAY_SERVERS | tr , ' '); do "
        f"{Path(sys.executable).with_name('iorelay')} stats $a --json; echo; done"
    )
    env = {**os.environ, **testbed_slurm.env()}
    proc = subprocess.run(
        ["salloc", "--nodes=4", "--quiet", sys.executable, "-m", "iorelay", "run",
         "--ionodes", "2", "--no-preload", "--shared-dir", str(SHARED_PATH), "--root",
         str(root), "--prefix", "/fwd", "--", "sh", "-c", script],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    docs, text, decoder = [], proc.stdout.strip(), json.JSONDecoder()
    while text:  # one JSON document per daemon, pretty-printed
        doc, end = decoder.raw_decode(text)
        docs.append(doc)
        text = text[end:].strip()
    assert [_max_key(d, "bytes_written") for d in docs] == [1 << 20, 1 << 20]
    assert sorted(p.name for p in root.iterdir()) == ["out-node1", "out-node2"]


@needs_testbed
@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_node_aggregation_puts_a_relay_on_each_compute_host(
    tb: tuple[dict[str, Host], set[int]],
) -> None:
    """`iorelay run --node-aggregation` in an allocation of ion1, node1 and node2 starts a relay
    on each compute host; the ranks' one address (an abstract Unix socket) reaches the relay
    of the host they run on, over shared memory, and each relay forwards its host's writes to
    ion1, merged; the files land on GlusterFS and every relay is gone at the end."""
    hosts, _ = tb
    root = SHARED_PATH / "agg-root"
    out = SHARED_PATH / "agg-out"
    out.mkdir()
    iorelay = Path(sys.executable).with_name("iorelay")
    write = (
        "for i in 0 1 2 3; do dd if=/dev/zero of=/fwd/out-$SLURMD_NODENAME-$i bs=8k count=64 "
        "oflag=direct status=none & done; wait"
    )
    script = (
        f"srun --exclude=$IORELAY_IONODE_HOSTS -N2 -n2 {sys.executable} -m iorelay.exec_cmd -- "
        f"sh -c '{write}' && "
        f"srun --exclude=$IORELAY_IONODE_HOSTS -N2 -n2 sh -c "
        f"'{iorelay} stats $IORELAY_SERVERS --json > {out}/relay-$SLURMD_NODENAME.json' && "
        f"echo $IORELAY_SERVERS > {out}/servers.txt"
    )
    env = {**os.environ, **testbed_slurm.env()}
    proc = subprocess.run(
        ["salloc", "--nodes=3", "--nodelist=ion1,node1,node2", "--quiet", sys.executable, "-m",
         "iorelay", "run", "--ionode-hosts", "ion1", "--node-aggregation", "--no-preload",
         "--shared-dir", str(SHARED_PATH), "--root", str(root), "--prefix", "/fwd", "--",
         "sh", "-c", script],
        capture_output=True, text=True, timeout=180, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert (out / "servers.txt").read_text().startswith("unix:@iorelay-relay-")
    for node in ("node1", "node2"):
        for i in range(4):
            assert (root / f"out-{node}-{i}").stat().st_size == 64 * 8192
        relay = json.loads((out / f"relay-{node}.json").read_text())
        assert relay["role"] == "relay"
        assert relay["total"]["bytes_written"] == 4 * 64 * 8192  # its host's writes only
        assert relay["connections_shm_attached"] >= 4
        calls = relay["backend_calls"]
        upstream = int(calls.get("pwritev", 0)) + int(calls.get("pwrite", 0))
        assert 0 < upstream <= 4 * 64
    for h in hosts.values():
        pids = subprocess.run(["ip", "netns", "pids", h.netns], capture_output=True, text=True)
        assert "iorelayd" not in pids.stdout


EXPLORE_SWEEP = """
[sweep]
repetitions = 1
timeout_s = 60
[pattern]
layout = "shared"
spatiality = "strided"
processes = 4
ranks_per_node = 2
request = "64K"
total = "2M"
odirect = true
operations = ["write", "read"]
[relay]
ionodes = [0, 2]
scheduler = "aioli"
"""


@needs_testbed
@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl", "iorelay-bench")
def test_explore_on_the_testbed(tb: tuple[dict[str, Host], set[int]], tmp_path: Path) -> None:
    """`iorelay explore --testbed`: a direct and a 2-I/O-node run of 4 ranks on node1 and node2;
    rows in the analysis schema, the forwarded one with each I/O node's bytes from its
    counters (block placement: node1 → ion1, node2 → ion2). While it runs it holds the
    testbed: `iorelay testbed down` refuses, naming it; afterwards it holds it no more."""
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(EXPLORE_SWEEP)
    out = tmp_path / "out"
    proc = _explore_in_background(sweep, out)
    try:
        _wait_until_held_by(proc)
        down = subprocess.run(
            [sys.executable, "-m", "iorelay", "testbed", "down"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert down.returncode == 1 and f"in use by pid {proc.pid}" in down.stderr, down.stderr
        _, stderr = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr
    assert hold.doc() == [] and testbed_explore.is_up()  # brought up by hand: it stays
    rows = pd.read_csv(out / "results.csv")
    assert sorted(rows["ionodes"]) == [0, 0, 2, 2] and (rows["wrong_words"] == 0).all()
    assert (rows["platform"] == "testbed").all() and (rows["compute_hosts"] == 2).all()
    fwd = rows[rows["ionodes"] == 2].iloc[0]
    assert fwd["daemon_bytes_by_host"] == f"ion1={2 << 20};ion2={2 << 20}"  # 1 MiB w + 1 MiB r
    assert fwd["ionode_link_mib"] >= 4


# The writer paces itself (64 KiB, then 5 ms), so the kill lands mid-run whatever the load.
WRITER = """
import sys, time
data = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb", buffering=0) as f:
    for i in range(0, len(data), 1 << 16):
        f.write(data[i : i + (1 << 16)])
        time.sleep(0.005)
"""
KILL_SCRIPT = r"""
sent() {{ tc -s qdisc show dev {veth} | awk '/Sent/ {{print $2; exit}}'; }}
start=$(sent)
srun --exclude=$IORELAY_IONODE_HOSTS -N1 -n1 {python} -c '{writer}' {src} /fwd/big &
i=0  # until 2 MiB more crossed the link into ion1 (the rank writing through it), at most 20 s
while [ $(( $(sent) - start )) -lt 2097152 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
for p in $(ip netns pids {netns}); do
  [ "$(cat /proc/$p/comm)" = iorelayd ] && kill -9 $p
done
wait $!
"""


@needs_testbed
@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_a_daemon_killed_mid_run_hands_its_files_to_the_other(
    tb: tuple[dict[str, Host], set[int]],
) -> None:
    """iorelayd on ion1 is SIGKILLed while a rank on a compute host writes through it: the
    client moves the file to ion2's daemon (one stderr line), the write completes, and the file
    on GlusterFS holds every byte."""
    hosts, _ = tb
    data = os.urandom(16 * 1024 * 1024)  # 256 writes, >= 1.3 s with the pauses
    src = SHARED_PATH / "kill-input"
    src.write_bytes(data)
    root = SHARED_PATH / "kill-root"
    script = KILL_SCRIPT.format(
        veth=hosts["ion1"].veth,
        python=sys.executable,
        writer=WRITER,
        src=src,
        netns=hosts["ion1"].netns,
    )
    env = {**os.environ, **testbed_slurm.env()}
    proc = subprocess.run(
        ["salloc", "--nodes=4", "--quiet", sys.executable, "-m", "iorelay", "run",
         "--ionodes", "2", "--shared-dir", str(SHARED_PATH), "--root", str(root),
         "--prefix", "/fwd", "--", "sh", "-c", script],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "does not answer; its files move to daemon 1" in proc.stderr, proc.stderr
    assert (root / "big").read_bytes() == data


SSH_SCRIPT = r"""
set -eu
for ns in {netns}; do
  for pid in $(ip netns pids $ns); do echo "$ns $(cat /proc/$pid/comm)"; done
done > {out}/daemon-netns.txt
dd if={src} of=/fwd/out bs=1M status=none
echo "$IORELAY_SERVERS" > {out}/servers.txt
{iorelay} stats $(echo $IORELAY_SERVERS | cut -d, -f1) --json > {out}/stats.json
"""


def _ssh_run(hostfile: Path, root: Path, script: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **testbed_ssh.ssh_env()}
    env.pop("SLURM_JOB_ID", None)
    return subprocess.run(
        [sys.executable, "-m", "iorelay", "run", "--launcher", "ssh", "--hostfile", str(hostfile),
         "--root", str(root), "--prefix", "/fwd", "--", "sh", "-c", script],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip


def _iorelayd_in(netns: str) -> bool:
    pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout
    comms = [Path(f"/proc/{p}/comm") for p in pids.split()]
    return any(c.exists() and c.read_text().strip() == "iorelayd" for c in comms)


@needs_testbed
@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_iorelay_run_over_ssh_outside_slurm(
    tb: tuple[dict[str, Host], set[int]], tmp_path: Path
) -> None:
    """`--launcher ssh --hostfile F` outside any allocation: one iorelayd per host over ssh (in
    its namespace, at its address), the credential copied through ssh's stdin, the data through
    the daemon onto GlusterFS; everything stopped and removed at the end. An unreachable host
    fails the run by the 10 s deadline, names the host, and stops the daemon already started."""
    if not testbed_ssh.available():
        pytest.skip("openssh-server is not installed (make testbed-deps)")
    hosts, _ = tb
    ions = [hosts["ion1"], hosts["ion2"]]
    data = os.urandom(3 * 1024 * 1024)
    src = SHARED_PATH / "ssh-input"
    src.write_bytes(data)
    root, out = SHARED_PATH / "ssh-root", tmp_path / "out"
    out.mkdir()
    hostfile = tmp_path / "hosts"
    hostfile.write_text("ion1\nion2\n")
    script = SSH_SCRIPT.format(netns=" ".join(h.netns for h in ions), out=out, src=src,
                               iorelay=Path(sys.executable).with_name("iorelay"))  # fmt: skip
    proc = _ssh_run(hostfile, root, script)
    assert proc.returncode == 0, proc.stderr
    servers = (out / "servers.txt").read_text().strip().split(",")
    assert [s.split(":")[1] for s in servers] == [h.address for h in ions]
    netns = (out / "daemon-netns.txt").read_text().splitlines()
    assert all(f"{h.netns} iorelayd" in netns for h in ions), netns
    assert _max_key(json.loads((out / "stats.json").read_text()), "bytes_written") >= len(data)
    assert (root / "out").read_bytes() == data
    assert not any(_iorelayd_in(h.netns) for h in ions)
    assert not list(Path("/tmp").glob("iorelayd.*"))  # each host's credential directory

    hostfile.write_text("ion1\n10.199.77.250\n")  # on the bridge's subnet; nobody answers
    t0 = time.monotonic()
    proc = _ssh_run(hostfile, root, "true")
    elapsed = time.monotonic() - t0
    assert proc.returncode == 1
    assert "iorelayd on 10.199.77.250" in proc.stderr, proc.stderr
    assert elapsed < 15, elapsed
    assert not _iorelayd_in(hosts["ion1"].netns)


@needs_testbed
@pytest.mark.needs_build("iorelayd")
def test_iorelay_run_gives_up_on_an_unreachable_host_within_10_s(
    tb: tuple[dict[str, Host], set[int]],
) -> None:
    """ion2's link goes down (Slurm does not know yet): the run fails by iorelay's own 10 s
    deadline, names ion2, and stops the daemon it had started on ion1. Last before `down`
    (which must cope with ion2's dead mount): ion2 stays unusable."""
    hosts, _ = tb
    subprocess.run(
        ["ip", "netns", "exec", hosts["ion2"].netns, "ip", "link", "set", "eth0", "down"],
        check=True,
    )
    env = {**os.environ, **testbed_slurm.env()}
    t0 = time.monotonic()
    proc = subprocess.run(
        ["salloc", "--nodes=2", "--nodelist=ion1,ion2", "--quiet", sys.executable, "-m",
         "iorelay", "run", "--ionodes", "2", "--shared-dir", str(SHARED_PATH), "--", "true"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    elapsed = time.monotonic() - t0
    assert proc.returncode == 1
    assert "iorelayd on ion2 was not ready within 10 s" in proc.stderr, proc.stderr
    assert elapsed < 20, elapsed  # 10 s deadline + allocation and stop
    pids = subprocess.run(
        ["ip", "netns", "pids", hosts["ion1"].netns], capture_output=True, text=True
    ).stdout.split()
    comms = [
        Path(f"/proc/{p}/comm").read_text().strip() for p in pids if Path(f"/proc/{p}").exists()
    ]
    assert "iorelayd" not in comms


def _explore_in_background(sweep: Path, out: Path) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "iorelay", "explore", "--testbed", str(sweep), "--out", str(out)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_until_held_by(proc: subprocess.Popen[str], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while proc.pid not in [h["pid"] for h in hold.doc()]:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run did not hold the testbed"
        time.sleep(0.1)


@needs_testbed
@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl", "iorelay-bench")
def test_down_mid_run_ends_the_run_with_one_error_and_leaves_nothing(
    tb: tuple[dict[str, Host], set[int]], tmp_path: Path
) -> None:
    """The testbed taken down (as `iorelay testbed down --force`) while `iorelay explore
    --testbed` runs: the sweep ends within seconds with one error line (no traceback, exit 1),
    and nothing is left."""
    _, pids_before = tb
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(EXPLORE_SWEEP.replace('"2M"', '"64M"').replace("[0, 2]", "[0]"))
    proc = _explore_in_background(sweep, tmp_path / "out")
    try:
        _wait_until_held_by(proc)
        deadline = time.monotonic() + 60  # until the run is on the testbed (its directory)
        while not list(SHARED_PATH.glob("explore-*")) and time.monotonic() < deadline:
            time.sleep(0.1)
        with hold.locked():  # as `iorelay testbed down --force` (test_testbed_hold.py)
            assert cluster.down() > 0
        t_down = time.monotonic()
        _, stderr = proc.communicate(timeout=60)
        ended_s = time.monotonic() - t_down
    finally:
        proc.kill()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr and ended_s < 30, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("iorelay explore:")]
    assert errors == [
        "iorelay explore: the testbed went down during the run (iorelay testbed down by another "
        "user?); run again to resume"
    ], stderr
    assert_nothing_left(pids_before)
    assert cluster.down() == 0.0  # idempotent


@needs_testbed
def test_two_storage_hosts_serve_one_distributed_volume() -> None:
    """--storage 2: a distributed volume of one brick per storage host; files written on a
    compute host spread over both bricks (GlusterFS hashes names) and read back on an I/O node;
    each storage host's link carried its share; `down` leaves nothing."""
    pids_before = _daemon_pids()
    try:
        state = cluster.up(Config(compute=1, ionode=1, storage=2))
    except Busy as e:
        pytest.skip(str(e))
    try:
        hosts = {h.name: h for h in cluster.hosts_of(state)}
        before = {n: link_bytes(hosts[n])["received"] for n in ("st1", "st2")}
        script = f"for i in $(seq 1 16); do head -c 262144 /dev/urandom > {SHARED_PATH}/d$i; done"
        srun("node1", "sh", "-c", script)
        on_node = srun("node1", "sh", "-c", f"cat {SHARED_PATH}/d* | sha256sum")
        assert srun("ion1", "sh", "-c", f"cat {SHARED_PATH}/d* | sha256sum") == on_node
        bricks = {n: {p.name for p in (DATA_DIR / n / "brick").glob("d*")} for n in ("st1", "st2")}
        assert bricks["st1"] and bricks["st2"], bricks  # 16 names: both bricks get some
        assert bricks["st1"] | bricks["st2"] == {f"d{i}" for i in range(1, 17)}
        for n in ("st1", "st2"):
            share = len(bricks[n]) * 262144
            assert link_bytes(hosts[n])["received"] - before[n] >= share
    finally:
        cluster.down()
    assert_nothing_left(pids_before)


@needs_testbed
def test_down_after_an_up_that_failed_half_way(monkeypatch: pytest.MonkeyPatch) -> None:
    pids_before = _daemon_pids()

    def fail(*_: object) -> None:
        raise StepError("injected: slurmctld does not start")

    monkeypatch.setattr(testbed_slurm, "start_slurmctld", fail)
    busy = False
    try:
        with pytest.raises(StepError) as failure:
            cluster.up(Config(compute=1, ionode=1, storage=1))
        busy = isinstance(failure.value, Busy)  # another run's testbed: leave it alone
        if not busy:
            assert "injected" in str(failure.value)
            assert STATE_FILE.exists()  # recorded, with glusterd and munged running
    finally:
        if not busy:
            cluster.down()
    if busy:
        pytest.skip(str(failure.value))
    assert_nothing_left(pids_before)
