"""`iorelay calibrate --method global`: a bounded, seeded global search (scipy's differential
evolution) over the parameters that can change how a pattern ranks its options, scored by that
ranking, under a budget of simulations and of wall minutes, with progress after every one.

Why not the local search (calibrate.fit): from a nominal platform the I/O-node options often
simulate equal (one I/O node already saturates the simulated storage), the pooled log error is
flat in the parameters that would separate them (slots, NIC, per-request cost only matter far
from their start), and Nelder-Mead from there never leaves the plateau. Differential evolution
samples the whole log-scaled box first (Latin hypercube, with the platform's own values as one
member), needs no gradient, takes integer parameters (counts as powers of two) and plateaus of a
rank objective, and is seeded and bounded.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import differential_evolution

from iorelay import calibrate_log, sim_score
from iorelay.calibrate import (
    ACCESS_TIMES,
    FREE_PARAMETERS,
    Simulator,
    fit_access_times,
    get_value,
    log_error,
    set_value,
)

# Weight of the pooled log error in the "rank" objective: 1 - mean within-pattern rho is a
# staircase (5 options give few distinct values); a small share of the log error gives the
# search a slope between its steps and keeps the level of the prediction sensible.
RANK_LOG_WEIGHT = 0.05


def rank_objective(simulated: np.ndarray, cells: pd.DataFrame) -> float:
    """1 - the mean within-pattern Spearman rho of the cells' options (flat predictions count
    0, sim_score.within_pattern_spearman), plus RANK_LOG_WEIGHT x the pooled log error."""
    scored = cells.assign(simulated=simulated)
    rho = sim_score.within_pattern_spearman(scored)
    return 1.0 - rho + RANK_LOG_WEIGHT * log_error(simulated, cells["median"].to_numpy(float))


def choice_objective(simulated: np.ndarray, cells: pd.DataFrame) -> float:
    """1 - the mean of three scores of choosing, the within-pattern Spearman rho over all
    options and over the forwarded ones (I/O nodes > 0) and the forwarded regret ratio with
    ties (the cheapest of each tie set), plus RANK_LOG_WEIGHT x the pooled log error."""
    scored = cells.assign(simulated=simulated)
    forwarded = sorted(int(k) for k in cells["ionodes"].unique() if k > 0)
    rho = sim_score.within_pattern_spearman(scored)
    rho_fwd = sim_score.within_pattern_spearman(scored, options=forwarded)
    regret_fwd = sim_score.choice_scores(scored, options=forwarded)["regret_ratio"]
    scores = [v for v in (rho, rho_fwd, regret_fwd) if v == v]  # nan: one option only
    level = RANK_LOG_WEIGHT * log_error(simulated, cells["median"].to_numpy(float))
    return 1.0 - sum(scores) / len(scores) + level


def regret_objective(simulated: np.ndarray, cells: pd.DataFrame) -> float:
    """1 - the regret ratio of the cheapest option of each predicted tie set."""
    scored = cells.assign(simulated=simulated)
    return 1.0 - sim_score.choice_scores(scored)["regret_ratio"]


def log_objective(simulated: np.ndarray, cells: pd.DataFrame) -> float:
    """The pooled mean squared log error (calibrate.log_error), the local search's objective."""
    return log_error(simulated, cells["median"].to_numpy(float))


OBJECTIVES: dict[str, Callable[[np.ndarray, pd.DataFrame], float]] = {
    "choice": choice_objective,
    "rank": rank_objective,
    "regret": regret_objective,
    "log": log_objective,
}

# Parameters that can change a pattern's ranking of its options on a platform without a cpu
# section: the I/O node's NIC, dispatch slots and cost per dispatch, the servers' NIC and device,
# the shared file's token, the per-host write limit and the metanode's share of a write. (Add
# cpu.* for platforms with cores.)
RANKING_PARAMETERS = (
    "ionode.nic",
    "ionode.slots",
    "ionode.request_overhead",
    "storage.nic",
    "storage.device.seek",
    "storage.device.bw",
    "storage.token_handoff",
    "storage.file_writes_per_client",
    "storage.metanode_share",
)


# Rounds of the access-time fit before a global search (the local fit's ACCESS_ROUNDS is 8): each
# round is a simulation of every cell, and the ranking objectives hardly depend on the levels
# the later rounds refine (a round multiplies a size's time by its cells' mean residual).
GLOBAL_ACCESS_ROUNDS = 4


class _Stop(Exception):
    """Raised inside the objective when the budget is spent, to end the search at once."""


@dataclass
class SearchResult:
    platform: dict[str, Any]
    objective_before: float
    objective_after: float
    evaluations: int
    values: dict[str, float]
    simulated: np.ndarray | None = None  # the cells simulated at the best point
    history: list[float] = field(default_factory=list)  # best objective after each evaluation
    stopped_by: str = "converged"


