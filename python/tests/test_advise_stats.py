"""`iorelay advise --stats ADDRESS...`: the pattern read from a running job's daemons (their
counters: operation, mean request size, layout by the per-file bytes, ranks by the open client
connections), advised from measured results; real daemons, real writers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advise_synthetic import BEST
from conftest import SUBPROCESS_TIMEOUT_S, DaemonFactory, run_strided_writers

from iorelay import cli
from iorelay.advise.from_stats import stats_pattern
from iorelay.advise.observed import ObservedError


@pytest.fixture(autouse=True)
def cache_home(advise_measured, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(advise_measured[1]))


def advise(*argv: str, capsys) -> tuple[int, str, str]:
    status = cli.main(["advise", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.needs_build("iorelayd", "iorelay-ctl", "strided_writer")
def test_advice_from_the_daemons_of_a_job(
    daemon_factory: DaemonFactory, advise_measured, monkeypatch, capsys
) -> None:
    """4 writers of one file in 8 KiB strides through 2 daemons: shared, 8 KiB writes; the
    measurements' best for shared strided files is 2 I/O nodes."""
    d = daemon_factory(2)
    run_strided_writers(d, f"{d.prefix}/t.dat", 4, 16, 8192)
    monkeypatch.setenv("IORELAY_SECRET_FILE", d.env()["IORELAY_SECRET_FILE"])
    addresses = d.env()["IORELAY_SERVERS"].split(",")
    measured = str(advise_measured[0])
    status, out, err = advise(
        "--stats", *addresses, "--spatiality", "strided", "--nodes", "2", "--ranks", "4",
        "--measured", measured, "--json", capsys=capsys,
    )  # fmt: skip
    assert status == 0, err
    answer = json.loads(out)
    assert answer["pattern"].startswith(
        "layout=shared,spatiality=strided,request=8KiB,ranks=4,nodes=2,operation=write"
    )
    assert answer["recommended"]["ionodes"] == BEST[("shared", "strided")] == 2
    assert answer["read_from"].startswith("counters of the daemons tcp:")
    assert any("524288 write bytes in 64 requests" in e for e in answer["evidence"])
    assert any("1 file(s); the largest holds 100% of the bytes" in e for e in answer["evidence"])
    # The writers have gone: without --ranks the counters cannot say how many there were.
    status, _, err = advise(
        "--stats", *addresses, "--spatiality", "strided", "--nodes", "2", "--measured", measured,
        capsys=capsys,
    )  # fmt: skip
    assert status == 2
    assert "no client is connected to the daemons now" in err and "--ranks N" in err


@pytest.mark.needs_build("iorelayd", "iorelay-ctl")
def test_ranks_are_the_clients_connected_now(
    daemon_factory: DaemonFactory, advise_measured, monkeypatch, capsys
) -> None:
    """3 processes, each writing its own file through one daemon and holding it open: their
    connections are the ranks, their files make the layout file per process."""
    d = daemon_factory(1)
    env = {**os.environ, **d.env()}
    monkeypatch.setenv("IORELAY_SECRET_FILE", env["IORELAY_SECRET_FILE"])
    holder = (
        "import os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)\n"
        "for i in range(4): os.pwrite(fd, b'x' * 65536, i * 65536)\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", holder, f"{d.prefix}/f{r}"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for r in range(3)
    ]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        status, out, err = advise(
            "--stats", d.env()["IORELAY_SERVERS"], "--spatiality", "contiguous", "--nodes", "1",
            "--measured", str(advise_measured[0]), "--json", capsys=capsys,
        )  # fmt: skip
    finally:
        for p in procs:
            p.communicate("", timeout=SUBPROCESS_TIMEOUT_S)
    assert status == 0, err
    answer = json.loads(out)
    assert "layout=fpp,spatiality=contiguous,request=64KiB,ranks=3,nodes=1" in answer["pattern"]
    assert answer["recommended"]["ionodes"] == BEST[("fpp", "contiguous")]
    assert any("3 client connection(s) open" in e for e in answer["evidence"])


def test_bad_stats_input_is_one_line_and_exit_2(advise_measured, disk_tmp: Path, capsys):
    measured = str(advise_measured[0])
    start = time.monotonic()
    status, _, err = advise(
        "--stats", f"unix:{disk_tmp}/none.sock", "--spatiality", "strided", "--nodes", "1",
        "--measured", measured, capsys=capsys,
    )  # fmt: skip
    assert status == 2 and time.monotonic() - start < SUBPROCESS_TIMEOUT_S
    assert err.startswith("iorelay advise: cannot read the daemons' counters:")
    assert len(err.strip().splitlines()) == 1
    status, _, err = advise(
        "--pattern", "layout=fpp", "--spatiality", "strided", "--measured", measured,
        capsys=capsys,
    )  # fmt: skip
    assert status == 2 and "--spatiality go with --stats" in err


def doc(apps: dict, files: dict | None = None, open_connections: int = 1) -> dict:
    out = {"apps": apps, "connections_open": open_connections}
    if files is not None:
        out["files"] = files
    return out


def app(written: int, read: int, writes: int, reads: int) -> dict:
    return {
        "bytes_written": written,
        "bytes_read": read,
        "by_family": {"write": {"requests": writes}, "read": {"requests": reads}},
    }


def test_what_the_counters_cannot_say_is_named():
    one = [doc({"a": app(1 << 20, 0, 16, 0)}, {"1:2": {"bytes": 1 << 20}}, 3)]
    observed = stats_pattern(one, "strided")
    assert observed.keys == {
        "spatiality": "strided", "request": "65536", "operation": "write", "layout": "shared",
        "ranks": "2",
    }  # fmt: skip
    with pytest.raises(ObservedError, match="no offsets, so no spatiality"):
        stats_pattern(one, None)
    two = [doc({"a": app(10, 0, 1, 0), "b": app(0, 10, 0, 1)}, {})]
    with pytest.raises(ObservedError, match=r"several applications .* \(a, b\): give --app"):
        stats_pattern(two, "strided")
    assert (
        stats_pattern(
            [doc({"a": app(10, 0, 1, 0), "b": app(0, 40, 0, 2)}, {"1:1": {"bytes": 50}})],
            "contiguous",
            "b",
        ).keys["operation"]
        == "read"
    )
    with pytest.raises(ObservedError, match="no per-file view"):
        stats_pattern([doc({"a": app(10, 0, 1, 0)})], "strided")
    with pytest.raises(ObservedError, match="no application has moved data"):
        stats_pattern([doc({"a": app(0, 0, 0, 0)}, {})], "strided")
