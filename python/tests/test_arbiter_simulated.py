"""The arbiter on simulated concurrent jobs: the figures of a joint run, and a tiny job set run
end to end through iorelay-sim-joint (skipped when it is not built)."""

from __future__ import annotations

import json

import pytest

from iorelay import paths, sim_joint
from iorelay.arbiter import simulated
from iorelay.arbiter.patterns import Pattern, PatternFeatures
from iorelay.arbiter.problem import Pool


def test_set_figures_and_summary() -> None:
    result = {
        "jobs": [
            {"bytes": 2**20 * 100, "end_s": 10.0, "bandwidth_MiBps": 10.0},
            {"bytes": 2**20 * 300, "end_s": 20.0, "bandwidth_MiBps": 15.0},
        ]
    }
    f = simulated.set_figures(result, [1, 0], [{0: 5.0, 1: 20.0}, {0: 30.0, 1: 40.0}])
    assert f["global_mib_s"] == pytest.approx(400 / 20)
    assert f["sum_mib_s"] == pytest.approx(25.0)
    assert f["gap"] == pytest.approx([10 / 20, 15 / 30])
    rows = [
        {"differ": True, "knapsack_global": 2.0, "static_global": 1.0, "knapsack_sum": 1.0,
         "static_sum": 2.0, "gaps": [0.5, 1.0]},
        {"differ": False, "knapsack_global": 1.0, "static_global": 1.0, "knapsack_sum": 1.0,
         "static_sum": 1.0, "gaps": [0.9]},
    ]  # fmt: skip
    s = simulated.summarise(rows)
    assert (s["sets"], s["differ"]) == (2, 1)
    assert s["better_global"] == 0.5 and s["better_global_where_differ"] == 1.0
    assert s["better_sum_where_differ"] == 0.0
    assert s["global_ratio_mean"] == pytest.approx(1.5)
    assert s["gap_median"] == pytest.approx(0.9)


def tiny_platform(tmp_path) -> str:
    doc = {
        "name": "tiny",
        "network": {"latency": "2us"},
        "compute": {"nic": "10Gbps", "start_jitter": "10us"},
        "ionode": {"nic": "10Gbps", "slots": 4},
        "storage": {"kind": "pfs", "nic": "10Gbps", "device": "hdd", "targets": 2,
                    "stripe_size": "64KiB", "stripe_count": 2},
    }  # fmt: skip
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc))
    return str(path)


def pattern(label: str, layout: str, spatiality: str, request_kib: int) -> Pattern:
    return Pattern(label, PatternFeatures(layout, spatiality, request_kib * 1024, 8, 4), {})


def test_a_tiny_job_set_runs_jointly(tmp_path) -> None:
    try:
        tool = paths.find("iorelay-sim-joint")
    except paths.NotBuiltError as e:
        pytest.skip(str(e))
    platform = tiny_platform(tmp_path)
    patterns = [
        pattern("strided-64K", "shared", "strided", 64),
        pattern("fpp-1M", "fpp", "contiguous", 1024),
    ]
    shape = simulated.SimShape(requests_per_rank=4, odirect=False)
    pool = Pool(2, (0, 1, 2))

    def simulate(doc):
        return sim_joint.run(doc, tool)

    isolated = simulated.isolated_values(patterns, pool, platform, shape, 3, simulate)
    assert set(isolated) == {"strided-64K", "fpp-1M"}
    assert all(set(v) == {0, 1, 2} and min(v.values()) > 0 for v in isolated.values())
    row = simulated.evaluate_set(patterns, isolated, pool, platform, shape, 3, simulate)
    assert row["static"] == [1, 1]  # equal compute nodes: one I/O node each
    # Together on one storage, each job is slower than alone at the same option.
    assert all(g < 1.0 for g in row["static_figures"]["gap"])
    assert row["static_global"] > 0 and row["knapsack_global"] > 0
    with pytest.raises(sim_joint.JointSimError, match="unknown job key"):
        sim_joint.run({"platform": platform, "jobs": [{"colour": 1}]}, tool)
