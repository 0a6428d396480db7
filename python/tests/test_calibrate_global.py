"""`iorelay calibrate --method global`: differential evolution on the within-pattern ranking,
pinned on a stand-in simulator whose flat start (every option equal) the local search cannot
leave, and (with the tool built) a small real calibration under a budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from iorelay import calibrate, calibrate_global, sim_cells, sim_score
from iorelay.simulate import PLATFORMS_DIR

needs_tool = pytest.mark.needs_build("iorelay-sim")
NAMES = ["ionode.request_overhead", "ionode.slots", "storage.nic"]


def _platform() -> dict[str, Any]:
    return json.loads((PLATFORMS_DIR / "marenostrum4-nominal.json").read_text())


def _stand_in(doc: Any, cells: pd.DataFrame) -> np.ndarray:
    """Each I/O node serves `slots` requests at a time, each taking the per-dispatch overhead;
    the storage's NIC caps every option; direct access gets a quarter of that cap."""
    size = cells["request_bytes"].to_numpy(float)
    k = cells["ionodes"].to_numpy(float)
    slots = calibrate.get_value(doc, "ionode.slots")
    overhead = calibrate.get_value(doc, "ionode.request_overhead")
    cap = calibrate.get_value(doc, "storage.nic")
    forwarded = np.minimum(k * slots * size / overhead, cap)
    return np.where(k > 0, forwarded, cap / 4) / 2**20


def _cells() -> pd.DataFrame:
    rows = [
        {"layout": "fpp", "spatiality": "contiguous", "nodes": 8, "processes": p,
         "request_bytes": t, "operation": "write", "odirect": True, "ionodes": k,
         "bandwidth_mib_s": 1.0}
        for p in (96, 192) for t in (32768, 1 << 20) for k in (0, 1, 2, 4, 8)
    ]  # fmt: skip
    cells = sim_cells.measured_cells(pd.DataFrame(rows))
    truth = _platform()
    calibrate.set_value(truth, "ionode.request_overhead", 3e-3)
    calibrate.set_value(truth, "ionode.slots", 4)
    cells["median"] = _stand_in(truth, cells)
    return cells


def test_the_nominal_start_is_flat_and_the_global_search_finds_the_order() -> None:
    cells = _cells()
    start = cells.assign(simulated=_stand_in(_platform(), cells))
    # Every pattern: the forwarded options flat, tied above direct access; the cheapest tied
    # option (1) gets an eighth of the best.
    assert sim_score.choice_scores(start, options=sim_score.FORWARDED)["cannot_tell"] == 4
    assert sim_score.choices(start)["tie_set"].eq("1/2/4/8").all()
    lines: list[str] = []
    found = calibrate_global.global_search(
        _platform(), cells, NAMES, _stand_in, objective="rank", max_evaluations=40,
        max_minutes=1.0, seed=3, log=lines.append,
    )  # fmt: skip
    assert found.evaluations <= 40
    assert found.objective_before == pytest.approx(1.2148, abs=1e-4)  # 1 - rho + 0.05 x log err
    scored = cells.assign(simulated=found.simulated)
    s = sim_score.choice_scores(scored)
    assert s["within_rho"] == pytest.approx(1.0)
    assert s["regret_ratio"] == pytest.approx(1.0)
    assert s["cannot_tell"] == 0
    assert found.objective_after < 0.05
    # Seeded: the same search again gives the same point; progress after every simulation.
    again = calibrate_global.global_search(
        _platform(), cells, NAMES, _stand_in, objective="rank", max_evaluations=40,
        max_minutes=1.0, seed=3,
    )  # fmt: skip
    assert again.values == found.values
    assert sum("simulations," in line for line in lines) == found.evaluations
    assert lines[-1].startswith("  stopped by evaluations")


def test_the_search_stops_at_its_minutes() -> None:
    found = calibrate_global.global_search(
        _platform(), _cells(), NAMES, _stand_in, max_evaluations=10_000, max_minutes=0.0
    )
    assert found.evaluations == 1  # the start only: the budget was spent after it
    assert found.stopped_by == "minutes"


def test_counts_are_searched_as_powers_of_two() -> None:
    doc = _platform()
    assert calibrate_global._scale("ionode.slots") == (0.0, 6.0, True)
    assert calibrate_global._start(doc, "ionode.slots") == 3.0  # 8 slots
    assert calibrate_global._value("ionode.slots", 5.0) == 32.0


