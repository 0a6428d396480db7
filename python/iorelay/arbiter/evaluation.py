"""The table-driven evaluation of issue 52: for each pool size, the same seeded job sets
replayed under every feed (a policy, and the values it sees: true, or a predictor's), then the
figures: global bandwidth, per-job slowdown against static, the worst job, the share of the
true-valued knapsack the predicted one reaches, and the fairness floor's lowest share."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from iorelay.arbiter.guard import zero_margins
from iorelay.arbiter.jobsets import DEFAULT_SHAPE, TRUE, JobSetShape, View, draw_job_set
from iorelay.arbiter.patterns import Pattern
from iorelay.arbiter.policies import policy
from iorelay.arbiter.problem import Pool
from iorelay.arbiter.replay import Run, replay


@dataclass(frozen=True)
class Feed:
    """A policy as evaluated: its name, the arbiter policy, the fairness floor, and the values
    it is fed (TRUE: the measured ones; else a predictor's, by name)."""

    name: str
    policy: str
    floor_share: float | None = None
    view: str = TRUE
    probe_s: float | None = None  # a job's value at an option it ran at is measured (replay)


ARBITERS = ("knapsack", "guarded", "anchored")
# How long a job runs at an option before its bandwidth there counts as measured (anchored).
PROBE_S = 5.0


def feeds(floor_share: float, views: Sequence[str], probe_s: float = PROBE_S) -> tuple[Feed, ...]:
    """Every baseline (fed true values where it reads values: greedy), then the knapsack and
    the guarded knapsack, each without and with the fairness floor, and the anchored knapsack
    (its own floor of 1, on measured values), each fed (a) true values and (b) every
    predictor's: named <policy>[-floor]-<view>."""
    out = [
        Feed("none", "none"),
        Feed("one-each", "one-each"),
        Feed("static", "static"),
        Feed("shared", "shared"),
        Feed("greedy", "greedy"),
    ]
    for arbiter in ARBITERS[:2]:
        for kind, floor in (("", None), ("-floor", floor_share)):
            out += [Feed(f"{arbiter}{kind}-{v}", arbiter, floor, v) for v in (TRUE, *views)]
    out += [Feed(f"anchored-{v}", "anchored", None, v, probe_s) for v in (TRUE, *views)]
    return tuple(out)


def set_rows(runs: Mapping[str, Run], pool: int, seed: int) -> list[dict[str, object]]:
    """One row per feed of one job set: its figures, the per-job ones against static's run."""
    static = runs["static"]
    rows = []
    for name, run in runs.items():
        slowdown = [run.duration_s(i) / static.duration_s(i) for i in range(len(run.size_mib))]
        rows.append(
            {
                "pool": pool,
                "set": seed,
                "feed": name,
                "global_mib_s": run.global_mib_s,
                "median_slowdown": statistics.median(slowdown),
                "worst_slowdown": max(slowdown),
                "differs_from_static": run.differs_from_static,
                "lowest_static_share": run.lowest_static_share,
                "decisions": run.decisions,
            }
        )
    return rows


def evaluate(
    patterns: Sequence[Pattern],
    views: Mapping[str, View],
    pools: Sequence[int],
    sets: int,
    *,
    seed: int = 1,
    shape: JobSetShape = DEFAULT_SHAPE,
    floor_share: float = 0.8,
    options: tuple[int, ...] = (0, 1, 2, 4, 8),
    progress: Callable[[int, int], None] | None = None,
    only: Sequence[str] | None = None,
    probe_s: float = PROBE_S,
) -> pd.DataFrame:
    """One row per (pool, job set, feed). Job set s is drawn from seed + s for every pool. The
    true feeds' guard has no error band (zero_margins). only: these feeds (and static, which
    the figures compare with)."""
    chosen = feeds(floor_share, list(views), probe_s)
    if only is not None:
        chosen = tuple(f for f in chosen if f.name in {"static", *only})
    deciders = {f.name: policy(f.policy, f.floor_share) for f in chosen}
    exact = zero_margins(patterns)
    rows: list[dict[str, object]] = []
    for pool_ionodes in pools:
        pool = Pool(pool_ionodes, options)
        for s in range(sets):
            jobset = draw_job_set(seed + s, patterns, views, shape, exact)
            runs = {
                f.name: replay(jobset, pool, deciders[f.name], f.view, probe_s=f.probe_s)
                for f in chosen
            }
            rows += set_rows(runs, pool_ionodes, seed + s)
            if progress is not None:
                progress(pool_ionodes, s + 1)
    return pd.DataFrame(rows)


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (pool, feed): mean global bandwidth, its mean ratio to static's in the same set, the
    mean of the sets' median and worst per-job slowdown against static, the largest worst, the
    share of sets better and worse than static, and the lowest share of static value seen."""
    wide = rows.pivot(index=["pool", "set"], columns="feed", values="global_mib_s")
    out = []
    for (pool, feed), g in rows.groupby(["pool", "feed"], sort=False):
        mine = wide.loc[pool][feed]
        static = wide.loc[pool]["static"]
        out.append(
            {
                "pool": pool,
                "feed": feed,
                "sets": len(g),
                "global_mib_s": g["global_mib_s"].mean(),
                "vs_static": float((mine / static).mean()),
                "median_slowdown": g["median_slowdown"].mean(),
                "worst_slowdown_mean": g["worst_slowdown"].mean(),
                "worst_slowdown_max": g["worst_slowdown"].max(),
                "better_than_static": float((mine > static * (1 + 1e-9)).mean()),
                "worse_than_static": float((mine < static * (1 - 1e-9)).mean()),
                "lowest_static_share": g["lowest_static_share"].min(),
            }
        )
    return pd.DataFrame(out)


def predicted_against_true(rows: pd.DataFrame, views: Sequence[str]) -> pd.DataFrame:
    """Per pool, arbiter (with and without floor) and predictor, the issue's criteria for that
    arbiter fed predictions (b), against the knapsack fed true values (a, same floor) and
    static: mean, minimum and 5th percentile of global(b) / global(a); the sets where (b) is
    worse than static and the worst of them (b / static); among the sets where (b)'s
    allocations differ from static's, the share where (b) is better."""
    out = []
    for pool, g in rows.groupby("pool", sort=True):
        by = g.set_index(["set", "feed"])
        sets = g["set"].unique()
        static = by.xs("static", level="feed").loc[sets]["global_mib_s"]
        feeds_here = set(g["feed"])
        for arbiter in ARBITERS:
            for kind in ("", "-floor"):
                # (a) for the anchored knapsack is the plain knapsack on true values: the best
                # the bandwidth of the moment allows, which its floor of 1 gives up some of
                a_name = f"knapsack{kind}-true"
                for view in views:
                    b_name = f"{arbiter}{kind}-{view}"
                    if b_name not in feeds_here or a_name not in feeds_here:
                        continue
                    a = by.xs(a_name, level="feed").loc[sets]
                    b = by.xs(b_name, level="feed").loc[sets]
                    share = b["global_mib_s"] / a["global_mib_s"]
                    to_static = b["global_mib_s"] / static
                    differ = b["differs_from_static"].to_numpy()
                    better = (to_static > 1 + 1e-9).to_numpy()
                    worse = (to_static < 1 - 1e-9).to_numpy()
                    out.append(
                        {
                            "pool": pool,
                            "arbiter": f"{arbiter}{kind}",
                            "predictor": view,
                            "share_of_true_mean": float(share.mean()),
                            "share_of_true_min": float(share.min()),
                            "share_of_true_p5": float(np.percentile(share, 5)),
                            "worse_than_static": int(worse.sum()),
                            "worst_vs_static": float(to_static.min()),
                            "differ": int(differ.sum()),
                            "better_where_differ": (
                                float(better[differ].mean()) if differ.any() else 1.0
                            ),
                            "lowest_static_share": float(b["lowest_static_share"].min()),
                            "sets": len(sets),
                        }
                    )
    return pd.DataFrame(out)
