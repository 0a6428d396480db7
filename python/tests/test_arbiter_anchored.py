"""The anchored knapsack (issue 52): a job first runs at its static allocation until its
bandwidth there is measured, then takes no option valued below that; in the replay, a job's
value at an option it ran at for the probe time is the measured one."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from iorelay.arbiter import baselines
from iorelay.arbiter.instances import random_instance
from iorelay.arbiter.jobsets import JobSet, JobSpec
from iorelay.arbiter.policies import anchored_permitted, decide_anchored, decide_knapsack, policy
from iorelay.arbiter.problem import Job, Pool
from iorelay.arbiter.replay import measured, replay


def test_a_job_whose_static_value_is_not_measured_runs_at_static() -> None:
    pool = Pool(2, (0, 1, 2))
    job = Job("a", 1, {0: 10.0, 1: 40.0, 2: 20.0})  # static: the lone job gets both nodes
    assert baselines.static([job], pool) == (2,)
    assert anchored_permitted([job], pool) == [{2}]
    assert decide_anchored([job], pool).ionodes == (2,)
    # Measured at 2 (20): 1 (predicted 40) is permitted and taken; 0 (10) is not permitted.
    seen = measured(job, {2: 20.0})
    assert seen.measured == frozenset({2})
    assert anchored_permitted([seen], pool) == [{1, 2}]
    assert decide_anchored([seen], pool).ionodes == (1,)
    # Measured at 1 too, below the anchor: back to static.
    worse = measured(job, {2: 20.0, 1: 15.0})
    assert anchored_permitted([worse], pool) == [{2}]
    assert decide_anchored([worse], pool).ionodes == (2,)
    assert decide_anchored([worse], pool).record()["jobs"][0]["measured"] == [1, 2]


def test_anchored_on_measured_values_is_the_knapsack_with_a_floor_of_one() -> None:
    rng = random.Random(11)
    for _ in range(300):
        jobs, pool, _ = random_instance(rng, max_jobs=6)
        jobs = [replace(j, measured=frozenset(j.values)) for j in jobs]
        assert decide_anchored(jobs, pool).ionodes == decide_knapsack(jobs, pool, 1.0).ionodes


def test_replay_measures_an_option_after_the_probe_and_re_decides() -> None:
    # One job, 300 MiB, pool of 2: predicted 40 MiB/s on 1 I/O node, truly 15; 20 on 2 (static).
    true = Job("j0", 1, {0: 10.0, 1: 15.0, 2: 20.0})
    predicted = Job("j0", 1, {0: 10.0, 1: 40.0, 2: 20.0})
    jobset = JobSet(0, (JobSpec(0, "p0", 0.0, 300.0, true, {"p": predicted}),))
    log: list[tuple[float, tuple[int, ...]]] = []
    run = replay(jobset, Pool(2, (0, 1, 2)), policy("anchored"), "p",
                 on_decision=lambda d, t: log.append((t, d.ionodes)), probe_s=5.0)  # fmt: skip
    # 0-5 s at static's 2 (100 MiB), measured; 5-10 s at 1 (75 MiB), measured below the
    # anchor; back to 2 for the last 125 MiB: 6.25 s.
    assert log == [(0.0, (2,)), (5.0, (1,)), (10.0, (2,))]
    assert run.finish_s == pytest.approx((16.25,))
    # The knapsack on the same predictions stays on 1 I/O node: 20 s.
    assert replay(jobset, Pool(2, (0, 1, 2)), policy("knapsack"), "p").finish_s == (20.0,)
    # Without a probe time nothing is ever measured: the anchored knapsack stays static.
    assert replay(jobset, Pool(2, (0, 1, 2)), policy("anchored"), "p").finish_s == (15.0,)
