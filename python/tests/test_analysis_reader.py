"""`iorelay analyze` reader: FORGE's semicolon CSV and iorelay's tidy CSV/Parquet → one schema."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from iorelay.analysis import reader
from iorelay.analysis.schema import AnalysisError, pattern_columns

DATA = Path(__file__).parent / "data"
TIDY = DATA / "tidy_schedulers.csv"


def test_tidy_csv_keeps_schema_columns_and_drops_others() -> None:
    runs = reader.read_results([TIDY])
    assert len(runs) == 36
    assert list(runs.columns) == [
        "layout",
        "spatiality",
        "nodes",
        "processes",
        "request_bytes",
        "operation",
        "odirect",
        "ionodes",
        "scheduler",
        "bandwidth_mib_s",
        "time_s",
        "repetition",
        "source",
        "file",
    ]
    assert runs["odirect"].dtype == bool and runs["odirect"].all()
    assert set(runs["file"]) == {"tidy_schedulers.csv"}
    assert set(runs["source"]) == {"measured"}
    # The other option column (ionodes) is held fixed: it belongs to the pattern.
    assert pattern_columns(runs.columns, "scheduler")[-1] == "ionodes"


def test_tidy_parquet_reads_like_csv(tmp_path: Path) -> None:
    pd.read_csv(TIDY).to_parquet(tmp_path / "runs.parquet")
    a = reader.read_results([tmp_path]).drop(columns="file")
    b = reader.read_results([TIDY]).drop(columns="file")
    pd.testing.assert_frame_equal(a, b)


def test_forge_rows_are_mapped(tmp_path: Path) -> None:
    path = tmp_path / "forwarding.csv"
    path.write_text(
        "forwarders;clients;processes;layout;spatiality;odirect;stonewall;request;total;"
        "operation;time;transfered;bandwidth\n"
        "4;32;1536;0;0;1;60;4096;131072;write;62.05568;128068.0;2063.75944\n"
        "0;16;192;1;1;1;60;32;131072;write;68.6;5784.0;84.26661\n"
    )
    runs = reader.read_results([path])
    first = runs.iloc[0]
    assert (first["layout"], first["spatiality"], first["nodes"], first["processes"]) == (
        "fpp",
        "contiguous",
        32,
        1536,
    )
    assert first["request_bytes"] == 4096 * 1024 and first["ionodes"] == 4
    assert first["bandwidth_mib_s"] == pytest.approx(2063.75944)
    assert first["time_s"] == pytest.approx(62.05568)
    assert runs.iloc[1][["layout", "spatiality", "ionodes"]].tolist() == ["shared", "strided", 0]


def test_unknown_format_and_missing_paths_are_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(AnalysisError, match="neither FORGE"):
        reader.read_results([bad])
    with pytest.raises(AnalysisError, match="no such file"):
        reader.read_results([tmp_path / "missing.csv"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(AnalysisError, match=r"no \.csv or \.parquet"):
        reader.read_results([tmp_path / "empty"])


def test_tidy_values_are_checked(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("layout,ionodes,bandwidth_mib_s\nstriped,1,10\n")
    with pytest.raises(AnalysisError, match="layout must be one of"):
        reader.read_results([bad])
    bad.write_text("ionodes,bandwidth_mib_s\n1,fast\n")
    with pytest.raises(AnalysisError, match="not numeric"):
        reader.read_results([bad])
