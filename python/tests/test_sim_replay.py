"""`iorelay simulate replay`: a real trace recorded by iorelayd on an emulated disk, replayed in
the simulator with the same scheduler; with FIFO every one of the daemon's dispatches is made
identically."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from conftest import DaemonFactory, run_strided_writers

from iorelay import cli, simulate
from iorelay.trace import read_trace

RANKS, SEGMENTS, BLOCK = 4, 8, 8192


def _record_trace(daemon_factory: DaemonFactory, trace: Path, scheduler: str) -> None:
    """Four strided_writer processes through one iorelayd on an emulated disk, traced."""
    d = daemon_factory(
        1,
        scheduler=scheduler,
        backend="emulated:seek=200us,bw=400MBps",
        extra_args=["--trace", str(trace)],
    )
    run_strided_writers(d, f"{d.prefix}/t.dat", RANKS, SEGMENTS, BLOCK)
    assert d.stop() == [0]  # the trace is complete once the daemon has stopped


def _replay(trace: Path, scheduler: str) -> dict[str, object]:
    args = cli.build_parser().parse_args(
        ["simulate", "replay", str(trace), "--scheduler", scheduler, "--list-dispatches"]
    )
    return simulate.run_tool(simulate.replay_args(args))


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl", "iorelay-sim")
def test_fifo_replay_of_a_real_trace_makes_the_daemons_dispatches(
    daemon_factory: DaemonFactory, disk_tmp: Path
) -> None:
    trace = disk_tmp / "fifo.trace"
    _record_trace(daemon_factory, trace, "fifo")
    t = read_trace(trace)
    data = t[t["op"].isin(["pread", "pwrite", "read", "write"])]
    assert len(data) == RANKS * SEGMENTS
    # FIFO in the daemon: one request per dispatch.
    assert data["dispatch"].nunique() == len(data)

    result = _replay(trace, "fifo")
    assert result["requests"] == result["trace_requests"] == len(data)
    assert result["errors"] == 0
    assert result["bytes"] == result["bytes_at_storage"] == int(data["size"].sum())
    assert result["sessions"] == data["session"].nunique() == RANKS
    assert result["files"] == 1
    assert result["trace_rows"] == len(t)
    assert result["dispatches"] == result["trace_dispatches"] == len(data)
    assert result["identical_dispatch_share"] == 1.0
    # Every request of every session appears once, in its session's order.
    listed = [tuple(m) for d in result["dispatch_list"] for m in d]
    assert len(listed) == len(set(listed)) == len(data)
    for session in data["session"].unique():
        indexes = [i for s, i in listed if s == session]
        assert indexes == list(range(SEGMENTS))


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl", "iorelay-sim")
def test_two_daemons_traces_replay_through_one_io_node_each(
    daemon_factory: DaemonFactory, disk_tmp: Path
) -> None:
    traces = [disk_tmp / "a.trace", disk_tmp / "b.trace"]
    for trace in traces:
        _record_trace(daemon_factory, trace, "fifo")
    args = cli.build_parser().parse_args(
        ["simulate", "replay", *map(str, traces), "--scheduler", "aioli", "--list-dispatches"]
    )
    result = simulate.run_tool(simulate.replay_args(args))
    assert result["ionodes"] == 2
    assert result["sessions"] == 2 * RANKS
    assert result["requests"] == result["trace_requests"] == 2 * RANKS * SEGMENTS
    assert result["bytes_at_storage"] == 2 * RANKS * SEGMENTS * BLOCK
    assert result["trace_dispatches"] == 2 * RANKS * SEGMENTS  # FIFO in both daemons
    # [trace, session, index]: a dispatch never mixes the two daemons' requests.
    for d in result["dispatch_list"]:
        assert len({m[0] for m in d}) == 1


@pytest.mark.needs_build("iorelay-sim")
def test_a_trace_of_another_version_is_one_line_naming_it(tmp_path: Path) -> None:
    old = tmp_path / "old.trace"
    old.write_text("# iorelay-trace 1\ntime_ns\top\n")
    with pytest.raises(simulate.SimulateError, match=r"status 2:\n.*old\.trace: starts with"):
        simulate.run_tool(
            simulate.replay_args(
                argparse.Namespace(
                    platform="local", trace=old, scheduler="fifo", seed=1, list_dispatches=False
                )
            )
        )
    assert cli.main(["simulate", "replay", str(old)]) == 2
