"""`iorelay explore --testbed` without a testbed: the ranks' launcher line, the check of the
daemons' counters, the testbed sweep, the demo's summary of a results table, and how a run's
allocation is stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from iorelay import explore
from iorelay.explore_run import daemon_columns
from iorelay.proc_tree import descendants, in_session, live_processes, signal_all
from iorelay.testbed import explore as testbed_explore
from iorelay.testbed.demo import summary
from iorelay.testbed.explore import mpi_argv


def test_ranks_go_only_to_the_compute_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IORELAY_MPI", "openmpi")
    argv = mpi_argv(["node1", "node2"], 16, ["IORELAY_SERVERS"], ["bench"])
    assert argv[argv.index("--host") + 1] == "node1:8,node2:8"
    assert argv[argv.index("-x") + 1] == "IORELAY_SERVERS"
    assert argv[-3:] == ["iorelay.exec_cmd", "--", "bench"]
    monkeypatch.setenv("IORELAY_MPI", "mpich")
    argv = mpi_argv(["node1", "node2"], 3, ["A", "B"], ["bench"])
    assert argv[:7] == ["mpiexec.mpich", "-iface", "iorelay-tb0", "-hosts", "node1:2,node2:2",
                        "-n", "3"]  # fmt: skip
    assert argv[argv.index("-genvlist") + 1] == "A,B"


def _daemon(host: str, written: int, read: int) -> dict:
    total = {"bytes_written": written, "bytes_read": read, "requests": 10, "dispatches": 4}
    return {"host": host, "address": f"tcp:{host}:1", "stats": {"total": total}}


BENCH = {"phases": [{"operation": "write", "bytes": 100}, {"operation": "read", "bytes": 100}]}


def test_daemon_counters_must_carry_the_benchmarks_bytes() -> None:
    cols, error = daemon_columns([_daemon("ion1", 60, 50), _daemon("ion2", 40, 50)], BENCH)
    assert error == ""
    assert cols["daemon_bytes_by_host"] == "ion1=110;ion2=90"
    assert cols["requests_per_dispatch"] == 2.5
    _, error = daemon_columns([_daemon("ion1", 0, 0)], BENCH)
    assert "not forwarded" in error
    _, error = daemon_columns([{"host": "ion1", "address": "x", "stats": "refused"}], BENCH)
    assert "no counters from iorelayd on ion1" in error


def test_the_testbed_sweep_parses() -> None:
    sweep = explore.load_sweep(None, testbed_explore.TESTBED_SWEEP)
    assert {r["ionodes"] for r in sweep.runs} == {0, 1, 2}
    assert all(r["odirect"] and r["nodes"] == 2 for r in sweep.runs)


def test_summary_names_the_best_option_and_the_daemons() -> None:
    rows = []
    for rep, (direct, one, two) in enumerate([(5, 20, 15), (6, 22, 14), (7, 18, 16)]):
        for k, bw in ((0, direct), (1, one), (2, two)):
            carried = {0: None, 1: "ion1=8388608", 2: "ion1=4194304;ion2=4194304"}[k]
            rows.append({"spatiality": "strided", "request_bytes": 8192, "operation": "write",
                         "ionodes": k, "bandwidth_mib_s": bw, "run_key": f"{k}-{rep}",
                         "daemon_bytes_by_host": carried,
                         "requests_per_dispatch": None if k == 0 else 4.0})  # fmt: skip
    table = summary(pd.DataFrame(rows))
    row = table.iloc[0]
    assert (row["mib_s_0"], row["mib_s_1"], row["mib_s_2"]) == (6, 20, 15)
    assert row["best_ionodes"] == 1 and row["best_over_direct"] == pytest.approx(3.33)
    assert row["carried_2"] == "ion1 4, ion2 4" and row["runs"] == 9


def test_story_says_where_forwarding_wins_and_where_direct_does() -> None:
    from iorelay.testbed.demo import story

    table = pd.DataFrame([
        {"spatiality": "strided", "request_bytes": 8192, "operation": "write", "mib_s_0": 3.6,
         "mib_s_1": 19.4, "best_ionodes": 1, "best_over_direct": 5.39, "per_dispatch_1": 7.3},
        {"spatiality": "contiguous", "request_bytes": 8192, "operation": "read", "mib_s_0": 11.1,
         "mib_s_1": 3.0, "best_ionodes": 0, "best_over_direct": 1.0, "per_dispatch_1": 1.0},
    ])  # fmt: skip
    text = " ".join(story(table))
    assert "Forwarding wins: strided 8 KiB write 5.39x with 1 I/O node(s), 7.3 requests" in text
    assert (
        "Direct access wins: contiguous 8 KiB read (direct 11.1 MiB/s, best forwarded 3.0 with 1"
        in text
    )


def test_the_summary_file_has_the_table_and_the_story(tmp_path: Path) -> None:
    from iorelay.testbed.demo import write_summary

    rows = [{"spatiality": "strided", "request_bytes": 8192, "operation": "write", "ionodes": k,
             "bandwidth_mib_s": bw, "run_key": str(k), "requests_per_dispatch": 2.0,
             "daemon_bytes_by_host": "ion1=1048576" if k else None}
            for k, bw in ((0, 4.0), (1, 20.0))]  # fmt: skip
    write_summary(summary(pd.DataFrame(rows)), tmp_path / "s.md")
    text = (tmp_path / "s.md").read_text()
    assert (
        "| strided 8 KiB write | 4.0 | 20.0 | 1 (5.00x direct) | 1: ion1 1 (2 req/dispatch) |"
        in text
    )
    assert "Forwarding wins: strided 8 KiB write 5.00x" in text


def test_the_demo_says_where_its_runs_cannot_tell_the_options_apart() -> None:
    """3 runs per option, as the demo's sweep: the strided writes far apart, the strided reads
    within their noise; the caveat names the reads only."""
    from iorelay.analysis import compute
    from iorelay.testbed.demo import significance

    rows = [{"layout": "shared", "spatiality": "strided", "request_bytes": 8192,
             "operation": op, "ionodes": k, "repetition": rep,
             "bandwidth_mib_s": (4.0 + 20.0 * k + rep) if op == "write" else 30.0 + 5 * rep - k}
            for op in ("write", "read") for k in (0, 1, 2) for rep in range(3)]  # fmt: skip
    patterns = compute.analyze(pd.DataFrame(rows), option="ionodes").patterns
    caveat = significance(patterns)
    assert caveat.startswith("In 1 of 2 patterns the runs cannot tell the options apart")
    assert "strided 8 KiB read" in caveat and "write" not in caveat
    assert significance(patterns[patterns["operation"] == "write"]) == ""


# Stand-ins for salloc whose command, in a process group of its own as salloc's is, holds the
# output pipe: one that Slurm cannot answer (the testbed went down) and so ignores SIGTERM, and
# one that ends on SIGTERM and leaves its command behind (then init's child).
STUCK_SALLOC = """
import signal, subprocess, sys, time
if sys.argv[1] == "ignores":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], process_group=0)
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("salloc", ["ignores", "ends"])
def test_a_run_stopped_ends_even_when_salloc_or_its_command_holds_on(
    monkeypatch: pytest.MonkeyPatch, salloc: str
) -> None:
    """The run's allocation is stopped (testbed gone, or its deadline): what salloc leaves
    running after SIGTERM is killed, process groups of their own and orphans included, so the
    stop does not wait for them to end by themselves."""
    monkeypatch.setattr(testbed_explore, "STOP_GRACE_S", 0.5)
    proc = subprocess.Popen([sys.executable, "-c", STUCK_SALLOC, salloc], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        (command,) = descendants(proc.pid)
        assert os.getpgid(command) != proc.pid
        t0 = time.monotonic()
        testbed_explore._stop(proc)
        assert time.monotonic() - t0 < 5
        assert proc.returncode == (-signal.SIGTERM if salloc == "ends" else -signal.SIGKILL)
        deadline = time.monotonic() + 5
        while command in live_processes() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert command not in live_processes()
    finally:
        signal_all(in_session(proc.pid), signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=5)
