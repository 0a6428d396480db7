"""The arbiter's knapsack against enumeration, its tie rule, its fairness floor, and the
baselines on hand-checked instances (issue 52, solver criteria)."""

from __future__ import annotations

import json
import random
import time

import pytest

from iorelay.arbiter import baselines
from iorelay.arbiter.exhaustive import solve_exhaustive
from iorelay.arbiter.instances import large_instance, random_instance
from iorelay.arbiter.knapsack import solve
from iorelay.arbiter.policies import NAMES, decide_knapsack, policy
from iorelay.arbiter.problem import ArbiterError, Job, Pool


def test_dynamic_programme_equals_enumeration_on_1000_random_instances() -> None:
    rng = random.Random(52)
    ties = 0
    for _ in range(1000):
        jobs, pool, floor = random_instance(rng, max_jobs=6)
        got, want = solve(jobs, pool, floor), solve_exhaustive(jobs, pool, floor)
        assert got == want, (jobs, pool, floor)
        ties += len({sum(j.values.values()) for j in jobs}) < len(jobs)
    assert ties > 100  # the tie rule was exercised, not only unique optima


def test_ties_go_to_fewer_ionodes_then_to_later_jobs() -> None:
    flat = {0: 5.0, 1: 5.0, 2: 5.0, 4: 5.0, 8: 5.0}
    assert solve([Job("a", 1, flat)], Pool(8)) == (0,)
    two = {0: 0.0, 1: 1.0, 2: 1.0, 4: 1.0, 8: 1.0}
    # One I/O node, two jobs that value it equally: the later job gets it.
    assert solve([Job("a", 1, two), Job("b", 1, two)], Pool(1)) == (0, 1)


def test_knapsack_beats_static_where_static_wastes_nodes() -> None:
    jobs = [
        Job("small-strided", 8, {0: 10, 1: 50, 2: 90, 4: 100, 8: 60}),
        Job("large-contiguous", 32, {0: 100, 1: 40, 2: 80, 4: 120, 8: 200}),
        Job("flat", 16, {0: 5, 1: 5, 2: 5, 4: 5, 8: 5}),
    ]
    pool = Pool(8)
    assert baselines.static(jobs, pool) == (1, 4, 2)  # quotas 1.14, 4.57, 2.29 -> 1, 5->4, 2
    decision = decide_knapsack(jobs, pool)
    assert decision.ionodes == (4, 4, 0)
    assert decision.total_value == 225.0
    assert policy("static")(jobs, pool).total_value == 175.0


def test_fairness_floor_is_a_constraint() -> None:
    jobs = [
        Job("a", 1, {0: 1, 1: 100, 2: 200, 4: 200, 8: 200}),
        Job("b", 1, {0: 1, 1: 10, 2: 10, 4: 10, 8: 10}),
        Job("c", 1, {0: 50, 1: 1, 2: 1, 4: 1, 8: 1}),
    ]
    pool = Pool(2)
    assert baselines.static(jobs, pool) == (1, 1, 0)
    assert decide_knapsack(jobs, pool).ionodes == (2, 0, 0)  # 251: b falls to 1 of its 10
    floored = decide_knapsack(jobs, pool, floor_share=0.5)
    assert floored.ionodes == (1, 1, 0)  # 160 - b keeps >= 5
    assert floored.policy == "knapsack-floor-0.5"
    with pytest.raises(ArbiterError):
        decide_knapsack(jobs, pool, floor_share=1.5)


def test_baselines() -> None:
    v = {0: 1.0, 1: 2.0, 2: 3.0, 4: 4.0, 8: 5.0}
    jobs = [Job(n, c, v) for n, c in (("a", 1), ("b", 1), ("c", 6))]
    pool = Pool(3)
    assert baselines.none(jobs, pool) == (0, 0, 0)
    assert baselines.one_each(jobs, Pool(2)) == (1, 1, 0)
    assert baselines.static(jobs, pool) == (1, 0, 2)  # .375 .375 2.25: the spare one to a
    assert baselines.static(jobs, Pool(8)) == (1, 1, 4)  # 1 1 6 -> 6 rounds down to 4
    assert baselines.greedy(jobs, pool) == (2, 1, 0)
    assert baselines.shared_share(jobs, pool) == 1.0
    assert baselines.shared_value(v, 0.5) == 1.0  # half of one I/O node's 2.0
    assert baselines.shared_value(v, 3.0) == pytest.approx(3.0 + (4.0 - 3.0) * 0.5849625)
    assert baselines.shared_value(v, 20.0) == 5.0


def test_every_decision_is_a_json_record_with_its_inputs() -> None:
    jobs = [Job("a", 4, {0: 1.0, 1: 2.0, 2: 2.5, 4: 3.0, 8: 3.0})]
    for name in NAMES:
        record = json.loads(json.dumps(policy(name)(jobs, Pool(4)).record(time_s=2.5)))
        assert record["time_s"] == 2.5
        assert record["policy"] == name
        assert record["jobs"][0]["values"]["4"] == 3.0
        assert record["pool_ionodes"] == 4
    assert policy("knapsack")(jobs, Pool(4)).record()["ionodes"] == [4]
    assert policy("shared")(jobs, Pool(4)).record()["values"] == [3.0]


def test_large_instance_is_solved_fast_and_fits() -> None:
    jobs, pool = large_instance(random.Random(1), jobs=100, pool=512)
    start = time.perf_counter()
    sizes = solve(jobs, pool)
    elapsed_s = time.perf_counter() - start
    assert sum(sizes) <= 512
    assert len(sizes) == 100
    assert elapsed_s < 0.5  # bench/arbiter_solver.py measures it: a few ms
