"""`iorelay analyze` per-pattern comparison on synthetic data whose answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iorelay.analysis import compute
from iorelay.analysis.schema import AnalysisError


def _runs(pattern_values: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    """Runs of patterns named by request size, each mapping scheduler → bandwidths."""
    rows = []
    for i, (name, by_option) in enumerate(pattern_values.items()):
        for option, values in by_option.items():
            for rep, v in enumerate(values):
                rows.append(
                    {
                        "layout": "shared",
                        "spatiality": "strided",
                        "nodes": 4,
                        "processes": 16,
                        "request_bytes": 1024 * (i + 1),
                        "pattern": name,
                        "scheduler": option,
                        "repetition": rep,
                        "bandwidth_mib_s": float(v),
                        "time_s": 100.0 / float(v),
                    }
                )
    return pd.DataFrame(rows)


# Pattern "clear": c is far above a and b, which are identical → only c matters.
# Pattern "same": all three identical → Kruskal-Wallis finds nothing → all three matter.
# Pattern "chain": ranks a 11-15, b 6-10, c 1-5. a ~ b and b ~ c are not significant, a vs c
# is: against the best only, {a, b} matter, not all three (non-significance is not transitive).
SYNTHETIC = {
    "clear": {
        "a": [10.0 + i for i in range(10)],
        "b": [10.0 + i for i in range(10)],
        "c": [100.0 + i for i in range(10)],
    },
    "same": {o: [50.0, 51.0, 52.0, 53.0, 54.0] for o in ("a", "b", "c")},
    "chain": {
        "a": [11.0, 12, 13, 14, 15],
        "b": [6.0, 7, 8, 9, 10],
        "c": [1.0, 2, 3, 4, 5],
    },
}


@pytest.fixture(scope="module")
def synthetic() -> compute.Analysis:
    return compute.analyze(_runs(SYNTHETIC), option="scheduler")


def _pattern(analysis: compute.Analysis, request_bytes: int) -> pd.Series:
    p = analysis.patterns
    return p.loc[p["request_bytes"] == request_bytes].iloc[0]


def test_spec_keeps_only_pattern_columns(synthetic: compute.Analysis) -> None:
    assert synthetic.spec.option == "scheduler"
    assert synthetic.spec.options == ("a", "b", "c")
    assert synthetic.spec.pattern == ("layout", "spatiality", "nodes", "processes", "request_bytes")
    assert len(synthetic.patterns) == 3
    assert len(synthetic.options) == 9


def test_clear_winner_is_the_only_choice(synthetic: compute.Analysis) -> None:
    row = _pattern(synthetic, 1024)
    assert row["best"] == "c"
    assert row["kw_significant"]
    assert row["n_choices"] == 1 and row["choices"] == "c"
    o = synthetic.options.loc[synthetic.options["request_bytes"] == 1024].set_index("scheduler")
    assert o.loc["c", "p_vs_best"] == 1.0 and o.loc["c", "cliffs_delta"] == 0.0
    assert o.loc["a", "cliffs_delta"] == -1.0 == o.loc["b", "cliffs_delta"]
    assert o.loc["a", "median_ratio"] == pytest.approx(14.5 / 104.5)
    assert (o.loc[["a", "b"], "p_vs_best"] < 0.05).all()
    assert o.loc[["a", "b"], "worse"].all()


def test_identical_options_are_all_choices(synthetic: compute.Analysis) -> None:
    row = _pattern(synthetic, 2048)
    assert row["kw_p"] > 0.05 and not row["kw_significant"]
    assert row["best"] == "a"  # ties go to the first option
    assert row["n_choices"] == 3 and row["choices"] == "a, b, c"
    o = synthetic.options.loc[synthetic.options["request_bytes"] == 2048]
    assert (o["cliffs_delta"] == 0.0).all() and (o["median_ratio"] == 1.0).all()


def test_choices_are_counted_against_the_best_only(synthetic: compute.Analysis) -> None:
    row = _pattern(synthetic, 3072)
    assert row["best"] == "a" and row["kw_significant"]
    assert row["choices"] == "a, b" and row["n_choices"] == 2
    o = synthetic.options.loc[synthetic.options["request_bytes"] == 3072].set_index("scheduler")
    assert o.loc["b", "p_vs_best"] >= 0.05 > o.loc["c", "p_vs_best"]
    assert o.loc["b", "cliffs_delta"] == -1.0  # a large effect, yet not significant at n = 5


def test_distributions(synthetic: compute.Analysis) -> None:
    assert synthetic.choices["n_choices"].tolist() == [1, 2, 3]
    assert synthetic.choices["n_patterns"].tolist() == [1, 1, 1]
    assert synthetic.choices["share"].sum() == pytest.approx(1.0)
    best = synthetic.best.set_index("scheduler")
    assert best["n_best"].to_dict() == {"a": 2, "b": 0, "c": 1}
    assert best["n_not_worse"].to_dict() == {"a": 2, "b": 2, "c": 2}


def test_best_by_dimension_counts(synthetic: compute.Analysis) -> None:
    by = synthetic.by_dimension
    assert set(by["dimension"]) == {"access", "request_bytes"}
    access = by.loc[by["dimension"] == "access"].set_index("option")
    assert access["n_best"].to_dict() == {"a": 2, "b": 0, "c": 1}
    assert (access["n_patterns"] == 3).all()
    req = by.loc[(by["dimension"] == "request_bytes") & (by["value"] == 3072)]
    assert req.set_index("option")["n_not_worse"].to_dict() == {"a": 1, "b": 1, "c": 0}


def test_lower_is_better_metric_picks_the_fastest() -> None:
    analysis = compute.analyze(_runs(SYNTHETIC), option="scheduler", metric="time")
    p = analysis.patterns.set_index("request_bytes")
    assert p.loc[1024, "best"] == "c" and p.loc[1024, "n_choices"] == 1
    assert p.loc[3072, "choices"] == "a, b"
    o = analysis.options
    worse = o.loc[(o["request_bytes"] == 1024) & (o["scheduler"] == "a")].iloc[0]
    assert worse["cliffs_delta"] == -1.0  # oriented: negative is worse, whatever the metric
    assert worse["median_ratio"] > 1.0  # raw times: slower than the best


def test_constant_groups_and_single_option() -> None:
    runs = _runs(
        {
            "flat": {"a": [5.0] * 4, "b": [5.0] * 4},
            "step": {"a": [5.0] * 6, "b": [9.0] * 6},
            "alone": {"a": [1.0, 2.0]},
        }
    )
    p = compute.analyze(runs, option="scheduler").patterns.set_index("request_bytes")
    assert p.loc[1024, "n_choices"] == 2 and p.loc[1024, "kw_p"] == 1.0
    assert p.loc[2048, "best"] == "b" and p.loc[2048, "n_choices"] == 1
    assert p.loc[3072, "n_choices"] == 1 and p.loc[3072, "n_options"] == 1


def test_alpha_changes_the_answer() -> None:
    strict = compute.analyze(_runs(SYNTHETIC), option="scheduler", alpha=1e-6)
    assert strict.patterns["n_choices"].tolist() == [3, 3, 3]


def test_random_replicates_of_one_distribution_rarely_differ() -> None:
    rng = np.random.default_rng(3)
    values = {f"p{i}": {o: rng.normal(100, 10, 8).tolist() for o in "abcd"} for i in range(20)}
    p = compute.analyze(_runs(values), option="scheduler").patterns
    assert (p["n_choices"] == 4).mean() >= 0.8


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"option": "ionodes"}, "no option column"),
        ({"option": "scheduler", "metric": "latency"}, "unknown metric"),
        ({"option": "scheduler", "alpha": 1.5}, "alpha"),
    ],
)
def test_bad_requests_are_reported(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(AnalysisError, match=message):
        compute.analyze(_runs(SYNTHETIC), **kwargs)  # type: ignore[arg-type]
