"""Which source answers: the best cross-validated regret ratio, unless others are within its
standard error; then, among those tied, the smallest spread of gain errors (scores.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from iorelay.advise.scores import ranked_sources, regret_gaps


def record(regrets: dict[str, pd.Series], spreads: dict[str, float]) -> dict:
    sources = {
        n: {"regret_ratio": float(r.mean()) if len(r) else None, "profile_sd_log": spreads[n]}
        for n, r in regrets.items()
    }
    for n, gap in regret_gaps(regrets).items():
        sources[n].update(gap)
    return {"sources": sources}


def test_a_gap_within_its_standard_error_is_a_tie_won_by_the_smaller_gain_error():
    labels = [f"p{i}" for i in range(8)]
    best = pd.Series([1.0, 0.9, 1.0, 0.8, 1.0, 1.0, 0.9, 1.0], index=labels)
    close = pd.Series([0.9, 1.0, 1.0, 0.8, 1.0, 0.95, 0.9, 1.0], index=labels)  # gap 0.006
    far = pd.Series([0.5, 0.5, 0.6, 0.5, 0.6, 0.5, 0.5, 0.6], index=labels)
    r = record({"a": best, "b": close, "c": far}, {"a": 0.3, "b": 0.2, "c": 0.1})
    assert r["sources"]["a"]["tied"] and r["sources"]["b"]["tied"]
    assert not r["sources"]["c"]["tied"]
    assert r["sources"]["b"]["regret_gap"] == pytest.approx(best.mean() - close.mean())
    assert ranked_sources(r) == ["b", "a", "c"]


def test_a_clear_best_answers_first_and_unscored_sources_never():
    labels = [f"p{i}" for i in range(6)]
    best = pd.Series(1.0, index=labels)
    worse = pd.Series(0.7, index=labels)
    r = record(
        {"a": best, "b": worse, "none": pd.Series(dtype=float)},
        {"a": 0.5, "b": 0.1, "none": 0.0},
    )
    assert ranked_sources(r) == ["a", "b"]
    assert r["sources"]["none"]["tied"] is False
