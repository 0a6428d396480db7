"""The tie rule shared by the simulator's scores and `iorelay advise`, and the within-pattern
scores built on it: ties reported as a set, flat predictions as "cannot tell"."""

from __future__ import annotations

import pandas as pd
import pytest

from iorelay import option_ties, sim_score


def test_the_tie_set_is_every_option_within_the_tolerance_of_the_best() -> None:
    predicted = {0: 100.0, 1: 175.0, 2: 179.0, 4: 178.0, 8: 120.0}
    assert option_ties.TIE_TOLERANCE == 0.03
    assert option_ties.tie_set(predicted) == [1, 2, 4]  # 175 >= 0.97 x 179 = 173.6
    assert option_ties.choose(predicted) == 1  # the cheapest of the tie set
    assert not option_ties.cannot_tell(predicted)
    assert option_ties.tie_set(predicted, tolerance=0.0) == [2]


def test_ties_are_measured_against_the_best_not_chained() -> None:
    steps = {1: 100.0, 2: 98.0, 4: 96.0, 8: 94.0}  # each 2% below the next: no chain
    assert option_ties.tie_set(steps) == [1, 2]  # 96 < 0.97 x 100, though 96 >= 0.97 x 98


def test_a_flat_prediction_cannot_tell() -> None:
    flat = {0: 500.0, 1: 500.0, 2: 499.0, 4: 501.0, 8: 500.5}
    assert option_ties.cannot_tell(flat)
    assert option_ties.tie_set(flat) == [0, 1, 2, 4, 8]
    assert option_ties.cannot_tell({1: 0.0, 2: 0.0})
    assert not option_ties.cannot_tell({1: 5.0})  # one option: nothing to tell apart
    assert option_ties.tie_set({1: float("nan"), 2: 3.0}) == [2]


def _cells() -> pd.DataFrame:
    """Pattern a: measured 0 < 1 < 2 < 4 < 8, predicted in the same order; pattern b:
    predicted flat; pattern c: predicted in reverse but for 4 and 8, 2% apart (rho ranks
    the values as given)."""
    rows = []
    measured = {0: 10.0, 1: 20.0, 2: 40.0, 4: 80.0, 8: 160.0}
    predicted = {
        "a": {0: 1.0, 1: 2.0, 2: 3.0, 4: 4.0, 8: 5.0},
        "b": {k: 7.0 for k in measured},
        "c": {0: 50.0, 1: 40.0, 2: 30.0, 4: 10.0, 8: 10.2},
    }
    for p, pred in predicted.items():
        rows += [{"pattern": p, "ionodes": k, "median": m, "simulated": pred[k]}
                 for k, m in measured.items()]  # fmt: skip
    return pd.DataFrame(rows)


def test_within_pattern_scores_count_a_flat_prediction_as_no_order() -> None:
    cells = _cells()
    # a: 1; b: flat, 0; c: ranks 5 4 3 1 2 against 1 2 3 4 5, -0.9.
    assert sim_score.within_pattern_spearman(cells) == pytest.approx((1 + 0 - 0.9) / 3)
    assert sim_score.within_pattern_spearman(cells, options=sim_score.FORWARDED) == pytest.approx(
        (1 + 0 - 0.8) / 3
    )
    s = sim_score.choice_scores(cells)
    assert (s["patterns"], s["ties"], s["cannot_tell"]) == (3, 1, 1)
    # a picks 8 (1.0); b cannot tell, its cheapest is 0 (10/160); c picks 0 (10/160).
    assert s["regret_ratio"] == pytest.approx((1 + 1 / 16 + 1 / 16) / 3)
    assert s["regret_ratio_told"] == pytest.approx((1 + 1 / 16) / 2)
    assert s["regret_ratio_tie_mean"] == pytest.approx((1 + 310 / 5 / 160 + 1 / 16) / 3)
    table = sim_score.choices(cells).set_index("pattern")
    assert table.loc["b", "tie_set"] == "0/1/2/4/8" and table.loc["b", "cannot_tell"]
    # At tolerance 0 the cheapest-of-ties choice is the old regret_ratio's pick.
    exact = sim_score.choice_scores(cells, tolerance=0.0)["regret_ratio"]
    assert exact == pytest.approx(sim_score.regret_ratio(cells))


def test_direct_needs_a_lead_beyond_the_margin() -> None:
    predicted = {0: 120.0, 1: 100.0, 2: 90.0, 4: 99.0}
    assert option_ties.choose_with_margin(predicted, 0.25) == 1  # 120 < 1.25 x 100: forward
    assert option_ties.choose_with_margin(predicted, 0.2) == 0  # 120 >= 1.2 x 100
    assert option_ties.choose_with_margin(predicted, float("inf")) == 1  # never direct
    # Forwarding picks the cheapest of the forwarded tie set (99 >= 0.97 x 100).
    assert option_ties.choose_with_margin({0: 101.0, 1: 99.0, 4: 100.0}, 0.1) == 1
    # margin = -tolerance is the plain rule; without direct or forwarded options too.
    plain = -option_ties.TIE_TOLERANCE
    for p in (predicted, {0: 97.5, 1: 100.0}, {0: 96.0, 1: 100.0, 2: 50.0}, {1: 3.0, 2: 4.0}):
        assert option_ties.choose_with_margin(p, plain) == option_ties.choose(p)
    assert option_ties.choose_with_margin({0: 5.0}, 1.0) == 0


def _margin_cells() -> pd.DataFrame:
    """12 patterns: in 6 the model leads with direct by 1.5x and direct is measured worst
    (0.2 of the best); in 6 it leads by 3x and direct is measured best."""
    rows = []
    for i in range(12):
        wrong = i % 2 == 0
        predicted = {0: 150.0 if wrong else 300.0, 1: 100.0, 2: 90.0}
        measured = {0: 20.0 if wrong else 200.0, 1: 100.0, 2: 80.0}
        rows += [{"pattern": f"p{i}", "ionodes": k, "median": measured[k],
                  "simulated": predicted[k]} for k in predicted]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_margin_is_fitted_on_training_cells_by_cross_validation() -> None:
    cells = _margin_cells()
    # 1.5x leads are wrong, 3x ones right: margins 1 and 2 separate them; the smallest wins.
    fit = sim_score.fit_direct_margin(cells)
    assert fit["margin"] == 1.0
    assert fit["fold_margins"] == [1.0] * sim_score.MARGIN_FOLDS
    assert fit["helps"] and fit["cv_with"] == pytest.approx(1.0)
    assert fit["cv_without"] == pytest.approx((6 * 0.2 + 6 * 1.0) / 12)
    s = sim_score.margin_scores(cells, fit["margin"])
    assert (s["regret_with"], s["overruled"]) == (pytest.approx(1.0), 6)
    assert s["regret_without"] == pytest.approx(sim_score.choice_scores(cells)["regret_ratio"])