@needs_tool
def test_a_small_global_calibration_writes_its_best_platform(tmp_path: Path) -> None:
    """Two patterns x 0/1/2 I/O nodes through iorelay-sim, 6 simulations."""
    rows = [
        {"layout": lay, "spatiality": "contiguous", "nodes": 2, "processes": 4,
         "request_bytes": 65536, "operation": "write", "odirect": True, "ionodes": k,
         "repetition": r, "bandwidth_mib_s": b * (1 + 0.1 * r)}
        for lay in ("fpp", "shared")
        for k, b in ((0, 50.0), (1, 80.0), (2, 120.0))
        for r in range(3)
    ]  # fmt: skip
    measured = tmp_path / "measured.csv"
    pd.DataFrame(rows).to_csv(measured, index=False)
    out = tmp_path / "fitted.json"
    lines: list[str] = []
    doc = calibrate.calibrate(
        [str(measured)], "marenostrum4-nominal", out, names=NAMES, seed=2, requests_per_rank=2,
        max_evaluations=6, jobs=1, method="global", max_minutes=2.0, log=lines.append,
    )  # fmt: skip
    record = json.loads(out.read_text())["calibration"]
    assert record == doc["calibration"]
    assert record["evaluations"] <= 6
    assert record["method"].startswith("scipy.optimize.differential_evolution")
    assert record["error_after"] <= record["error_before"]
    assert any("within-pattern rho" in line for line in record["training_ranking"])
    assert sum("simulations," in line for line in lines) == record["evaluations"]


class _Counted:
    """The stand-in simulator, counting its simulations."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, doc: Any, cells: pd.DataFrame) -> np.ndarray:
        self.calls += 1
        return _stand_in(doc, cells)


def test_a_resumed_search_is_the_uninterrupted_one_without_simulating_again(
    tmp_path: Path,
) -> None:
    cells, log = _cells(), tmp_path / "search.log.jsonl"
    fit = calibrate_global.global_fit
    whole = fit(_platform(), cells, NAMES, _stand_in, max_evaluations=30, seed=3)
    first = _Counted()
    stopped = fit(_platform(), cells, NAMES, first, max_evaluations=12, seed=3, log_path=log)
    assert first.calls == stopped.evaluations == 12
    # A crash while writing leaves a cut line: it is dropped, and its simulation run again.
    log.write_text(log.read_text() + '{"kind": "evaluation", "x": [1.0')
    rest = _Counted()
    resumed = fit(
        _platform(), cells, NAMES, rest, max_evaluations=30, seed=3, log_path=log, resume=True
    )
    # The stopped search's 12: 10 of the evolution, replayed, and 2 count steps from its best
    # point, which the longer search does not pass (a count step may be a point seen before,
    # so the whole search simulates 29 of its 30).
    assert rest.calls == whole.evaluations - 10
    assert resumed.evaluations == whole.evaluations == 29
    assert resumed.values == whole.values
    assert resumed.objective_after == whole.objective_after
    assert resumed.history == whole.history
    # The log holds every simulation once, and resumes again with nothing left to simulate.
    again = _Counted()
    fit(_platform(), cells, NAMES, again, max_evaluations=30, seed=3, log_path=log, resume=True)
    assert again.calls == 0


def test_a_resume_under_other_settings_is_refused(tmp_path: Path) -> None:
    cells, log = _cells(), tmp_path / "search.log.jsonl"
    calibrate_global.global_fit(
        _platform(), cells, NAMES, _stand_in, max_evaluations=6, seed=3, log_path=log
    )
    with pytest.raises(calibrate.CalibrateError, match="differs in seed"):
        calibrate_global.global_fit(
            _platform(), cells, NAMES, _stand_in, max_evaluations=9, seed=4, log_path=log,
            resume=True,
        )  # fmt: skip
    log.write_text("not json\n" + log.read_text())
    with pytest.raises(calibrate.CalibrateError, match=":1: not a calibration log line"):
        calibrate_global.global_fit(
            _platform(), cells, NAMES, _stand_in, max_evaluations=9, seed=3, log_path=log,
            resume=True,
        )  # fmt: skip


def test_a_share_is_a_plain_number_searched_on_a_log_scale() -> None:
    doc = _platform()
    assert calibrate.get_value(doc, "storage.metanode_share") == 0.5  # the default start
    calibrate.set_value(doc, "storage.metanode_share", 0.6543219)
    assert doc["storage"]["metanode_share"] == 0.654322  # a JSON number, as iorelay-sim reads it
    assert calibrate.get_value(doc, "storage.metanode_share") == pytest.approx(0.654322)
    low, high, integer = calibrate_global._scale("storage.metanode_share")
    assert (low, high, integer) == (
        pytest.approx(np.log10(0.05)),
        pytest.approx(1 - np.log10(2)),
        False,
    )
    assert "storage.metanode_share" in calibrate_global.RANKING_PARAMETERS


@needs_tool
def test_the_metanode_share_peaks_a_shared_file_at_two_forwarders() -> None:
    """A shared file written through 1, 2, 4 and 8 I/O nodes: without the metanode every host
    adds write slots (8 best); with updates lasting 0.65 of each write's device time, a second
    host still adds, more add mostly updates (2 best, then 4), as FORGE's shared files measure."""
    rows = [
        {"layout": "shared", "spatiality": "contiguous", "nodes": 8, "processes": 96,
         "request_bytes": 1 << 20, "operation": "write", "odirect": True, "ionodes": k,
         "bandwidth_mib_s": 1.0}
        for k in (1, 2, 4, 8)
    ]  # fmt: skip
    cells = sim_cells.measured_cells(pd.DataFrame(rows))
    doc = _platform()
    doc["storage"]["device"] = "seek=1us,bw=2.5GBps,access=1MiB:30ms"
    doc["storage"]["file_writes_per_client"] = 2
    plain = sim_cells.simulate_cells(doc, cells, requests_per_rank=4, jobs=1)
    calibrate.set_value(doc, "storage.metanode_share", 0.65)
    shared = sim_cells.simulate_cells(doc, cells, requests_per_rank=4, jobs=1)
    assert int(np.argmax(plain)) == 3  # 8 I/O nodes best without the metanode
    assert list(np.argsort(-shared))[:2] == [1, 2]  # 2, then 4
    assert shared[1] > 1.03 * shared[2]  # told apart beyond the tie rule's 3%


