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
