"""`iorelay analyze` statistics: Cliff's delta and Holm by hand, degenerate inputs, Dunn."""

from __future__ import annotations

import numpy as np
import pytest
import scikit_posthocs as sp

from iorelay.analysis import stats


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([3, 4], [1, 2], 1.0),  # every a above every b
        ([1, 2], [3, 4], -1.0),
        ([1, 2, 3], [2], 0.0),  # one below, one tie, one above
        ([1, 5, 6], [2, 3, 4], 1 / 3),  # (-3 + 3 + 3) / 9
        ([1, 2, 3, 4], [2, 3], 0.0),  # -2 -1 +1 +2 over 8 pairs
        ([2, 2], [2, 2, 2], 0.0),  # all ties
        ([10], [1, 2, 3, 20], 0.5),  # (3 - 1) / 4
    ],
)
def test_cliffs_delta_hand_computed(a: list[float], b: list[float], expected: float) -> None:
    assert stats.cliffs_delta(a, b) == pytest.approx(expected)
    assert stats.cliffs_delta(b, a) == pytest.approx(-expected)


def test_cliffs_delta_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, 20, 37), rng.integers(0, 20, 23)
    brute = np.sign(a[:, None] - b[None, :]).mean()
    assert stats.cliffs_delta(a, b) == pytest.approx(brute)


def test_cliffs_delta_rejects_empty() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        stats.cliffs_delta([], [1.0])


def test_cliffs_magnitude_thresholds() -> None:
    assert [stats.cliffs_magnitude(d) for d in (0.1, -0.2, 0.4, -0.9)] == [
        "negligible",
        "small",
        "medium",
        "large",
    ]


def test_holm_hand_computed() -> None:
    # Sorted: 0.01·3 = 0.03; 0.03·2 = 0.06; 0.04·1 = 0.04 → kept monotone at 0.06.
    assert stats.holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5, 0.9]).tolist() == [1.0, 1.0]  # capped at 1
    assert stats.holm([]).size == 0


def test_kruskal_wallis_degenerate_cases_are_not_significant() -> None:
    assert stats.kruskal_wallis({"a": [5.0, 5.0], "b": [5.0, 5.0, 5.0]}) == (0.0, 1.0)
    assert stats.kruskal_wallis({"a": [1.0, 2.0]}) == (0.0, 1.0)
    assert stats.kruskal_wallis({"a": [1.0, 2.0], "b": []}) == (0.0, 1.0)
    # Constant within each group but different between them: a real test.
    h, p = stats.kruskal_wallis({"a": [1.0] * 6, "b": [2.0] * 6})
    assert h > 0 and p < 0.001


def test_dunn_is_symmetric_with_unit_diagonal_and_keeps_group_order() -> None:
    groups = {"z": [1.0, 2, 3, 4, 5], "a": [1.0, 2, 3, 4, 5], "m": [10.0, 11, 12, 13, 14]}
    p = stats.dunn(groups)
    assert list(p.index) == ["z", "a", "m"] == list(p.columns)
    assert np.allclose(p.to_numpy(), p.to_numpy().T)
    assert np.diag(p.to_numpy()).tolist() == [1.0, 1.0, 1.0]
    assert p.loc["z", "a"] == pytest.approx(1.0)
    assert p.loc["z", "m"] < 0.05


def test_dunn_holm_matches_scikit_posthocs() -> None:
    groups = [[1.0, 4, 2, 8, 3], [7.0, 9, 12, 6, 10], [5.0, 2, 6, 3, 4, 11]]
    ours = stats.dunn(dict(enumerate(groups)))
    theirs = sp.posthoc_dunn(groups, p_adjust="holm")  # labels 1..3
    assert np.allclose(ours.to_numpy(), theirs.to_numpy())


def test_dunn_all_identical_is_all_ones() -> None:
    p = stats.dunn({0: [3.0, 3.0], 1: [3.0], 2: [3.0, 3.0, 3.0]})
    assert (p.to_numpy() == 1.0).all()