def test_the_choice_objective_weighs_the_forwarded_choice() -> None:
    """Two predictions with the same within-pattern rho over all options: the one that ties
    4 and 8 I/O nodes (and so chooses 4, measured at half of 8) scores worse by the choice
    objective, which adds the forwarded rho and regret; the rank objective cannot tell them."""
    rows = [
        {"layout": "fpp", "spatiality": "contiguous", "nodes": 8, "processes": 96,
         "request_bytes": 1 << 20, "operation": "write", "odirect": True, "ionodes": k,
         "bandwidth_mib_s": b}
        for k, b in ((0, 50.0), (1, 100.0), (2, 200.0), (4, 400.0), (8, 800.0))
    ]  # fmt: skip
    cells = sim_cells.measured_cells(pd.DataFrame(rows))
    tied = np.array([50.0, 100.0, 200.0, 400.0, 401.0])  # 4 and 8 within 3%
    apart = np.array([50.0, 100.0, 200.0, 400.0, 800.0])
    rank, choice = calibrate_global.rank_objective, calibrate_global.choice_objective
    scored = cells.assign(simulated=tied)
    assert sim_score.choice_scores(scored, options=sim_score.FORWARDED)["regret_ratio"] == 0.5
    assert choice(apart, cells) == pytest.approx(0.0)
    assert choice(tied, cells) > choice(apart, cells) + 0.15
    assert rank(tied, cells) - rank(apart, cells) < 0.05


def test_the_search_share_keeps_every_stratum_and_size_cheapest_first() -> None:
    rows = [
        {"layout": lay, "spatiality": "contiguous", "nodes": n, "processes": n * ppn,
         "request_bytes": size << 15, "operation": "write", "odirect": True, "ionodes": 1,
         "bandwidth_mib_s": 1.0}
        for lay in ("fpp", "shared") for ppn in (12, 48) for n in (8, 16) for size in (1, 2, 4)
    ]  # fmt: skip
    cells = sim_cells.measured_cells(pd.DataFrame(rows))
    patterns = sorted(cells["pattern"].unique())
    chosen = calibrate.search_patterns(cells, patterns, 0.34, seed=2)
    assert chosen == calibrate.search_patterns(cells, patterns, 0.34, seed=2)
    picked = cells[cells["pattern"].isin(chosen)]
    # 2 of each layout x processes-per-node stratum's 6, from its 3 on 8 nodes (the cheapest);
    # a request size none of them has is added, again on 8 nodes.
    assert picked.groupby(["layout", "processes"])["pattern"].nunique().ge(2).all()
    assert set(picked["request_bytes"]) == set(cells["request_bytes"])
    assert set(picked["nodes"]) == {8}
    assert calibrate.search_patterns(cells, patterns, 1.0, seed=2) == patterns
    # Every node count too: the cheapest 16-node pattern of each layout (12 per node) is added.
    wide = calibrate.search_patterns(cells, patterns, 0.34, seed=2, every_node_count=True)
    added = cells[cells["pattern"].isin(set(wide) - set(chosen))].drop_duplicates("pattern")
    assert set(chosen) < set(wide)
    assert sorted(added["layout"]) == ["fpp", "shared"]
    assert set(added["nodes"]) == {16} and set(added["processes"]) == {16 * 12}


def test_count_steps_after_the_evolution_reach_the_neighbouring_count() -> None:
    """Two points of evolution (the start's 8 slots, and 64 drawn) leave the count to the steps:
    one power of two down to the truth's 4 slots, then 2, which is worse, so they stop."""
    start = _platform()
    calibrate.set_value(start, "ionode.request_overhead", 3e-3)  # the truth's
    visited: list[float] = []

    def simulate(doc: Any, cells: pd.DataFrame) -> np.ndarray:
        visited.append(calibrate.get_value(doc, "ionode.slots"))
        return _stand_in(doc, cells)

    found = calibrate_global.global_search(
        start, _cells(), ["ionode.slots"], simulate, max_evaluations=4, seed=3
    )
    assert visited == [8.0, 64.0, 4.0, 2.0]
    assert found.values["ionode.slots"] == 4.0
    assert found.objective_after == pytest.approx(0.0, abs=1e-9)
