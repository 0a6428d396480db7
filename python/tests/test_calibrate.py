"""`iorelay calibrate`: parameters read and written in platform documents, the stratified
pattern choice, and the fit itself against a stand-in simulator whose truth is known."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from iorelay import calibrate, sim_cells, sim_score
from iorelay.simulate import PLATFORMS_DIR

needs_tool = pytest.mark.needs_build("iorelay-sim")


def _platform() -> dict[str, Any]:
    return json.loads((PLATFORMS_DIR / "marenostrum4-nominal.json").read_text())


def test_values_round_trip_through_the_platform_units() -> None:
    doc = _platform()
    assert calibrate.get_value(doc, "storage.device.seek") == pytest.approx(200e-6)
    assert calibrate.get_value(doc, "storage.device.bw") == pytest.approx(2.5e9)
    calibrate.set_value(doc, "storage.device.bw", 123.4e6)
    calibrate.set_value(doc, "ionode.request_overhead", 0.00125)
    assert doc["storage"]["device"] == "seek=200us,bw=123.4MBps"
    assert doc["ionode"]["request_overhead"] == "1250us"
    assert calibrate.get_value(doc, "ionode.request_overhead") == pytest.approx(0.00125)
    # The device's write cost: its start value until set, then a key of the device's spec.
    assert calibrate.get_value(doc, "storage.device.write") == pytest.approx(1e-4)
    calibrate.set_value(doc, "storage.device.write", 310e-6)
    assert doc["storage"]["device"] == "seek=200us,bw=123.4MBps,write=310us"
    assert calibrate.get_value(doc, "storage.device.write") == pytest.approx(310e-6)


def test_a_named_device_profile_is_fitted_from_its_values() -> None:
    doc = json.loads((PLATFORMS_DIR / "local.json").read_text())
    doc["storage"]["device"] = "hdd"
    assert calibrate.get_value(doc, "storage.device.seek") == pytest.approx(8e-3)
    assert calibrate.get_value(doc, "storage.device.bw") == pytest.approx(100e6)
    doc["storage"]["device"] = "ssd,bw=150MBps"
    assert calibrate.get_value(doc, "storage.device.seek") == pytest.approx(100e-6)
    assert calibrate.get_value(doc, "storage.device.bw") == pytest.approx(150e6)
    calibrate.set_value(doc, "storage.device.seek", 250e-6)
    assert doc["storage"]["device"] == "seek=250us,bw=150MBps"
    doc["storage"]["device"] = "tape"
    with pytest.raises(calibrate.CalibrateError, match=r"named profile \(hdd, ssd\)"):
        calibrate.get_value(doc, "storage.device.bw")


def test_network_latency_is_read_and_written_in_the_network_section() -> None:
    doc = {"network": {"latency": "50us"}, "storage": {"device": "seek=1ms,bw=1GBps"}}
    assert calibrate.get_value(doc, "network.latency") == pytest.approx(50e-6)
    calibrate.set_value(doc, "network.latency", 172e-6)
    assert doc["network"]["latency"] == "172us"
    assert calibrate.get_value(doc, "network.latency") == pytest.approx(172e-6)


def test_unknown_parameter_names_the_valid_ones() -> None:
    with pytest.raises(calibrate.CalibrateError, match=r"valid: compute\.nic"):
        calibrate.check_parameters(["storage.speed"])


def _cells() -> pd.DataFrame:
    rows = [
        {
            "layout": lay,
            "spatiality": sp,
            "nodes": 8,
            "processes": p,
            "request_bytes": t,
            "operation": "write",
            "odirect": True,
            "ionodes": k,
            "bandwidth_mib_s": 1.0,
        }
        for lay, sp in (("fpp", "contiguous"), ("shared", "contiguous"), ("shared", "strided"))
        for p in (96, 192)
        for t in (32768, 1 << 20, 8 << 20)
        for k in (0, 1, 2)
    ]
    return sim_cells.measured_cells(pd.DataFrame(rows))


def test_pattern_choice_is_seeded_and_stratified() -> None:
    cells = _cells()
    a = calibrate.stratified_patterns(cells, 0.34, seed=5)
    assert a == calibrate.stratified_patterns(cells, 0.34, seed=5)
    assert len(a) == 6  # 2 of the 6 patterns of each of the 3 strata
    layouts = {p.split("/")[0] + p.split("/")[1] for p in a}
    assert layouts == {"fppcontiguous", "sharedcontiguous", "sharedstrided"}


def _stand_in(doc: Any, cells: pd.DataFrame) -> np.ndarray:
    """A closed-form 'simulator': each I/O node (or the direct path) serves one request at a
    time in seek + size / bandwidth."""
    seek = calibrate.get_value(doc, "storage.device.seek")
    bw = calibrate.get_value(doc, "storage.device.bw")
    size = cells["request_bytes"].to_numpy(float)
    streams = np.maximum(cells["ionodes"].to_numpy(float), 1)
    return streams * size / (seek + size / bw) / 2**20


def test_fit_recovers_known_parameters() -> None:
    truth = _platform()
    calibrate.set_value(truth, "storage.device.seek", 3e-3)
    calibrate.set_value(truth, "storage.device.bw", 400e6)
    cells = _cells()
    cells["median"] = _stand_in(truth, cells)
    names = ["storage.device.seek", "storage.device.bw"]
    result = calibrate.fit(_platform(), cells, names, _stand_in, max_evaluations=200)
    assert result.error_after < 1e-3 < result.error_before
    assert result.values["storage.device.seek"] == pytest.approx(3e-3, rel=0.05)
    assert result.values["storage.device.bw"] == pytest.approx(400e6, rel=0.05)


def test_a_fit_cut_short_is_never_worse_than_its_start() -> None:
    truth = _platform()
    calibrate.set_value(truth, "storage.device.seek", 1e-7)  # below the search's bounds
    cells = _cells()
    cells["median"] = _stand_in(truth, cells)
    start = copy.deepcopy(truth)  # already right, so every point the search tries is worse
    for budget in (1, 2, 3):
        result = calibrate.fit(start, cells, ["storage.device.seek"], _stand_in, budget)
        assert result.error_after <= result.error_before, budget


def test_access_times_read_as_src_device_reads_them() -> None:
    doc = _platform()
    doc["storage"]["device"] = "seek=0us,bw=1GBps,access=64KiB:200us/1MiB:4ms/8MiB:9ms"
    got = calibrate.access_times(doc, [4096, 1 << 20, (1 << 20) + 7 * (1 << 19), 9 << 20])
    assert got == pytest.approx([200e-6, 4e-3, 6.5e-3, 9e-3 + (1 << 20) / 1e9])
    calibrate.set_access_times(doc, [32768, 1 << 20], [1e-3, 5e-3])
    assert doc["storage"]["device"] == "seek=0us,bw=1GBps,access=32KiB:1000us/1MiB:5000us"
    assert calibrate.get_value(doc, "storage.device.bw") == pytest.approx(1e9)
    calibrate.set_value(doc, "storage.device.seek", 5e-6)
    assert doc["storage"]["device"].endswith("access=32KiB:1000us/1MiB:5000us")
    calibrate.set_access_times(doc, [32768, 1 << 20], [1.32718, 2.5e-7])  # no exponents
    assert doc["storage"]["device"].endswith("access=32KiB:1327180us/1MiB:0.25us")


def _stand_in_slots(doc: Any, cells: pd.DataFrame) -> np.ndarray:
    """Direct access is one stream; each I/O node runs `ionode.slots` streams; a stream moves
    one request in the device's access time for its size (not a straight line in the size)."""
    size = cells["request_bytes"].to_numpy(float)
    seconds = calibrate.access_times(doc, list(cells["request_bytes"]))
    k = cells["ionodes"].to_numpy(float)
    streams = np.where(k > 0, k * calibrate.get_value(doc, "ionode.slots"), 1.0)
    return streams * size / seconds / 2**20


