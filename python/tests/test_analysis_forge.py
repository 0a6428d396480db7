"""`iorelay analyze` on the real FORGE measurements (MareNostrum 4): 189 patterns, 5 options.

Needs the FORGE data set, which is not in the repository: ../shared/data/forge-marenostrum4
beside the checkout, or $IORELAY_FORGE_DATA. Without it the tests are skipped with that reason,
except in CI (CI=true), where they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from iorelay.analysis import compute, plots, reader

FORGE = Path(
    os.environ.get(
        "IORELAY_FORGE_DATA",
        Path(__file__).resolve().parents[3] / "shared" / "data" / "forge-marenostrum4",
    )
)
N_PATTERNS = 189


@pytest.fixture(scope="module")
def forge_runs():
    if not (FORGE / "direct.csv").is_file() or not (FORGE / "forwarding.csv").is_file():
        message = f"FORGE data not found in {FORGE} (set IORELAY_FORGE_DATA)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return reader.read_results([FORGE])


@pytest.fixture(scope="module")
def forge(forge_runs) -> compute.Analysis:
    return compute.analyze(forge_runs, option="forwarders")


def test_reader_finds_all_forge_patterns(forge_runs) -> None:
    assert len(forge_runs) == 5039
    assert set(forge_runs["file"]) == {"direct.csv", "forwarding.csv"}
    assert set(forge_runs["source"]) == {"measured"}
    spec = compute.make_spec(forge_runs, option="forwarders")
    assert spec.option == "ionodes" and spec.options == (0, 1, 2, 4, 8)
    assert forge_runs.groupby(list(spec.pattern)).ngroups == N_PATTERNS
    assert forge_runs.groupby(list(spec.pattern))["ionodes"].nunique().eq(5).all()
    assert sorted(forge_runs["request_bytes"].unique() // 1024) == [
        32,
        128,
        512,
        1024,
        4096,
        6144,
        8192,
    ]


def test_files_one_by_one_equal_the_directory(forge_runs) -> None:
    one_by_one = reader.read_results([FORGE / "direct.csv", FORGE / "forwarding.csv"])
    assert one_by_one.equals(forge_runs)


def test_full_analysis_shape_and_sums(forge: compute.Analysis) -> None:
    assert len(forge.patterns) == N_PATTERNS
    assert len(forge.options) == N_PATTERNS * 5
    assert forge.options.groupby(list(forge.spec.pattern)).size().eq(5).all()
    assert forge.choices["n_choices"].tolist() == [1, 2, 3, 4, 5]
    assert forge.choices["n_patterns"].sum() == N_PATTERNS
    assert forge.best["n_best"].sum() == N_PATTERNS
    assert forge.patterns["n_runs"].sum() == len(forge.runs)
    # Every pattern has exactly one best, which is never worse than itself.
    assert forge.options["is_best"].sum() == N_PATTERNS
    assert not forge.options.loc[forge.options["is_best"], "worse"].any()
    assert (forge.options.loc[forge.options["is_best"], "median_ratio"] == 1.0).all()
    # Bandwidth: the best has the highest median, so no option beats it by median.
    assert (forge.options["median_ratio"] <= 1.0 + 1e-12).all()
    assert forge.options["cliffs_delta"].between(-1, 1).all()
    assert forge.options["p_vs_best"].between(0, 1).all()
    # The count of choices is the count of options not worse than the best.
    not_worse = (
        (~forge.options["worse"]).groupby([forge.options[c] for c in forge.spec.pattern]).sum()
    )
    assert sorted(not_worse.to_numpy()) == sorted(forge.patterns["n_choices"].to_numpy())
    # Per dimension, every value's patterns have one best each.
    for (dim, _), g in forge.by_dimension.groupby(["dimension", "value"]):
        assert g["n_best"].sum() == g["n_patterns"].iloc[0], dim
    access = forge.by_dimension.loc[forge.by_dimension["dimension"] == "access"]
    assert sorted(access["value"].unique()) == [
        "fpp-contiguous",
        "shared-contiguous",
        "shared-strided",
    ]
    assert access.groupby("value")["n_best"].sum().eq(63).all()


def test_forge_findings_documented_in_docs(forge: compute.Analysis) -> None:
    """The numbers docs/analysis.md reports; update both together."""
    assert forge.choices["n_patterns"].tolist() == [0, 3, 46, 96, 44]
    assert forge.best.set_index("ionodes")["n_best"].to_dict() == {
        0: 19,
        1: 12,
        2: 89,
        4: 16,
        8: 53,
    }
    assert int(forge.patterns["kw_significant"].sum()) == 159


def test_heatmap_on_forge(forge: compute.Analysis) -> None:
    facets = plots.facets(forge.patterns, forge.spec)
    assert [name for name, _ in facets] == ["fpp-contiguous", "shared-contiguous", "shared-strided"]
    name, frame = facets[2]
    best, count, rows, col = plots.best_matrix(frame, forge.spec)
    assert (rows, col) == (["nodes", "processes"], "request_bytes")
    assert best.shape == (9, 7)
    assert list(best.columns) == ["32K", "128K", "512K", "1M", "4M", "6M", "8M"]
    assert best.index[0] == "8 nodes, 96 procs"
    assert not best.isna().any().any()
    fig = plots.plot_best_heatmap(frame, forge.spec, name)
    ax = fig.axes[0]
    assert np.array_equal(ax.images[0].get_array(), best.to_numpy())
    assert [t.get_text() for t in ax.get_xticklabels()] == list(best.columns)
    assert int(count.to_numpy().sum()) == int(frame["n_choices"].sum())
