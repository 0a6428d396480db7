"""The simulator reproduces Sung et al.'s independent-I/O trends on a Cori-like platform that
its model can express (bench/sim_cori_trends.py; docs/validation/simulator-cori-bgq.md says
which it cannot)."""

from __future__ import annotations

import json

import pytest

from iorelay import cori_trends, paths


@pytest.mark.needs_build("iorelay-sim")
def test_nodes_and_osts_trends_hold() -> None:
    cells = cori_trends.sweep(cori_trends.QUICK)
    assert len(cells) == 24 and all(bw > 0 for bw in cells.values())
    verdicts = cori_trends.trends(cells)
    # "ppn" (fewer ranks per node at a fixed number of nodes) is the one the model does not give
    for trend in ("nodes", "osts", "best", "spread"):
        assert verdicts[trend][0], f"{trend}: {verdicts[trend][1]}"
    # The best OST count grows with the nodes: 8 single-rank nodes are as fast on 128 OSTs
    # as on 248, 32 of them are not.
    assert cells[(8, 1, 248)] < cells[(8, 1, 128)] * 1.05
    assert cells[(32, 1, 248)] > cells[(32, 1, 128)] * 1.05


@pytest.mark.needs_build("iorelay-sim")
def test_spreading_processes_helps_through_the_nodes_nics() -> None:
    # 256 processes as 32 nodes x 8 beat 8 x 32 because each node's NIC (8 GB/s) limits what
    # its ranks send; with NICs that limit nothing the two layouts are equal.
    tool = paths.find("iorelay-sim")
    platform = json.loads(cori_trends.PLATFORM.read_text())
    few, many = (cori_trends.simulate(tool, platform, n, r, 248) for n, r in ((8, 32), (32, 8)))
    assert many > few * 1.2
    platform["compute"]["nic"] = "100GBps"
    few, many = (cori_trends.simulate(tool, platform, n, r, 248) for n, r in ((8, 32), (32, 8)))
    assert abs(many - few) < few * 0.02