def test_fit_recovers_access_times_and_a_count() -> None:
    truth = _platform()
    truth["ionode"]["slots"] = 4
    sizes = [32768, 1 << 20, 8 << 20]
    times = [2e-3, 1e-3, 9e-3]  # 1 MiB faster than 32 KiB: no seek + size/bw gives that
    calibrate.set_access_times(truth, sizes, times)
    cells = _cells()
    cells["median"] = _stand_in_slots(truth, cells)
    names = [calibrate.ACCESS_TIMES, "ionode.slots"]
    lines: list[str] = []
    result = calibrate.fit(
        _platform(), cells, names, _stand_in_slots, max_evaluations=10, log=lines.append
    )
    assert [line.split(":")[0].strip() for line in lines] == [
        "start",
        calibrate.ACCESS_TIMES,
        "ionode.slots 4",
        f"{calibrate.ACCESS_TIMES} again",
    ]
    assert result.error_after < 1e-4 < result.error_before
    assert result.values["ionode.slots"] == 4
    assert result.platform["ionode"]["slots"] == 4
    got = calibrate.access_times(result.platform, sizes)
    assert got == pytest.approx(times, rel=0.01)


@needs_tool
def test_command_writes_a_platform_iorelay_sim_reads(tmp_path: Path) -> None:
    rows = [
        {
            "layout": "shared",
            "spatiality": "strided",
            "nodes": 2,
            "processes": 4,
            "request_bytes": 65536,
            "operation": "write",
            "odirect": True,
            "ionodes": k,
            "repetition": r,
            "bandwidth_mib_s": b * (1 + 0.1 * r),
        }
        for k, b in ((0, 50.0), (1, 80.0))
        for r in range(3)
    ]
    measured = tmp_path / "measured.csv"
    pd.DataFrame(rows).to_csv(measured, index=False)
    out = tmp_path / "fitted.json"
    doc = calibrate.calibrate(
        [str(measured)], "marenostrum4-nominal", out, names=["storage.device.bw"], seed=3,
        requests_per_rank=2, max_evaluations=6, jobs=1, log=lambda _: None,
    )  # fmt: skip
    assert doc["calibration"]["seed"] == 3
    assert doc["calibration"]["patterns"] == ["shared/strided/n2/p4/64K/write"]
    assert 0 < doc["storage"]["noise"] < 1
    cells = sim_cells.measured_cells(pd.read_csv(measured))
    assert (sim_cells.simulate_cells(json.loads(out.read_text()), cells, 2, jobs=1) > 0).all()


def test_scores_of_a_perfect_and_a_reversed_prediction() -> None:
    cells = pd.DataFrame(
        {
            "pattern": ["a"] * 3 + ["b"] * 3,
            "ionodes": [0, 1, 2] * 2,
            "median": [10.0, 20.0, 40.0, 30.0, 20.0, 10.0],
        }
    )
    cells["simulated"] = cells["median"] * 2
    assert sim_score.spearman(cells) == pytest.approx(1.0)
    assert sim_score.regret_ratio(cells) == 1.0
    cells["simulated"] = -cells["median"]
    assert sim_score.regret_ratio(cells) == pytest.approx((10 / 40 + 10 / 30) / 2)
    assert sim_score.fixed_choice_regret(cells, [2]) == {2: pytest.approx((1 + 10 / 30) / 2)}
    assert sim_score.same_best_share(cells, cells) == 1.0
