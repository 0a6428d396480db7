"""`iorelay explore`: sweep expansion, the default sweep's coverage, and small real sweeps that
are resumed and then analysed by `python -m iorelay.analysis.cli`."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import SUBPROCESS_TIMEOUT_S

from iorelay import explore, explore_run, paths
from iorelay.explore import SweepError, load_sweep, parse_size, parse_sweep
from iorelay.results import ResultsFile, run_key

needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun not installed")


def tiny_sweep(ionodes: list[int]) -> str:
    """2 patterns x len(ionodes) I/O-node counts x 2 repetitions; each run is short."""
    return f"""
[sweep]
seed = 7
repetitions = 2
timeout_s = {SUBPROCESS_TIMEOUT_S}
[pattern]
layout = "shared"
spatiality = ["contiguous", "strided"]
processes = 4
ranks_per_node = 2
request = "16K"
total = "1M"
[relay]
ionodes = {ionodes}
"""


def iorelay_explore(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="iorelay")
    sub = parser.add_subparsers(dest="command", required=True)
    explore.add_parser(sub)
    args = parser.parse_args(["explore", *argv])
    return args.func(args)


# -- sweep files ------------------------------------------------------------------------------


def test_sizes() -> None:
    assert parse_size("64K") == 65536
    assert parse_size("2MiB") == 2 << 20
    assert parse_size(4096) == 4096
    with pytest.raises(SweepError):
        parse_size("lots")


def test_sweep_is_the_product_without_strided_file_per_process() -> None:
    sweep = parse_sweep(
        """
        [sweep]
        repetitions = 3
        [pattern]
        layout = ["fpp", "shared"]
        spatiality = ["contiguous", "strided"]
        request = ["4K", "8K"]
        [relay]
        ionodes = [0, 2]
        """
    )
    assert len(sweep.runs) == 3 * 2 * 2 * 3  # 3 combinations x 2 sizes x 2 ionodes x 3 reps
    assert not any(r["layout"] == "fpp" and r["spatiality"] == "strided" for r in sweep.runs)
    assert len({run_key(r) for r in sweep.runs}) == len(sweep.runs)
    assert sweep.operations == ("write", "read")


def test_order_is_random_but_reproducible() -> None:
    text = tiny_sweep([0, 1, 2])
    a, b = parse_sweep(text).runs, parse_sweep(text).runs
    assert a == b
    ordered = sorted(a, key=lambda r: (r["repetition"], r["ionodes"], r["spatiality"]))
    assert a != ordered
    other = parse_sweep(text.replace("seed = 7", "seed = 8")).runs
    assert other != a and sorted(map(run_key, other)) == sorted(map(run_key, a))


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(SweepError, match="unknown keys"):
        parse_sweep("[pattern]\nrequst = '4K'\n")
    with pytest.raises(SweepError, match="unknown sections"):
        parse_sweep("[patern]\n")
    with pytest.raises(SweepError, match="operations"):
        parse_sweep("[pattern]\noperations = ['read']\n")


def test_default_sweep_covers_the_brief() -> None:
    sweep = load_sweep(None)
    combos = {(r["layout"], r["spatiality"]) for r in sweep.runs}
    assert combos == {("fpp", "contiguous"), ("shared", "contiguous"), ("shared", "strided")}
    assert len({r["request_bytes"] for r in sweep.runs}) == 3
    assert {r["ionodes"] for r in sweep.runs} == {0, 1, 2, 4}
    assert {r["repetition"] for r in sweep.runs} == set(range(5))
    assert len(sweep.runs) == 3 * 3 * 4 * 5


def test_counters_are_read_again_until_they_cover_the_benchmarks_bytes(tmp_path: Path) -> None:
    """A daemon counts a request just after replying: the last one may lag the client's exit."""
    bench = tmp_path / "bench.json"
    bench.write_text('{"phases": [{"operation": "write", "bytes": 100}]}')

    def counters(written: int) -> list[tuple[str, object]]:
        total = {"bytes_written": written, "bytes_read": 0, "requests": 1, "dispatches": 1}
        return [("unix:/d0", {"total": total})]

    answers = iter([counters(60), counters(60), counters(100), counters(100)])
    settled = explore_run.settled_stats(lambda: next(answers), bench)
    assert settled[0][1]["total"]["bytes_written"] == 100
    # Never enough: the last answer is kept (and then judged "not forwarded" by daemon_columns).
    short = explore_run.settled_stats(lambda: counters(10), bench, tries=3)
    assert short[0][1]["total"]["bytes_written"] == 10
    daemons = [{"host": a, "stats": s} for a, s in short]
    assert "not forwarded" in explore_run.daemon_columns(daemons, {"phases": [
        {"operation": "write", "bytes": 100}]})[1]  # fmt: skip