def _scale(name: str) -> tuple[float, float, bool]:
    """A parameter's search interval and whether it is an integer: counts as log2 (integers,
    so powers of two), the rest as log10."""
    p = FREE_PARAMETERS[name]
    if p.kind == "count":
        return float(np.log2(p.low)), float(np.log2(p.high)), True
    return float(np.log10(p.low)), float(np.log10(p.high)), False


def _value(name: str, x: float) -> float:
    return float(2.0**x) if FREE_PARAMETERS[name].kind == "count" else float(10.0**x)


def _start(platform: Mapping[str, Any], name: str) -> float:
    low, high, integer = _scale(name)
    v = get_value(platform, name)
    x = np.log2(max(v, 1e-30)) if integer else np.log10(max(v, 1e-30))
    x = float(np.clip(x, low, high))
    return float(round(x)) if integer else x


def progress_line(done: int, budget: int, elapsed_s: float, minutes: float, best: float) -> str:
    """`[#####.....] 12/60 simulations, 3.2 of 20 min, best objective 0.412`."""
    share = max(done / budget if budget else 0.0, elapsed_s / 60 / minutes if minutes else 0.0)
    filled = round(20 * min(1.0, share))
    return (
        f"  [{'#' * filled}{'.' * (20 - filled)}] {done}/{budget} simulations, "
        f"{elapsed_s / 60:.1f} of {minutes:.1f} min, best objective {best:.4f}"
    )


