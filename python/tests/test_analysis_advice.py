"""The advice section of `iorelay analyze`'s report: per pattern the cheapest option not
significantly worse than the best (I/O nodes), or the best by median (schedulers), with the
runs' evidence, in the HTML and in advice.csv."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from iorelay.analysis import advice, cli, compute

TIDY = Path(__file__).parent / "data" / "tidy_schedulers.csv"


def ionode_runs() -> pd.DataFrame:
    """Three patterns by request size, 5 runs per I/O-node count: 'ties' where 1 and 2 I/O
    nodes are alike and both far above direct (advice: 1, the cheaper); 'two' where 2 is far
    above the rest (advice: 2); 'flat' where nothing differs (advice: direct)."""
    medians = {
        4096: {0: 10.0, 1: 40.0, 2: 41.0},
        8192: {0: 10.0, 1: 10.0, 2: 60.0},
        16384: {0: 30.0, 1: 30.0, 2: 30.0},
    }
    rows = []
    for request, by_k in medians.items():
        for k, m in by_k.items():
            for rep in range(5):
                rows.append(
                    {
                        "layout": "shared",
                        "spatiality": "strided",
                        "nodes": 2,
                        "processes": 8,
                        "request_bytes": request,
                        "operation": "write",
                        "ionodes": k,
                        "repetition": rep,
                        "bandwidth_mib_s": m + 0.5 * rep - 1.0,
                    }
                )
    return pd.DataFrame(rows)


def test_the_cheapest_of_the_not_worse_set_is_advised() -> None:
    a = advice.advice_rows(compute.analyze(ionode_runs()))
    by = a.set_index("request_bytes")
    assert by.loc[4096, "not_worse"] == [1, 2] and by.loc[4096, "recommended"] == 1
    assert by.loc[4096, "best"] == 2
    assert abs(by.loc[4096, "gain_over_direct"] - 4.0) < 1e-9
    assert by.loc[8192, "not_worse"] == [2] and by.loc[8192, "recommended"] == 2
    assert by.loc[8192, "command"] == "iorelay run --ionodes 2 ..."
    assert by.loc[16384, "not_worse"] == [0, 1, 2] and by.loc[16384, "recommended"] == 0
    table = advice.advice_table(compute.analyze(ionode_runs()))
    row = table.set_index("pattern").loc["4K"]
    assert row["recommended"] == "1"
    assert "not significantly worse" in row.iloc[2] and "4.00 times direct access" in row.iloc[2]


def test_the_report_has_the_advice_section(tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    ionode_runs().to_csv(runs, index=False)
    out = tmp_path / "report"
    assert cli.main([str(runs), "--out", str(out)]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Advice: the I/O nodes to run with, per pattern</h2>" in html
    assert "iorelay run --ionodes 1 ..." in html and "iorelay run --ionodes 2 ..." in html
    csv = pd.read_csv(out / "advice.csv").set_index("request_bytes")
    assert csv.loc[4096, "recommended"] == 1 and csv.loc[4096, "not_worse"] == "1 2"


def test_a_scheduler_is_advised_by_its_median(tmp_path: Path) -> None:
    a = advice.advice_rows(compute.analyze(pd.read_csv(TIDY), option="scheduler"))
    shared = a.loc[a["layout"] == "shared"].iloc[0]
    assert shared["recommended"] == "aggregate" == shared["best"]
    assert shared["command"] == "iorelay run --scheduler aggregate ..."
