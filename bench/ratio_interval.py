"""The forwarded/direct ratio of medians with a 95% bootstrap interval (the benchmarks' way of
stating a ratio measured on a noisy machine)."""

from __future__ import annotations

import random
import statistics


def ratio_interval(fwd: list[float], direct: list[float], draws: int = 2000) -> tuple[float, float]:
    """95% bootstrap interval of median(fwd) / median(direct), seeded."""
    rng = random.Random(1)
    ratios = sorted(
        statistics.median(rng.choices(fwd, k=len(fwd)))
        / statistics.median(rng.choices(direct, k=len(direct)))
        for _ in range(draws)
    )
    return ratios[int(0.025 * draws)], ratios[int(0.975 * draws) - 1]