def global_search(
    platform: Mapping[str, Any],
    cells: pd.DataFrame,
    names: Sequence[str],
    simulate: Simulator,
    *,
    objective: str = "choice",
    max_evaluations: int = 60,
    max_minutes: float = 20.0,
    seed: int = 1,
    population: int = 0,
    log: Callable[[str], None] = lambda _: None,
    replay: Mapping[tuple[float, ...], tuple[float, Sequence[float]]] | None = None,
    record: Callable[[tuple[float, ...], float, np.ndarray], None] = lambda *_: None,
    tail: float = 0.0,
) -> SearchResult:
    """Differential evolution over `names` (bounded, log scales, counts as powers of two), from
    a Latin-hypercube population of `population` members (0: max(5, 2 x parameters)) that
    includes the platform's own values, minimising OBJECTIVES[objective] of the simulated
    cells; at most `max_evaluations` simulations of all cells and `max_minutes` of wall time
    (the search stops inside a generation, before a simulation that would overrun the minutes
    if it took as long as the longest so far). Returns the best point simulated, never worse
    than the start. `replay` answers points simulated before (calibrate_log: a resumed search
    proposes the same points, and those count against `max_evaluations`, not the minutes);
    `record` is told each new simulation. `tail`: the work the caller does after the search,
    in simulations of these cells (kept out of the minutes: the search stops earlier)."""
    score = OBJECTIVES[objective]
    scales = [_scale(n) for n in names]
    bounds = [(lo, hi) for lo, hi, _ in scales]
    integrality = [i for _, _, i in scales]
    x0 = np.array([_start(platform, n) for n in names])
    base = copy.deepcopy(dict(platform))
    seen: dict[tuple[float, ...], float] = {}
    best: list[Any] = [float("inf"), x0, None]
    history: list[float] = []
    longest = [0.0]  # the longest simulation so far (s)
    # Simulations kept for the count steps after the evolution (two per count parameter).
    reserve = [2 * sum(integrality)]
    began = time.monotonic()

    def with_values(x: np.ndarray) -> dict[str, Any]:
        doc = copy.deepcopy(base)
        for n, v in zip(names, x, strict=True):
            set_value(doc, n, _value(n, float(v)))
        return doc

    def evaluate(x: np.ndarray) -> float:
        key = tuple(float(v) for v in np.round(x, 6))
        if key in seen:
            return seen[key]
        if key in (replay or {}):
            value, logged = replay[key]
            simulated = np.asarray(logged, dtype=float)
        else:
            elapsed = time.monotonic() - began
            # Stop before a simulation that would end past the budget, judged by the longest.
            late = elapsed + longest[0] * (1.0 + tail + reserve[0]) > max_minutes * 60
            if seen and (len(seen) >= max_evaluations - reserve[0] or late):
                raise _Stop("budget")
            one = time.monotonic()
            simulated = simulate(with_values(x), cells)
            longest[0] = max(longest[0], time.monotonic() - one)
            value = score(simulated, cells)
            record(key, value, simulated)
        seen[key] = value
        if value < best[0]:
            best[0], best[1], best[2] = value, np.array(x, dtype=float), simulated
        history.append(best[0])
        log(
            progress_line(
                len(seen), max_evaluations, time.monotonic() - began, max_minutes, best[0]
            )
        )
        return value

    before = evaluate(x0)
    members = population or max(5, 2 * len(names))
    stopped_by = "converged"
    try:
        differential_evolution(
            evaluate,
            bounds,
            init="latinhypercube",
            popsize=max(1, -(-members // len(names))),  # scipy's population: popsize x names
            x0=x0,
            integrality=integrality,
            maxiter=max(1, max_evaluations // members),
            seed=seed,
            polish=False,
            updating="immediate",
            workers=1,
            tol=0.0,
            atol=0.0,
        )
        if len(seen) >= max_evaluations:
            stopped_by = "evaluations"
    except _Stop:
        stopped_by = "evaluations" if len(seen) >= max_evaluations - reserve[0] else "minutes"
    # Count steps: from the best point, each count parameter one power of two down, then up,
    # as long as that improves. The evolution's few generations rarely try the neighbours of
    # its best point in the count that decides a tie (slots per I/O node: FORGE's best 32 tied
    # 4 and 8 I/O nodes, 8 told them apart).
    reserve[0] = 0
    try:
        for i, integer in enumerate(integrality):
            for step in (-1.0, 1.0) if integer else ():
                while bounds[i][0] <= best[1][i] + step <= bounds[i][1]:
                    x = np.array(best[1], dtype=float)
                    x[i] += step
                    was = best[0]
                    evaluate(x)
                    if best[0] >= was:
                        break
    except _Stop:
        stopped_by = "evaluations" if len(seen) >= max_evaluations else "minutes"
    x = np.array(best[1], dtype=float)
    values = {n: _value(n, float(v)) for n, v in zip(names, x, strict=True)}
    log(
        f"  stopped by {stopped_by}: objective {before:.4f} -> {best[0]:.4f} in "
        f"{len(seen)} simulations"
    )
    return SearchResult(
        platform=with_values(x),
        objective_before=before,
        objective_after=float(best[0]),
        evaluations=len(seen),
        values=values,
        simulated=best[2],
        history=history,
        stopped_by=stopped_by,
    )


def global_fit(
    platform: Mapping[str, Any],
    cells: pd.DataFrame,
    names: Sequence[str],
    simulate: Simulator,
    *,
    objective: str = "choice",
    max_evaluations: int = 60,
    max_minutes: float = 20.0,
    seed: int = 1,
    log: Callable[[str], None] = lambda _: None,
    log_path: Path | None = None,
    resume: bool = False,
    tail: float = 0.0,
) -> SearchResult:
    """global_search over the scalar `names`; with ACCESS_TIMES among them, the
    device's access times are fitted first (fit_access_times, GLOBAL_ACCESS_ROUNDS rounds, out
    of the same budget) and the search starts from them. With `log_path`, every simulation is logged
    (calibrate_log) and `resume` continues the logged search instead of starting it again.
    (calibrate.py imports this module inside its functions: this one imports calibrate's
    parameter table at the top.)"""
    entries = calibrate_log.read(log_path) if (log_path and resume) else []
    writer = calibrate_log.Writer(log_path, fresh=not resume) if log_path else None
    doc = copy.deepcopy(dict(platform))
    used = 0
    began = time.monotonic()
    if ACCESS_TIMES in names:
        logged = calibrate_log.of_kind(entries, "access_times")
        if logged:
            doc, error, used = logged[0]["platform"], logged[0]["error"], logged[0]["used"]
            log(f"  {ACCESS_TIMES}: log error {error:.3f} ({used} simulations, from the log)")
        else:
            doc, error, used = fit_access_times(
                doc, cells, simulate, min(GLOBAL_ACCESS_ROUNDS, max(1, max_evaluations // 4))
            )
            log(f"  {ACCESS_TIMES}: log error {error:.3f} ({used} simulations)")
            if writer:
                writer.add({"kind": "access_times", "platform": doc, "error": error, "used": used})
    scalars = [n for n in names if n != ACCESS_TIMES]
    search = {
        "kind": "search", "parameters": scalars, "objective": objective, "seed": seed,
        "cells": calibrate_log.fingerprint(cells), "start": calibrate_log.fingerprint(doc),
    }  # fmt: skip
    replay: dict[tuple[float, ...], tuple[float, list[float]]] = {}
    if log_path and entries:
        logged_search = calibrate_log.of_kind(entries, "search")
        calibrate_log.check_same_search(log_path, logged_search[0] if logged_search else {}, search)
        for e in calibrate_log.of_kind(entries, "evaluation"):
            replay[tuple(float(v) for v in e["x"])] = (e["objective"], e["simulated"])
        log(f"  resuming {log_path}: {len(replay)} simulations logged")
    elif writer:
        writer.add(search)

    def record(key: tuple[float, ...], value: float, simulated: np.ndarray) -> None:
        if writer:
            entry = {"kind": "evaluation", "x": list(key), "objective": value}
            writer.add(entry | {"simulated": [float(v) for v in simulated]})

    minutes_left = max_minutes - (time.monotonic() - began) / 60
    result = global_search(
        doc, cells, scalars, simulate, objective=objective,
        max_evaluations=max(1, max_evaluations - used), max_minutes=minutes_left,
        seed=seed, log=log, replay=replay, record=record, tail=tail,
    )  # fmt: skip
    result.evaluations += used
    if used:  # the start before the access times, for an honest "before"
        result.objective_before = OBJECTIVES[objective](simulate(platform, cells), cells)
        result.evaluations += 1
    return result
