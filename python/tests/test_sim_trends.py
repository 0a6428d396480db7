"""The simulator reproduces Sung et al.'s independent-I/O trends on a Cori-like platform that
its model can express (bench/sim_cori_trends.py; docs/simulator.md says which it cannot)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import sim_cori_trends


@pytest.mark.needs_build("iorelay-sim")
def test_nodes_and_osts_trends_hold() -> None:
    cells = sim_cori_trends.sweep(sim_cori_trends.QUICK)
    assert len(cells) == 16 and all(bw > 0 for bw in cells.values())
    verdicts = sim_cori_trends.trends(cells)
    for trend in ("nodes", "osts", "best"):
        assert verdicts[trend][0], f"{trend}: {verdicts[trend][1]}"
    # The best OST count grows with the nodes: 8 single-rank nodes are as fast on 128 OSTs
    # as on 248, 32 of them are not.
    assert cells[(8, 1, 248)] < cells[(8, 1, 128)] * 1.05
    assert cells[(32, 1, 248)] > cells[(32, 1, 128)] * 1.05
