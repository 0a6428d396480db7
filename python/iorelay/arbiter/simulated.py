"""The arbiter on simulated concurrent jobs: each job set's jobs run together in one simulation
(iorelay-sim-joint: one storage, one switch, each job its own I/O nodes), so they slow each
other, while the arbiter decides from isolated runs of each pattern (one job alone per option).
Pure: the simulator's input documents, the decisions and the figures; the simulator itself is
a function the caller passes (iorelay.sim_joint.run)."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iorelay.arbiter import baselines, knapsack
from iorelay.arbiter.patterns import Pattern
from iorelay.arbiter.problem import Job, Pool


@dataclass(frozen=True)
class SimShape:
    """requests_per_rank: every rank's requests (the pattern's file layout for that many);
    odirect: FORGE's runs are O_DIRECT; scheduler: every I/O node's."""

    requests_per_rank: int = 4
    odirect: bool = True
    scheduler: str = "fifo"


def job_doc(pattern: Pattern, ionodes: int, shape: SimShape, start_s: float = 0.0) -> dict:
    """One job of iorelay-sim-joint's input."""
    f = pattern.features
    return {
        "layout": f.layout,
        "spatiality": f.spatiality,
        "operation": "write",
        "odirect": shape.odirect,
        "request": f.request_bytes,
        "total": shape.requests_per_rank * f.request_bytes * f.ranks,
        "ranks": f.ranks,
        "nodes": f.nodes,
        "ionodes": ionodes,
        "start": f"{start_s:g}s",
    }


def joint_doc(
    platform: str, jobs: Sequence[tuple[Pattern, int]], shape: SimShape, seed: int
) -> dict[str, Any]:
    """iorelay-sim-joint's input: the jobs (pattern, I/O nodes), all starting at 0."""
    return {
        "platform": platform,
        "scheduler": shape.scheduler,
        "seed": seed,
        "jobs": [job_doc(p, k, shape) for p, k in jobs],
    }


def draw_sets(
    patterns: Sequence[Pattern], sets: int, jobs: int, seed: int
) -> list[tuple[Pattern, ...]]:
    """sets job sets of `jobs` patterns each, drawn uniformly with replacement (seeded)."""
    rng = random.Random(seed)
    return [tuple(rng.choice(patterns) for _ in range(jobs)) for _ in range(sets)]


def isolated_jobs(
    jobset: Sequence[Pattern], isolated: Mapping[str, Mapping[int, float]]
) -> list[Job]:
    """The arbiter's view of a job set: each job valued by its pattern's isolated runs."""
    return [Job(f"j{i}", p.features.nodes, dict(isolated[p.label])) for i, p in enumerate(jobset)]


def allocations(jobs: Sequence[Job], pool: Pool) -> dict[str, tuple[int, ...]]:
    """The allocations compared: static and the knapsack on the isolated values."""
    return {"static": baselines.static(jobs, pool), "knapsack": knapsack.solve(jobs, pool)}


def set_figures(
    result: Mapping[str, Any], allocation: Sequence[int], isolated: Sequence[Mapping[int, float]]
) -> dict[str, float]:
    """One joint run's figures: global bandwidth (all bytes / the last job's end), the sum of
    the jobs' bandwidths (the arbiter's objective), and each job's joint bandwidth over its
    isolated one at the same option (the gap, as a list)."""
    jobs = result["jobs"]
    mib = sum(j["bytes"] for j in jobs) / 2**20
    end = max(j["end_s"] for j in jobs)
    return {
        "global_mib_s": mib / end,
        "sum_mib_s": sum(j["bandwidth_MiBps"] for j in jobs),
        "gap": [
            j["bandwidth_MiBps"] / v[k] for j, k, v in zip(jobs, allocation, isolated, strict=True)
        ],
    }


Simulate = Callable[[dict[str, Any]], Mapping[str, Any]]


def isolated_values(
    patterns: Sequence[Pattern], pool: Pool, platform: str, shape: SimShape, seed: int,
    simulate: Simulate,
) -> dict[str, dict[int, float]]:  # fmt: skip
    """Every pattern alone at every option of the pool: its simulated bandwidth (MiB/s)."""
    return {
        p.label: {
            k: float(
                simulate(joint_doc(platform, [(p, k)], shape, seed))["jobs"][0]["bandwidth_MiBps"]
            )
            for k in pool.options
            if k <= pool.ionodes
        }
        for p in patterns
    }


def evaluate_set(
    jobset: Sequence[Pattern],
    isolated: Mapping[str, Mapping[int, float]],
    pool: Pool,
    platform: str,
    shape: SimShape,
    seed: int,
    simulate: Simulate,
) -> dict[str, Any]:
    """One job set: static's and the knapsack's allocations from the isolated values, each run
    jointly (once when they are the same), with set_figures of both."""
    jobs = isolated_jobs(jobset, isolated)
    chosen = allocations(jobs, pool)
    values = [j.values for j in jobs]
    row: dict[str, Any] = {"patterns": [p.label for p in jobset]}
    for name, allocation in chosen.items():
        if name == "knapsack" and allocation == chosen["static"]:
            figures = row["static_figures"]
        else:
            doc = joint_doc(platform, list(zip(jobset, allocation, strict=True)), shape, seed)
            figures = set_figures(simulate(doc), allocation, values)
        row[name] = list(allocation)
        row[f"{name}_figures"] = figures
        row[f"{name}_global"] = figures["global_mib_s"]
        row[f"{name}_sum"] = figures["sum_mib_s"]
    row["differ"] = chosen["knapsack"] != chosen["static"]
    row["gaps"] = row["static_figures"]["gap"] + (
        row["knapsack_figures"]["gap"] if row["differ"] else []
    )
    return row


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Over job sets (each row: static and knapsack global and sum bandwidths, whether the
    allocations differ, and the per-job gaps of both runs): the share of sets where the
    knapsack is better (global bandwidth; sum), among all and among those that differ, the
    mean ratio to static, and the gap's median and 10th/90th percentiles."""
    differ = [r for r in rows if r["differ"]]
    gaps = sorted(g for r in rows for g in r["gaps"])

    def share(subset: Sequence[Mapping[str, Any]], key: str) -> float:
        if not subset:
            return float("nan")
        return sum(r[f"knapsack_{key}"] > r[f"static_{key}"] for r in subset) / len(subset)

    def pct(q: float) -> float:
        return gaps[min(len(gaps) - 1, int(q * len(gaps)))]

    return {
        "sets": len(rows),
        "differ": len(differ),
        "better_global": share(rows, "global"),
        "better_global_where_differ": share(differ, "global"),
        "better_sum_where_differ": share(differ, "sum"),
        "global_ratio_mean": statistics.fmean(
            r["knapsack_global"] / r["static_global"] for r in rows
        ),
        "gap_median": statistics.median(gaps),
        "gap_p10": pct(0.1),
        "gap_p90": pct(0.9),
    }
