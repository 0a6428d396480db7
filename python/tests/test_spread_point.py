"""The spread point (iorelay.spread_point): where one aggregator per host stops losing to one
aggregator, interpolated in log size between the measured call sizes around the crossing."""

from __future__ import annotations

import pytest

from iorelay.spread_point import median_curve, spread_point

KIB, MIB = 1 << 10, 1 << 20


def test_crossing_is_interpolated_in_log_size_between_the_sizes_around_it() -> None:
    one = median_curve([(MIB, 1.0), (MIB, 3.0), (MIB, 2.0), (4 * MIB, 2.0), (16 * MIB, 4.0)])
    assert one == {MIB: 2.0, 4 * MIB: 2.0, 16 * MIB: 4.0}
    # ratios 0.5, 1.5, 2: ratio 1 halfway between 1 and 4 MiB in log size, 2 MiB
    assert spread_point(one, {MIB: 1.0, 4 * MIB: 3.0, 16 * MIB: 8.0}) == 2 * MIB
    # A size where spreading loses again after a win moves the crossing above it: ratios 1.5,
    # 0.5, 2, so a third of the way from 4 to 16 MiB in log size, 4 * 4^(1/3) MiB.
    point = spread_point(one, {MIB: 3.0, 4 * MIB: 1.0, 16 * MIB: 8.0})
    assert point == pytest.approx(4 * MIB * 4 ** (1 / 3), abs=KIB) and point % KIB == 0


def test_always_and_never() -> None:
    one = {384 * KIB: 1.0, 6 * MIB: 2.0}
    assert spread_point(one, {384 * KIB: 1.0, 6 * MIB: 3.0}) == 0  # never slower
    assert spread_point(one, {384 * KIB: 2.0, 6 * MIB: 1.9}) is None  # slower at the largest


def test_curves_must_match() -> None:
    with pytest.raises(ValueError, match="same sizes"):
        spread_point({MIB: 1.0, 2 * MIB: 1.0}, {MIB: 1.0})
    with pytest.raises(ValueError, match="no data"):
        spread_point({MIB: 0.0, 2 * MIB: 1.0}, {MIB: 1.0, 2 * MIB: 1.0})
