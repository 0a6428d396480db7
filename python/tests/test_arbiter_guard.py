"""The guard on the arbiter's predictions: its margins from held-out errors, the options it
permits, the knapsack under it (equal to enumeration), and the hold-out that judges predictors
on patterns they did not see."""

from __future__ import annotations

import math
import random

import pytest

from iorelay.arbiter import baselines, guard
from iorelay.arbiter.exhaustive import solve_exhaustive
from iorelay.arbiter.instances import random_instance
from iorelay.arbiter.knapsack import solve
from iorelay.arbiter.patterns import Pattern, PatternFeatures
from iorelay.arbiter.policies import decide_guarded
from iorelay.arbiter.predictor import NearestPattern, folds_by_stratum, held_out
from iorelay.arbiter.problem import ArbiterError, Job, Pool


def test_dynamic_programme_equals_enumeration_with_permitted_options() -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(300):
        jobs, pool, floor = random_instance(rng, max_jobs=6)
        permitted = [{k for k in j.values if rng.random() < 0.6} for j in jobs]
        try:
            want = solve_exhaustive(jobs, pool, floor, permitted)
        except ArbiterError:
            with pytest.raises(ArbiterError):
                solve(jobs, pool, floor, permitted)
            continue
        got = solve(jobs, pool, floor, permitted)
        assert got == want
        assert all(k in p for k, p in zip(got, permitted, strict=True))
        checked += 1
    assert checked > 100  # most instances have a solution


def test_guard_permits_static_and_the_gains_beyond_the_margin() -> None:
    pool = Pool(1, (0, 1, 2))
    values = {0: 100.0, 1: 50.0, 2: 130.0}  # static gives the lone job 1 I/O node
    pairs = [(k, s) for k in values for s in values if k != s]
    narrow = Job("a", 1, values, {p: 0.2 for p in pairs})
    wide = Job("a", 1, values, {p: 0.7 for p in pairs})
    unknown = Job("a", 1, values)
    assert baselines.static([narrow], pool) == (1,)
    # log(100/50) = 0.69 > 0.2; option 2 is outside the pool of 1.
    assert guard.permitted([narrow], pool) == [[0, 1]]
    assert guard.permitted([wide], pool) == [[1]]  # 0.69 is not beyond 0.7
    assert guard.permitted([unknown], pool) == [[1]]  # no error band: nothing believed
    assert decide_guarded([wide], pool).ionodes == (1,)
    assert decide_guarded([narrow], pool).ionodes == (0,)
    assert narrow.record()["margins_log"]["0/1"] == 0.2


def test_guarded_knapsack_on_exact_values_never_takes_a_job_below_static() -> None:
    rng = random.Random(3)
    for _ in range(200):
        jobs, pool, _ = random_instance(rng, max_jobs=6)
        exact = [
            Job(
                j.name, j.compute_nodes, j.values, {(k, s): 0.0 for k in j.values for s in j.values}
            )
            for j in jobs
        ]
        if any(v <= 0 for j in exact for v in j.values.values()):
            continue
        got = decide_guarded(exact, pool).ionodes
        fixed = baselines.static(exact, pool)
        for j, k, s in zip(exact, got, fixed, strict=True):
            assert j.values[k] >= j.values[s]
        assert sum(got) <= pool.ionodes


def pattern(label: str, layout: str, request_kib: int, bandwidth: dict[int, float]) -> Pattern:
    return Pattern(
        label, PatternFeatures(layout, "contiguous", request_kib * 1024, 96, 8), bandwidth
    )


def test_margins_come_from_the_other_patterns_of_the_stratum() -> None:
    measured = {0: 100.0, 1: 100.0}
    patterns = [
        pattern("a", "fpp", 32, measured),
        pattern("b", "fpp", 64, measured),
        pattern("c", "fpp", 128, measured),
        pattern("d", "shared", 32, measured),
    ]
    # Gain of 1 over 0 overstated by log 2 for a, by log 4 for b, exact for c; d far off.
    predicted = {
        "a": {0: 100.0, 1: 200.0},
        "b": {0: 50.0, 1: 200.0},
        "c": {0: 100.0, 1: 100.0},
        "d": {0: 1.0, 1: 1000.0},
    }
    m = guard.gain_margins(patterns, predicted, quantile=1.0)
    assert m["a"][(1, 0)] == pytest.approx(math.log(4))  # b's, not a's own
    assert m["c"][(1, 0)] == pytest.approx(math.log(4))
    assert m["b"][(1, 0)] == pytest.approx(math.log(2))
    assert m["a"][(0, 1)] == pytest.approx(0.0)  # the others' understated gains: c's 0
    assert (1, 0) not in m["d"]  # alone in its stratum: no band, never believed
    low = guard.gain_margins(patterns, predicted, quantile=0.0)
    assert low["a"][(1, 0)] == pytest.approx(0.0)  # c's


def test_held_out_never_trains_on_the_pattern_it_predicts() -> None:
    patterns = [
        pattern(f"{layout}{r}", layout, r, {0: float(r), 1: 2.0 * r})
        for layout in ("fpp", "shared")
        for r in (1, 2, 4, 8, 16, 32)
    ]
    fold = folds_by_stratum(patterns, folds=3, seed=1)
    for f in range(3):
        held = {p.label.rstrip("0123456789") for p in patterns if fold[p.label] == f}
        assert held == {"fpp", "shared"}  # every fold holds out some of every stratum
    seen: list[tuple[set[str], PatternFeatures]] = []

    class Recording(NearestPattern):
        def predict(self, features: PatternFeatures):  # type: ignore[override]
            seen.append(({p.label for p in self._training}, features))
            return super().predict(features)

    out = held_out(patterns, Recording, folds=3, seed=1)
    assert set(out) == {p.label for p in patterns}
    label_of = {p.features: p.label for p in patterns}
    assert len(seen) == len(patterns)
    for training, features in seen:
        assert len(training) == 8 and label_of[features] not in training
    for p in patterns:
        assert out[p.label] != dict(p.bandwidth_mib_s)  # a neighbour's, not its own
