"""The write saturation point k from measured curves (iorelay.saturation)."""

from __future__ import annotations

import pytest

from iorelay.saturation import point_of, saturation

MIB = 1 << 20


def rows(curves: list[dict[int, float]]) -> list[dict[str, float]]:
    return [
        {"repetition": rep, "size": size, "mib_s": bw}
        for rep, curve in enumerate(curves)
        for size, bw in curve.items()
    ]


def test_k_is_the_smallest_size_within_the_share_of_the_plateau() -> None:
    curve = {MIB // 4: 100.0, MIB: 300.0, 4 * MIB: 460.0, 16 * MIB: 500.0, 64 * MIB: 490.0}
    assert point_of(curve) == 4 * MIB  # 460 >= 0.9 x 500; 300 is not
    assert point_of(curve, share=0.5) == MIB


def test_the_spread_of_k_over_repetitions_is_reported() -> None:
    base = {MIB: 200.0, 4 * MIB: 400.0, 16 * MIB: 500.0, 64 * MIB: 500.0}
    noisy = {**base, 4 * MIB: 460.0}  # one repetition saturates a step earlier
    s = saturation(rows([base, base, noisy, base, base]))
    assert s.per_repetition == (16 * MIB, 16 * MIB, 4 * MIB, 16 * MIB, 16 * MIB)
    assert s.saturation_point == 16 * MIB
    assert s.quartiles == (16 * MIB, 16 * MIB)
    assert s.median_curve[4 * MIB] == 400.0
    assert not s.reached_at_largest


def test_a_curve_still_rising_at_its_largest_size_is_flagged() -> None:
    rising = {MIB: 100.0, 4 * MIB: 200.0, 16 * MIB: 400.0}
    assert saturation(rows([rising, rising, rising])).reached_at_largest


def test_bad_measurements_are_refused() -> None:
    with pytest.raises(ValueError, match="no measured runs"):
        saturation([])
    with pytest.raises(ValueError, match="same sizes"):
        saturation(rows([{MIB: 1.0, 4 * MIB: 2.0}, {MIB: 1.0}]))
    with pytest.raises(ValueError, match="no size moved any data"):
        point_of({MIB: 0.0})
