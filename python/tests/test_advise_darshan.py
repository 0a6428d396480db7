"""`iorelay advise --darshan`: every log shipped in the pinned darshan wheel that records POSIX
or MPI-IO data gets advice with its evidence; damaged logs (truncated, module-less, of another
format) give one line and exit status 2, and pydarshan's own failure modes on them (aborting or
crashing the interpreter, reading zero records without an error, hanging) stay in the child."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import darshan
import pytest

from iorelay import cli
from iorelay.advise import darshan_input
from iorelay.advise.cli import readable
from iorelay.advise.service import AdviceError

LOGS = sorted({p.name: p for p in Path(darshan.__file__).parent.rglob("*.darshan")}.values())
# The shipped logs whose POSIX records move no data, and those without POSIX or MPI-IO records:
# no advice, one line saying so.
NO_DATA = {"noposixopens.darshan": "its POSIX records move no data"}
NO_MODULE = {"noposix.darshan": "no POSIX or MPI-IO records (its modules: LUSTRE, STDIO)"}
ADVISED = [p for p in LOGS if p.name not in NO_DATA and p.name not in NO_MODULE]


@pytest.fixture(autouse=True)
def cache_home(advise_measured, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(advise_measured[1]))


def advise(measured: Path, log: Path, capsys, *more: str) -> tuple[int, str, str]:
    argv = ["advise", "--darshan", str(log), "--measured", str(measured), "--json", *more]
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_the_wheel_ships_logs_of_every_kind():
    assert len(LOGS) >= 15
    assert len(ADVISED) >= 13


@pytest.mark.parametrize("log", ADVISED, ids=lambda p: p.name[:40])
def test_every_shipped_log_with_data_gets_advice_with_evidence(advise_measured, log, capsys):
    from advise_synthetic import BEST

    status, out, err = advise(advise_measured[0], log, capsys, "--nodes", "1")
    assert status == 0, err
    a = json.loads(out)
    assert a["read_from"] == f"Darshan log {log}"
    keys = dict(kv.split("=") for kv in a["pattern"].split(","))
    # The made-up measurements' best option for the stratum the log was read as.
    assert a["recommended"]["ionodes"] == BEST[(keys["layout"], keys["spatiality"])]
    assert any(e.endswith(f"layout={keys['layout']}") for e in a["evidence"])
    assert any(e.endswith(f"spatiality={keys['spatiality']}") for e in a["evidence"])
    assert any("share of the job's time in I/O" in e for e in a["evidence"])
    assert keys["nodes"] == "1" and keys["odirect"] == "no"


def test_the_evidence_of_a_known_log(advise_measured, capsys):
    """example.darshan: 2048 processes writing one shared file, 128 MiB at a time, never
    consecutively, on Lustre, 41.9% of the time in I/O (as pydarshan's own summary reports)."""
    log = next(p for p in LOGS if p.name == "example.darshan")
    _, out, _ = advise(advise_measured[0], log, capsys, "--nodes", "64")
    a = json.loads(out)
    assert a["pattern"] == (
        "layout=shared,spatiality=strided,request=128MiB,ranks=2048,nodes=64,operation=write,"
        "odirect=no"
    )
    assert a["notes"]["file_system"] == "lustre"
    assert a["notes"]["io_time_share"] == pytest.approx(0.419, abs=0.001)


def test_phases_with_different_patterns_are_advised_each(advise_measured, capsys):
    """pq_app_readAB_writeC: 4 processes read their own files A and B (500-byte reads), then
    one shared file is written: two phases, read then write, each advised by its own stratum;
    logs of one phase list none."""
    from advise_synthetic import BEST

    log = next(p for p in LOGS if p.name.startswith("pq_app_readAB_writeC"))
    status, out, err = advise(advise_measured[0], log, capsys, "--nodes", "2")
    assert status == 0, err
    answer = json.loads(out)
    phases = answer["phases"]
    assert [p["operation"] for p in phases] == ["read", "write"]
    assert phases[0]["window_s"][1] <= phases[1]["window_s"][0]
    assert phases[0]["pattern"].startswith("layout=fpp,spatiality=contiguous,request=500B,ranks=4")
    assert phases[0]["recommended"] == BEST[("fpp", "contiguous")]
    assert phases[1]["pattern"].startswith("layout=shared,")
    assert phases[1]["recommended"] == BEST[("shared", phases[1]["pattern"].split(",")[1][11:])]
    assert "2 I/O phases with different patterns" in readable(answer)
    one = next(p for p in LOGS if p.name == "example.darshan")
    _, out, _ = advise(advise_measured[0], one, capsys, "--nodes", "64")
    assert "phases" not in json.loads(out)


def test_a_log_without_the_node_count_is_refused(advise_measured, capsys):
    status, out, err = advise(advise_measured[0], ADVISED[0], capsys)
    assert (status, out) == (2, "")
    assert "does not hold the node count: give --nodes N" in err and err.count("\n") == 1


@pytest.mark.parametrize(("name", "says"), [*NO_DATA.items(), *NO_MODULE.items()])
def test_logs_without_data_are_exit_2(advise_measured, name, says, capsys):
    log = next(p for p in LOGS if p.name == name)
    status, out, err = advise(advise_measured[0], log, capsys, "--nodes", "1")
    assert (status, out) == (2, "")
    assert says in err and err.count("\n") == 1


def truncated(log: Path, size: int, folder: Path) -> Path:
    out = folder / f"{log.stem}-{size}.darshan"
    out.write_bytes(log.read_bytes()[:size])
    return out


def cuts(log: Path) -> list[int]:
    """3 KB, min(100 KB, half the size) and half the size, where shorter than the log."""
    size = log.stat().st_size
    return sorted({c for c in (3072, min(102400, size // 2), size // 2) if c < size})


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name[:40])
def test_truncated_copies_are_exit_2(advise_measured, log, tmp_path, capsys):
    for size in cuts(log):
        status, out, err = advise(
            advise_measured[0], truncated(log, size, tmp_path), capsys, "--nodes", "1"
        )
        assert (status, out) == (2, ""), (size, err)
        assert "is truncated" in err or "shorter than a Darshan log's header" in err, err
        assert err.count("\n") == 1


def raw_read(log: Path) -> subprocess.CompletedProcess:
    """pydarshan left to itself on `log`, in a child: its POSIX record count."""
    code = (
        "import sys, darshan\n"
        "with darshan.DarshanReport(sys.argv[1], read_all=True) as r:\n"
        "    print(len(r.records['POSIX']) if 'POSIX' in r.records else 0)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=60
    )


def test_pydarshan_aborts_on_a_short_copy_and_the_child_takes_it(tmp_path):
    """Truncated at 3 KB, sample.darshan aborts (or crashes) the interpreter that reads it;
    the parser's child dies instead of `iorelay advise`."""
    log = truncated(next(p for p in LOGS if p.name == "sample.darshan"), 3072, tmp_path)
    assert raw_read(log).returncode < 0  # killed by a signal: SIGABRT, at times SIGSEGV
    with pytest.raises(AdviceError, match=r"the Darshan parser crashed \(SIG"):
        darshan_input.parse_in_child(log, 60)


def test_pydarshan_reads_zero_records_from_a_cut_copy_without_an_error(tmp_path):
    """Cut at half, sample-goodost.darshan opens with zero POSIX records and no error; the
    header check refuses the copy before pydarshan sees it."""
    log = truncated(next(p for p in LOGS if p.name == "sample-goodost.darshan"), 5358, tmp_path)
    done = raw_read(log)
    assert (done.returncode, done.stdout.strip()) == (0, "0")
    summary = darshan_input.parse_in_child(log, 60)
    assert summary["records"]["POSIX"] == []
    with pytest.raises(AdviceError, match="is truncated: its header places data up to byte"):
        darshan_input.darshan_observed(str(log))


def test_a_parser_that_hangs_is_stopped_at_the_timeout(tmp_path, monkeypatch):
    """pydarshan can hang (a report opened while an earlier one is being collected): the child
    is killed at the timeout. A child that sleeps stands in for the hang."""
    sleeper = tmp_path / "python"
    sleeper.write_text("#!/bin/sh\nexec sleep 30\n")
    sleeper.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(sleeper))
    with pytest.raises(AdviceError, match=r"did not finish within 0\.5 s"):
        darshan_input.parse_in_child(tmp_path / "any.darshan", 0.5)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "shorter than a Darshan log's header"),
        (b"not a darshan log at all" * 20, "no Darshan magic number"),
        (b"2.06\0\0\0\0" + (6567223).to_bytes(8, "little") + bytes(400), "format version '2.06'"),
    ],
)
def test_files_that_are_not_darshan_3_logs_are_exit_2(advise_measured, content, says, tmp_path,
                                                       capsys):  # fmt: skip
    log = tmp_path / "bad.darshan"
    log.write_bytes(content)
    status, out, err = advise(advise_measured[0], log, capsys, "--nodes", "1")
    assert (status, out) == (2, "") and says in err and err.count("\n") == 1
    status, _, err = advise(
        advise_measured[0], tmp_path / "missing.darshan", capsys, "--nodes", "1"
    )
    assert status == 2 and "cannot read the Darshan log" in err