def test_dry_run_lists_and_runs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(tiny_sweep([0, 1]))
    assert iorelay_explore(str(sweep_file), "--out", str(tmp_path / "out"), "--dry-run") == 0
    assert "8 to run" in " ".join(capsys.readouterr().err.split())
    assert not (tmp_path / "out").exists()


# -- real sweeps ------------------------------------------------------------------------------


def explore_resume_analyse(tmp: Path, ionodes: list[int]) -> pd.DataFrame:
    """Runs the tiny sweep, runs it again (nothing new), analyses it; returns the results."""
    sweep_file, out = tmp / "sweep.toml", tmp / "out"
    sweep_file.write_text(tiny_sweep(ionodes))
    assert iorelay_explore(str(sweep_file), "--out", str(out)) == 0
    results = ResultsFile(out)
    first = pd.read_csv(results.csv_path)
    runs = 2 * len(ionodes) * 2
    assert first["run_key"].nunique() == runs
    assert len(first) == 2 * runs  # a write row and a read row per run
    assert iorelay_explore(str(sweep_file), "--out", str(out)) == 0
    again = pd.read_csv(results.csv_path)
    assert len(again) == len(first)  # resumed: nothing ran twice
    parquet = pd.read_parquet(results.parquet_path)
    assert len(parquet) == len(first)
    analysis = subprocess.run(
        [sys.executable, "-m", "iorelay.analysis.cli", str(out), "--out", str(tmp / "report")],
        env={**os.environ, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S * 2,
        check=False,
    )
    assert analysis.returncode == 0, analysis.stderr
    assert (tmp / "report" / "report.html").exists()
    return first


def check_rows(rows: pd.DataFrame) -> None:
    assert set(rows["operation"]) == {"write", "read"}
    assert (rows["bytes"] == 1 << 20).all()
    assert (rows["bandwidth_mib_s"] > 0).all()
    assert (rows["wrong_words"] == 0).all() and (rows["errors"] == 0).all()
    assert (rows["nodes"] == 2).all() and (rows["processes"] == 4).all()
    assert (rows["schema_version"] == 1).all()
    for column in ("scheduler", "placement", "request_bytes", "stonewall_s", "odirect", "command"):
        assert rows[column].notna().all()


@needs_mpirun
@pytest.mark.needs_build("iorelay-bench")
def test_direct_sweep_resumes_and_is_analysed(disk_tmp: Path) -> None:
    rows = explore_resume_analyse(disk_tmp, [0])
    check_rows(rows)


@needs_mpirun
@pytest.mark.needs_build("iorelay-bench", "iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_sweep_direct_and_one_daemon_resumes_and_is_analysed(disk_tmp: Path) -> None:
    rows = explore_resume_analyse(disk_tmp, [0, 1])
    check_rows(rows)
    assert set(rows["ionodes"]) == {0, 1}
    # The daemon's counters say it carried every forwarded byte (each run's write and read).
    forwarded = rows[rows["ionodes"] == 1]
    assert (forwarded["daemon_bytes_written"] >= forwarded["bytes"]).all()
    assert (forwarded["daemon_bytes_read"] >= forwarded["bytes"]).all()
    assert rows.loc[rows["ionodes"] == 0, "daemon_bytes_written"].isna().all()


def test_relay_values_no_run_could_use_are_refused_before_any_run() -> None:
    def runs(relay: str) -> list[dict]:
        return explore.parse_sweep("[pattern]\nprocesses = 2\n" + relay).runs

    explore.check_relay_values(runs("[relay]\nionodes = [0, 1]\nscheduler = 'sjf:gather=1ms'\n"))
    with pytest.raises(explore.SweepError, match="ionodes must be >= 0, got -1"):
        explore.check_relay_values(runs("[relay]\nionodes = [0, -1]\n"))
    with pytest.raises(explore.SweepError, match="unknown placement 'nearest'"):
        explore.check_relay_values(runs("[relay]\nionodes = 1\nplacement = 'nearest'\n"))
    if shutil.which("iorelayd") or (paths.REPO_ROOT / "build/src/iorelayd/iorelayd").exists():
        with pytest.raises(explore.SweepError, match=r"scheduler 'nosuch'.*unknown scheduler"):
            explore.check_relay_values(runs("[relay]\nionodes = 1\nscheduler = 'nosuch'\n"))
    # (a scheduler is not looked at where no run has I/O nodes)
    explore.check_relay_values(runs("[relay]\nionodes = 0\nscheduler = 'nosuch'\n"))


# What each exploration module loads when imported alone in a fresh interpreter: the testbed's
# runner and the local one share explore_run and do not import each other (no circle).
ALONE = {
    "iorelay.explore_run": ["iorelay.explore_run"],
    "iorelay.testbed.explore": ["iorelay.explore_run", "iorelay.testbed.explore"],
    "iorelay.explore": ["iorelay.explore", "iorelay.explore_run", "iorelay.explore_sim"],
}


@pytest.mark.parametrize(("module", "loaded"), ALONE.items())
def test_exploration_modules_import_alone_without_a_circle(module: str, loaded: list[str]) -> None:
    code = (
        f"import sys, {module}\n"
        "print(' '.join(sorted(m for m in sys.modules\n"
        "                      if m.startswith(('iorelay.explore', 'iorelay.testbed.explore')))))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    assert proc.stdout.split() == loaded


# -- MPI-IO dimensions ------------------------------------------------------------------------

MPIIO_SWEEP = """
[sweep]
repetitions = 1
timeout_s = {timeout}
[pattern]
layout = "shared"
spatiality = "strided"
processes = 4
request = "16K"
total = "1M"
api = ["posix", "mpiio"]
collective = [false, true]
aggregators = [0, 2]
[relay]
ionodes = {ionodes}
"""


def test_mpiio_dimensions_expand_only_to_runs_that_can_be() -> None:
    runs = parse_sweep(MPIIO_SWEEP.format(timeout=60, ionodes=[0])).runs
    shapes = sorted(
        (r.get("api", "posix"), r.get("collective"), r.get("aggregators")) for r in runs
    )
    # POSIX: once; MPI-IO: independent, collective with the MPI's aggregators, and with 2.
    assert shapes == [("mpiio", False, 0), ("mpiio", True, 0), ("mpiio", True, 2),
                      ("posix", None, None)]  # fmt: skip
    # A POSIX run's key is the one it had before MPI-IO dimensions existed: results resume.
    (posix,) = [r for r in runs if "api" not in r]
    plain = parse_sweep(tiny_sweep([0]).replace('spatiality = ["contiguous", "strided"]',
                                                 'spatiality = "strided"')).runs  # fmt: skip
    assert run_key(posix) in {run_key({**r, "ranks_per_node": 1, "nodes": 4}) for r in plain}
    # Hints are a dimension like the others: each list entry is one run's extra hints.
    hinted = parse_sweep(
        "[pattern]\napi = 'mpiio'\ncollective = true\n"
        "hints = ['', 'cb_buffer_size=1048576,romio_cb_write=disable']\n"
    ).runs
    assert sorted(r["hints"] for r in hinted if r["repetition"] == 0) == [
        "", "cb_buffer_size=1048576,romio_cb_write=disable"]  # fmt: skip
    for bad, why in (("api = 'hdf5'", "api must be"), ("aggregators = -1", "aggregators must"),
                     ("api = 'mpiio'\nhints = 'cb_nodes'", "key=value")):  # fmt: skip
        with pytest.raises(SweepError, match=why):
            parse_sweep(f"[pattern]\n{bad}\n")


def test_an_mpiio_run_asks_for_its_aggregators_both_ways() -> None:
    config = {"layout": "shared", "spatiality": "strided", "request_bytes": 16384,
              "total_bytes": 1 << 20, "stonewall_s": 0.0, "ranks_per_node": 1, "repetition": 0,
              "wearout": False, "odirect": False, "fsync": False, "api": "mpiio",
              "collective": True, "aggregators": 2, "hints": "cb_buffer_size=1048576"}  # fmt: skip
    argv = explore_run.bench_argv(config, ("write",), Path("/tmp/x/root"))
    i = argv.index("--api")
    assert argv[i : i + 3] == ["--api", "mpiio", "--collective"]
    hints = [argv[j + 1] for j, a in enumerate(argv) if a == "--hint"]
    assert hints == ["cb_nodes=2", "cb_config_list=*:2", "romio_cb_write=enable",
                     "romio_cb_read=enable", "cb_buffer_size=1048576"]  # fmt: skip
    assert explore_run.bench_env(config) == {"OMPI_MCA_io_ompio_num_aggregators": "2"}
    assert explore_run.bench_env({**config, "api": "posix"}) == {}


@needs_mpirun
@pytest.mark.needs_build("iorelay-bench", "iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_an_mpiio_sweep_through_one_ionode_is_analysed_by_aggregators(disk_tmp: Path) -> None:
    sweep = disk_tmp / "sweep.toml"
    sweep.write_text(MPIIO_SWEEP.format(timeout=SUBPROCESS_TIMEOUT_S, ionodes=[1]))
    out = disk_tmp / "results"
    assert iorelay_explore(str(sweep), "--out", str(out)) == 0
    rows = pd.read_csv(out / "results.csv")
    assert len(rows) == 4 * 2  # 4 runs, write and read
    assert (rows["wrong_words"] == 0).all() and (rows["errors"] == 0).all()
    assert (rows["daemon_bytes_written"] >= rows["bytes"]).all()  # through the I/O node
    from iorelay.analysis.reader import read_results

    runs = read_results([out])
    assert set(runs["api"]) == {"posix", "mpiio"}  # the POSIX rows kept, not dropped as missing
    assert sorted(runs.loc[runs["collective"].astype(bool), "aggregators"].unique()) == [0, 2]
