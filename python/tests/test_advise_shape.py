"""shape.extend_saturating: I/O-node counts beyond the measured ones from b(n) = min(a·n, c)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iorelay.advise.shape import extend_saturating


def test_a_pattern_still_scaling_continues_linearly_and_a_capped_one_stays_flat():
    predicted = pd.DataFrame(
        {0: [50.0, 300.0, 80.0], 1: [100.0, 100.0, 100.0], 2: [250.0, 150.0, 200.0]},
        index=["superlinear", "capped", "exactly linear"],
    )
    out = extend_saturating(predicted, [0, 1, 2, 4, 8])
    assert list(out.columns) == [0, 1, 2, 4, 8]
    # b2/b1 = 2.5 >= 2: no cap seen; a = sqrt(100/1 * 250/2) per I/O node.
    a = np.sqrt(100.0 * 125.0)
    assert out.loc["superlinear", 4] == pytest.approx(4 * a)
    assert out.loc["superlinear", 8] == pytest.approx(8 * a)
    # b2/b1 = 1.5 < 2: capped at b2 = 150 from 2 I/O nodes on.
    assert out.loc["capped", 4] == out.loc["capped", 8] == 150.0
    assert out.loc["exactly linear", 8] == pytest.approx(800.0)
    # The trained columns are untouched.
    pd.testing.assert_frame_equal(out[[0, 1, 2]], predicted)


def test_the_two_largest_trained_forwarded_counts_set_the_shape():
    predicted = pd.DataFrame({0: [10.0], 1: [10.0], 2: [20.0], 4: [30.0]})
    out = extend_saturating(predicted, [0, 1, 2, 4, 8, 16])
    assert out.loc[0, 8] == out.loc[0, 16] == 30.0  # 4 -> 30 is below 2 x 20: capped


def test_nothing_is_added_without_two_forwarded_counts_or_below_the_largest():
    only_one = pd.DataFrame({0: [10.0], 2: [20.0]})
    assert list(extend_saturating(only_one, [0, 2, 4, 8]).columns) == [0, 2]
    trained = pd.DataFrame({0: [10.0], 1: [10.0], 4: [20.0]})
    assert list(extend_saturating(trained, [0, 1, 2, 4]).columns) == [0, 1, 4]


def test_unpredicted_rows_stay_unpredicted():
    predicted = pd.DataFrame({0: [np.nan], 1: [np.nan], 2: [np.nan]})
    assert extend_saturating(predicted, [0, 1, 2, 4]).isna().all().all()
