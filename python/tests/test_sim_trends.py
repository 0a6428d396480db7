"""The simulator reproduces Sung et al.'s independent-I/O trends on a Cori-like platform that
its model can express (bench/sim_cori_trends.py; docs/simulator.md says which it cannot)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import sim_cori_trends


@pytest.mark.needs_build("iorelay-sim")
def test_more_nodes_and_more_osts_give_more_throughput() -> None:
    cells = sim_cori_trends.sweep(sim_cori_trends.QUICK)
    assert len(cells) == 12 and all(bw > 0 for bw in cells.values())
    verdicts = sim_cori_trends.trends(cells)
    assert verdicts["nodes"][0], verdicts["nodes"][1]
    assert verdicts["osts"][0], verdicts["osts"][1]
    # OSTs beyond what the ranks can keep busy add little: 8 single-rank nodes gain less from
    # 32 -> 248 OSTs than 32 nodes of 8 ranks do.
    small = cells[(8, 1, 248)] / cells[(8, 1, 32)]
    large = cells[(32, 8, 248)] / cells[(32, 8, 32)]
    assert small < large, (small, large)
