"""The daemon trace, version 2: a real run through iorelayd, read back with iorelay.trace."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DaemonFactory, run_strided_writers

from iorelay.trace import TraceError, read_trace


@pytest.mark.needs_build
def test_trace_of_a_real_run(daemon_factory: DaemonFactory, disk_tmp: Path) -> None:
    trace = disk_tmp / "d.trace"
    d = daemon_factory(1, extra_args=["--trace", str(trace), "--scheduler", "sjf"])
    ranks, segments, block = 4, 16, 8192
    run_strided_writers(d, f"{d.prefix}/t.dat", ranks, segments, block)
    assert d.stop() == [0]  # the trace is complete once the daemon has stopped

    t = read_trace(trace)
    writes = t[t["op"] == "pwrite"]
    assert len(writes) == ranks * segments
    assert (writes["size"] == block).all() and (writes["result"] == block).all()
    assert sorted(writes["offset"]) == [i * block for i in range(ranks * segments)]
    assert writes["session"].nunique() == ranks
    assert writes["app"].nunique() == 1
    assert writes[["dev", "ino"]].drop_duplicates().shape[0] == 1 and (writes["ino"] > 0).all()
    assert set(writes["flags"]) == {"-"}
    assert (writes["completion_ns"] >= writes["arrival_ns"]).all()
    assert (writes["queue_ns"] >= 0).all()
    # Every write was served in a dispatch; the requests of one dispatch are contiguous.
    assert (writes["dispatch"] > 0).all()
    for _, group in writes.groupby("dispatch"):
        offsets = sorted(group["offset"])
        assert offsets == list(range(offsets[0], offsets[0] + block * len(offsets), block))
    # Metadata requests are traced too, outside any dispatch.
    assert (t.loc[t["op"] != "pwrite", "dispatch"] == 0).all()
    assert {"open", "close"} <= set(t["op"])


def test_other_versions_are_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.trace"
    old.write_text("# time_ns app op handle offset size latency_ns result\n1 a open 0 0 0 5 0\n")
    with pytest.raises(TraceError, match="iorelay-trace 2"):
        read_trace(old)
