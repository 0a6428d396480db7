"""`iorelay run --ionodes auto`: the run starts the number of I/O-node daemons `iorelay advise`
advises for the pattern of --pattern, of an earlier run's daemon trace, or of a Darshan log
(0: direct access), and says why; without advice it starts nothing and exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import darshan
import pytest
from advise_synthetic import BEST
from conftest import DaemonFactory, run_strided_writers
from test_run import TIMEOUT, dump_env, iorelay_run


@pytest.fixture(autouse=True)
def cache_home(advise_measured, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(advise_measured[1]))


def servers(env_file: Path) -> int:
    env = json.loads(env_file.read_text())
    return len(env["IORELAY_SERVERS"].split(",")) if "IORELAY_SERVERS" in env else 0


@pytest.mark.needs_build("iorelayd", "strided_writer")
def test_auto_from_a_trace_starts_the_advised_daemons(
    daemon_factory: DaemonFactory, advise_measured, disk_tmp: Path, capsys
) -> None:
    """A real run of 4 ranks writing one file in 8 KiB strides through a traced daemon; the
    trace reads as shared/strided, where the measurements' best is 2 I/O nodes."""
    trace = disk_tmp / "d.trace"
    d = daemon_factory(1, extra_args=["--trace", str(trace)])
    run_strided_writers(d, f"{d.prefix}/t.dat", 4, 16, 8192)
    assert d.stop() == [0]
    out = disk_tmp / "env.json"
    status = iorelay_run(
        "--ionodes", "auto", "--trace", str(trace), "--nodes", "2",
        "--measured", str(advise_measured[0]), "--root", str(disk_tmp / "root"),
        "--no-preload", "--timeout", TIMEOUT, "--", *dump_env(out),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    assert BEST[("shared", "strided")] == 2
    assert servers(out) == 2
    assert "--ionodes auto: 2 I/O nodes for layout=shared,spatiality=strided,request=8KiB" in err
    assert "ranks=4,nodes=2,operation=write,odirect=no (from the daemon trace" in err
    assert "100% of the write requests followed" not in err  # strided: none followed
    assert "-> spatiality=strided" in err


@pytest.mark.needs_build("iorelayd", "iorelay-ctl", "strided_writer")
def test_auto_from_the_counters_of_running_daemons(
    daemon_factory: DaemonFactory, advise_measured, disk_tmp: Path, monkeypatch, capsys
) -> None:
    """The daemons of a job that wrote one file in 8 KiB strides, still running: their
    counters read as shared 8 KiB writes, advised 2 I/O nodes."""
    d = daemon_factory(2)
    run_strided_writers(d, f"{d.prefix}/t.dat", 4, 16, 8192)
    monkeypatch.setenv("IORELAY_SECRET_FILE", d.env()["IORELAY_SECRET_FILE"])
    out = disk_tmp / "env.json"
    status = iorelay_run(
        "--ionodes", "auto", "--stats", *d.env()["IORELAY_SERVERS"].split(","),
        "--spatiality", "strided", "--nodes", "2", "--ranks", "4",
        "--measured", str(advise_measured[0]), "--root", str(disk_tmp / "root"),
        "--no-preload", "--timeout", TIMEOUT, "--", *dump_env(out),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    assert servers(out) == BEST[("shared", "strided")] == 2
    assert "layout=shared,spatiality=strided,request=8KiB,ranks=4,nodes=2" in err
    assert "(from the counters of the daemons" in err


@pytest.mark.needs_build("iorelayd")
def test_auto_can_advise_direct_access(advise_measured, disk_tmp: Path, capsys) -> None:
    out = disk_tmp / "env.json"
    pattern = "layout=fpp,spatiality=contiguous,request=1MiB,ranks=64,nodes=8"
    status = iorelay_run(
        "--ionodes", "auto", "--pattern", pattern, "--measured", str(advise_measured[0]),
        "--root", str(disk_tmp / "root"), "--timeout", TIMEOUT, "--", *dump_env(out),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    assert BEST[("fpp", "contiguous")] == 0
    assert servers(out) == 0
    assert "--ionodes auto: 0 I/O nodes" in err and "iorelay run: direct" in err


@pytest.mark.needs_build("iorelayd")
def test_auto_from_a_darshan_log(advise_measured, disk_tmp: Path, capsys) -> None:
    """sample-goodost.darshan: 48 processes, each writing its own file in 8 MiB steps."""
    log = next(Path(darshan.__file__).parent.rglob("sample-goodost.darshan"))
    out = disk_tmp / "env.json"
    status = iorelay_run(
        "--ionodes", "auto", "--darshan", str(log), "--nodes", "4", "--measured",
        str(advise_measured[0]), "--root", str(disk_tmp / "root"), "--no-preload",
        "--timeout", TIMEOUT, "--", *dump_env(out),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 0, err
    assert servers(out) == BEST[("fpp", "contiguous")]
    assert "layout=fpp,spatiality=contiguous,request=8MiB,ranks=48,nodes=4" in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--ionodes", "auto", "--pattern", "layout=fpp"], "needs --measured RESULTS"),
        (["--pattern", "layout=fpp", "--ionodes", "2"], "go with --ionodes auto"),
        (["--ionodes", "auto", "--trace", "/nonexistent.trace", "--nodes", "2", "--measured", "M"],
         "cannot read the trace"),
        (["--ionodes", "auto", "--measured", "M", "--pattern",
          "layout=fpp,spatiality=contiguous,request=1M,ranks=4,nodes=2,colour=red"],
         "unknown pattern key 'colour'"),
        (["--ionodes", "2", "--choices", "0,2"], "go with --ionodes auto"),
        (["--ionodes", "auto", "--measured", "M", "--choices", "0,3", "--pattern",
          "layout=fpp,spatiality=contiguous,request=1M,ranks=4,nodes=2"],
         "3 I/O nodes were not measured: only counts above the largest measured (4)"),
    ],
)  # fmt: skip
def test_auto_without_advice_starts_nothing(advise_measured, argv, says, disk_tmp, capsys):
    argv = [a if a != "M" else str(advise_measured[0]) for a in argv]
    marker = disk_tmp / "ran"
    status = iorelay_run(*argv, "--root", str(disk_tmp / "root"), "--", "touch", str(marker))
    assert status == 2
    assert says in capsys.readouterr().err
    assert not marker.exists()
