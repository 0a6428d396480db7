"""`iorelay calibrate`: fits a platform's free parameters to measured results.

The free parameters (FREE_PARAMETERS: link and server bandwidth, per-request storage and I/O-node
costs) are searched in log space by scipy's bounded Nelder-Mead, minimising the mean squared
log error between the simulated and the measured median bandwidth of every (pattern, I/O-node
count) cell used; or, with --method global (calibrate_global.py), by differential evolution
minimising a ranking objective, under a time budget. Either way the within-pattern ranking
scores (sim_score.choice_lines) are reported beside the pooled error.
The run-to-run noise is then set so that simulated repetitions spread as the
measured ones do. The output is the same platform schema with the fitted values, plus a
`calibration` object (seed, patterns, options, error before and after, the command's inputs),
which iorelay-sim ignores.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from iorelay import sim_cells, units
from iorelay.analysis.reader import read_results
from iorelay.calibrate_parameters import (
    ACCESS_BOUNDS_S,
    ACCESS_TIMES,
    DEFAULT_PARAMETERS,
    FREE_PARAMETERS,
)
from iorelay.simulate import platform_path


class CalibrateError(ValueError):
    """Input that cannot be calibrated (unknown parameter, no cells, bad platform)."""


NOISE_SEEDS = 5


# -- reading and writing parameters in a platform document -------------------------------------


# The named device profiles of src/device/device_profile.cc, which a platform may give as
# "hdd" or "hdd,bw=150MBps"; a fitted device is written out as "seek=...,bw=...".
DEVICE_PROFILES: dict[str, dict[str, str]] = {
    "hdd": {"seek": "8ms", "bw": "100MBps"},
    "ssd": {"seek": "100us", "bw": "500MBps"},
}


def _device(doc: Mapping[str, Any]) -> dict[str, str]:
    """storage.device "seek=200us,bw=2.5GBps[,write=...][,access=...]" (or a named profile
    with overrides, "hdd", "hdd,bw=150MBps") as {"seek": ..., "bw": ...[, "write": ...]
    [, "access": ...]}."""
    text = str(doc["storage"]["device"])
    items = text.split(",")
    parts = dict(DEVICE_PROFILES.get(items[0], {}))
    parts.update(p.split("=", 1) for p in items if "=" in p)
    if set(parts) - {"write", "access"} != {"seek", "bw"}:
        raise CalibrateError(f"storage.device must be 'seek=<duration>,bw=<rate>' or a named "
                             f"profile ({', '.join(DEVICE_PROFILES)}) to be fitted, "
                             f"not {text!r}")  # fmt: skip
    return parts


def _set_device(doc: dict[str, Any], parts: Mapping[str, str]) -> None:
    text = f"seek={parts['seek']},bw={parts['bw']}"
    if "write" in parts:
        text += f",write={parts['write']}"
    if "access" in parts:
        text += f",access={parts['access']}"
    doc["storage"]["device"] = text


def access_times(doc: Mapping[str, Any], sizes: Sequence[int]) -> np.ndarray:
    """The device's time (s) to move each of `sizes` bytes, as src/device's TransferNs reads
    it: its access points (linear between them), or size / bw without."""
    parts = _device(doc)
    bw = units.parse_bytes_per_second(parts["bw"])
    if "access" not in parts:
        return np.array([s / bw for s in sizes], dtype=float)
    points = [p.split(":", 1) for p in parts["access"].split("/")]
    xs = np.array([units.parse_bytes(x) for x, _ in points], dtype=float)
    ys = np.array([units.parse_duration_ns(y) * 1e-9 for _, y in points], dtype=float)
    sizes_f = np.asarray(sizes, dtype=float)
    inside = np.interp(sizes_f, xs, ys)
    beyond = ys[-1] + (sizes_f - xs[-1]) / bw
    return np.where(sizes_f > xs[-1], beyond, inside)


def set_access_times(doc: dict[str, Any], sizes: Sequence[int], seconds: Sequence[float]) -> None:
    parts = _device(doc)
    parts["access"] = "/".join(
        f"{units.format_bytes(int(b))}:{_format('duration', float(t))}"
        for b, t in zip(sizes, seconds, strict=True)
    )
    _set_device(doc, parts)


def get_value(doc: Mapping[str, Any], name: str) -> float:
    """A parameter's value in SI units (bytes/s or s)."""
    p = FREE_PARAMETERS[name]
    section, key = name.split(".", 1)
    text = (
        _device(doc).get(key.split(".")[1])
        if key.startswith("device.")
        else doc.get(section, {}).get(key)
    )
    if text is None and p.start is not None:
        return p.start
    if text is None:
        raise CalibrateError(f"the platform has no {name} to start the fit from")
    if p.kind == "rate":
        return units.parse_bytes_per_second(str(text))
    if p.kind in ("count", "number"):
        return float(text)
    return units.parse_duration_ns(str(text)) * 1e-9


def _format(kind: str, value: float) -> str:
    if kind == "rate":
        return f"{value / 1e6:.6g}MBps"
    # Positional, never "1.3e+06us" (the platform's units have no exponents).
    return f"{value * 1e6:.4f}".rstrip("0").rstrip(".") + "us"


def set_value(doc: dict[str, Any], name: str, value: float) -> None:
    p = FREE_PARAMETERS[name]
    section, key = name.split(".", 1)
    if key.startswith("device."):
        parts = _device(doc)
        parts[key.split(".")[1]] = _format(p.kind, value)
        _set_device(doc, parts)
    elif p.kind == "count":
        doc.setdefault(section, {})[key] = round(value)
    elif p.kind == "number":
        doc.setdefault(section, {})[key] = float(f"{value:.6g}")
    else:
        doc.setdefault(section, {})[key] = _format(p.kind, value)


def check_parameters(names: Sequence[str]) -> None:
    unknown = [n for n in names if n not in FREE_PARAMETERS and n != ACCESS_TIMES]
    if unknown:
        valid = ", ".join([*FREE_PARAMETERS, ACCESS_TIMES])
        raise CalibrateError(f"unknown parameter {', '.join(unknown)}; valid: {valid}")


# -- choosing patterns --------------------------------------------------------------------------


def stratified_patterns(cells: pd.DataFrame, fraction: float, seed: int) -> list[str]:
    """A seeded random `fraction` of the patterns, drawn within each layout x spatiality
    stratum (at least one per stratum), sorted."""
    chosen: list[str] = []
    rng = random.Random(seed)
    strata = cells.groupby(["layout", "spatiality"])["pattern"].unique()
    for _, patterns in sorted(strata.items()):
        names = sorted(patterns)
        k = max(1, int(fraction * len(names)))
        chosen += rng.sample(names, k)
    return sorted(chosen)


def search_patterns(
    cells: pd.DataFrame,
    patterns: Sequence[str],
    share: float,
    seed: int,
    every_node_count: bool = False,
) -> list[str]:
    """The patterns a global search simulates at each of its points: in each layout x
    spatiality x processes-per-node stratum, `share` of its patterns (at least one) taken
    cheapest first (fewest processes: a simulation's cost grows with its ranks), ties in a
    seeded random order; then the cheapest pattern of each request size not yet among them
    (the device's access times are fitted per size); with `every_node_count`, also the
    cheapest pattern of each layout x spatiality x node count not yet among them (cheapest
    first picks the fewest nodes only, and FORGE seed 2's training patterns ranked their
    forwarded options at rho 0.83 on 8 nodes, 0.65 on 16 and 32). Sorted. share 1: all."""
    if share >= 1.0:
        return sorted(patterns)
    mine = cells[cells["pattern"].isin(list(patterns))].drop_duplicates("pattern")
    rng = random.Random(seed)
    order = {name: rng.random() for name in sorted(mine["pattern"])}
    mine = mine.assign(
        per_node=mine["processes"] // mine["nodes"], tie=mine["pattern"].map(order)
    ).sort_values(["processes", "tie"])
    chosen: set[str] = set()
    for _, group in mine.groupby(["layout", "spatiality", "per_node"]):
        chosen.update(group["pattern"].head(max(1, round(share * len(group)))))

    def add_cheapest_where_missing(by: str | list[str]) -> None:
        for _, group in mine.groupby(by):
            if not chosen & set(group["pattern"]):
                chosen.add(group["pattern"].iloc[0])

    add_cheapest_where_missing("request_bytes")
    if every_node_count:
        add_cheapest_where_missing(["layout", "spatiality", "nodes"])
    return sorted(chosen)


# -- the fit ------------------------------------------------------------------------------------

Simulator = Callable[[Mapping[str, Any], pd.DataFrame], np.ndarray]


def log_error(simulated: np.ndarray, measured: np.ndarray) -> float:
    """Mean squared natural-log error of bandwidths (a zero is floored at 1e-3 MiB/s)."""
    s = np.log(np.maximum(simulated, 1e-3))
    m = np.log(np.maximum(measured, 1e-3))
    return float(np.mean((s - m) ** 2))


@dataclass
class Fit:
    platform: dict[str, Any]
    error_before: float
    error_after: float
    evaluations: int
    values: dict[str, float]


def fit(
    platform: Mapping[str, Any],
    cells: pd.DataFrame,
    names: Sequence[str],
    simulate: Simulator,
    max_evaluations: int,
    log: Callable[[str], None] = lambda _: None,
) -> Fit:
    """Fits `names` on `cells`: with ACCESS_TIMES among them, the device's access times first
    (fit_access_times); then each count parameter by a grid of powers of two (the access
    times refitted briefly at each point); then the other scalars by bounded Nelder-Mead over
    their log10, from the platform's own values; then the access times again. Each stage's
    error and the simulations so far go to `log`."""
    check_parameters(names)
    scalars = [n for n in names if n != ACCESS_TIMES]
    counts = [n for n in scalars if FREE_PARAMETERS[n].kind == "count"]
    continuous = [n for n in scalars if n not in counts]
    access = ACCESS_TIMES in names
    measured = cells["median"].to_numpy(dtype=float)
    doc = copy.deepcopy(dict(platform))
    before = log_error(simulate(doc, cells), measured)
    evaluations = 1
    after = before
    values: dict[str, float] = {}
    log(f"  start: log error {before:.3f}")
    if access:
        doc, after, n = fit_access_times(doc, cells, simulate, ACCESS_ROUNDS)
        evaluations += n
        log(f"  {ACCESS_TIMES}: log error {after:.3f} ({evaluations} simulations so far)")
    for name in counts:
        doc, after, n = _count_grid(doc, cells, name, simulate, access)
        evaluations += n
        values[name] = get_value(doc, name)
        log(f"  {name} {values[name]:g}: log error {after:.3f} ({evaluations} so far)")
    if continuous:
        doc, after, n, found = _nelder_mead(doc, cells, continuous, simulate, max_evaluations)
        evaluations += n
        values.update(found)
        log(f"  {', '.join(continuous)}: log error {after:.3f} ({evaluations} so far)")
    if access and scalars:
        doc, after, n = fit_access_times(doc, cells, simulate, ACCESS_ROUNDS // 2)
        evaluations += n
        log(f"  {ACCESS_TIMES} again: log error {after:.3f} ({evaluations} so far)")
    if after > before:  # (never worse than where it started: the platform as given)
        log(f"  no better than the start ({after:.3f} against {before:.3f}): the start kept")
        doc, after = copy.deepcopy(dict(platform)), before
        values = {n: get_value(doc, n) for n in scalars}
    if access:
        sizes = sorted(int(v) for v in cells["request_bytes"].unique())
        for size, t in zip(sizes, access_times(doc, sizes), strict=True):
            values[f"{ACCESS_TIMES}:{units.format_bytes(size)}"] = float(t)
    return Fit(
        platform=doc,
        error_before=before,
        error_after=after,
        evaluations=evaluations,
        values=values,
    )


# Access-time rounds at each point of a count parameter's grid.
GRID_ACCESS_ROUNDS = 3


def _count_grid(
    platform: dict[str, Any],
    cells: pd.DataFrame,
    name: str,
    simulate: Simulator,
    access: bool,
) -> tuple[dict[str, Any], float, int]:
    """The best power of two within the parameter's bounds (a count's error is a staircase,
    which Nelder-Mead handles badly)."""
    p = FREE_PARAMETERS[name]
    measured = cells["median"].to_numpy(dtype=float)
    best_doc, best_error, evaluations = platform, float("inf"), 0
    value = int(p.low)
    while value <= p.high:
        doc = copy.deepcopy(platform)
        set_value(doc, name, value)
        if access:
            doc, error, n = fit_access_times(doc, cells, simulate, GRID_ACCESS_ROUNDS)
        else:
            error, n = log_error(simulate(doc, cells), measured), 1
        evaluations += n
        if error < best_error:
            best_doc, best_error = doc, error
        value *= 2
    return best_doc, best_error, evaluations


def _nelder_mead(
    platform: dict[str, Any],
    cells: pd.DataFrame,
    names: Sequence[str],
    simulate: Simulator,
    max_evaluations: int,
) -> tuple[dict[str, Any], float, int, dict[str, float]]:
    params = [FREE_PARAMETERS[n] for n in names]
    lows = np.log10([p.low for p in params])
    highs = np.log10([p.high for p in params])
    start = np.clip(np.log10([get_value(platform, n) for n in names]), lows, highs)
    measured = cells["median"].to_numpy(dtype=float)
    seen: dict[tuple[float, ...], float] = {}

    def with_values(x: np.ndarray) -> dict[str, Any]:
        doc = copy.deepcopy(platform)
        for n, v in zip(names, x, strict=True):
            set_value(doc, n, float(10.0**v))
        return doc

    def objective(x: np.ndarray) -> float:
        x = np.clip(x, lows, highs)
        key = tuple(np.round(x, 6))
        if key not in seen:
            seen[key] = log_error(simulate(with_values(x), cells), measured)
        return seen[key]

    objective(start)
    # A simplex a factor of 10 wide in each parameter: the start values may be far off.
    simplex = np.vstack([start] + [start + np.eye(len(start))[i] for i in range(len(start))])
    simplex = np.clip(simplex, lows, highs)
    res = minimize(
        objective,
        start,
        method="Nelder-Mead",
        bounds=list(zip(lows, highs, strict=True)),
        options={
            "initial_simplex": simplex,
            "maxfev": max_evaluations,
            "xatol": 0.02,
            "fatol": 1e-3,
        },
    )
    best = np.clip(res.x, lows, highs)
    error = objective(best)
    # The best point simulated, which a search cut short by maxfev need not return.
    key, seen_best = min(seen.items(), key=lambda kv: kv[1])
    if seen_best < error:
        best, error = np.array(key), seen_best
    values = {n: float(10.0**v) for n, v in zip(names, best, strict=True)}
    return with_values(best), error, len(seen), values


# Rounds of the access-time fit before the scalar parameters' fit (half as many after it).
ACCESS_ROUNDS = 8


def fit_access_times(
    platform: Mapping[str, Any], cells: pd.DataFrame, simulate: Simulator, rounds: int
) -> tuple[dict[str, Any], float, int]:
    """The device's time per access at each request size of `cells`: each round multiplies a
    size's time by the geometric mean of (simulated / measured bandwidth) over that size's
    cells, as if bandwidth were inversely proportional to it (true where the targets are the
    bottleneck; where they are not, the time hardly matters). Returns the best platform seen,
    its error, and the simulations run."""
    sizes = sorted(int(v) for v in cells["request_bytes"].unique())
    by_size = cells["request_bytes"].to_numpy()
    measured = cells["median"].to_numpy(dtype=float)
    times = access_times(platform, sizes)
    best_doc: dict[str, Any] = copy.deepcopy(dict(platform))
    best_error = float("inf")
    for r in range(rounds + 1):
        doc = copy.deepcopy(dict(platform))
        set_access_times(doc, sizes, times)
        simulated = simulate(doc, cells)
        error = log_error(simulated, measured)
        if error < best_error:
            best_doc, best_error = doc, error
        if r == rounds:
            break
        ratio = np.log(np.maximum(simulated, 1e-3)) - np.log(np.maximum(measured, 1e-3))
        for i, size in enumerate(sizes):
            times[i] *= float(np.exp(ratio[by_size == size].mean()))
        times = np.clip(times, *ACCESS_BOUNDS_S)
    return best_doc, best_error, rounds + 1


def measured_spread(cells: pd.DataFrame) -> float:
    """The median coefficient of variation of the measured repetitions (cells of 3 or more)."""
    cv = cells.loc[cells["n"] >= 3, "cv"].dropna()
    return float(cv.median()) if len(cv) else 0.0


def fit_noise(
    platform: dict[str, Any],
    cells: pd.DataFrame,
    target_cv: float,
    simulate_seeded: Callable[[Mapping[str, Any], pd.DataFrame, int], np.ndarray],
) -> float:
    """storage.noise such that the simulated repetitions of `cells` (NOISE_SEEDS seeds each)
    spread as much as the measured ones: two secant steps from the measured spread itself,
    since a run's spread grows about linearly with the targets' spread."""
    if target_cv <= 0:
        return 0.0

    def spread(noise: float) -> float:
        doc = copy.deepcopy(platform)
        doc["storage"]["noise"] = noise
        runs = np.vstack([simulate_seeded(doc, cells, s + 1) for s in range(NOISE_SEEDS)])
        return float(np.median(runs.std(axis=0, ddof=1) / runs.mean(axis=0)))

    noise = min(target_cv, 0.99)
    for _ in range(2):
        got = spread(noise)
        if got <= 0:
            break
        noise = float(min(0.99, noise * target_cv / got))
    return noise


# -- the command --------------------------------------------------------------------------------


def calibrate(
    measured: Sequence[str],
    platform_name: str,
    out: Path,
    *,
    names: Sequence[str] = DEFAULT_PARAMETERS,
    options: Sequence[int] | None = None,
    fraction: float = 1.0,
    patterns: Sequence[str] | None = None,
    seed: int = 1,
    requests_per_rank: int = sim_cells.DEFAULT_REQUESTS_PER_RANK,
    total_bytes: int = 0,
    scheduler: str = "fifo",
    max_evaluations: int = 60,
    jobs: int = 2,
    method: str = "local",
    objective: str = "choice",
    max_minutes: float = 0.0,
    log: Callable[[str], None] = print,
    log_path: Path | None = None,
    resume: bool = False,
    search_share: float = 1.0,
    search_every_node_count: bool = True,
) -> dict[str, Any]:
    """Fits `platform_name` to the cells of `measured` and writes the result to `out`.
    method "local": fit() (stages, Nelder-Mead, the pooled log error); "global":
    calibrate_global.global_fit (differential evolution on `objective`, at most `max_minutes`
    of wall time, 0: no limit), every simulation logged to `log_path` (calibrate_log; default
    OUT with the suffix .log.jsonl), and with `resume` the logged search continued; with
    `search_share` below 1 the global search simulates only that stratified share of the
    patterns (search_patterns; with `search_every_node_count`, the default, also the cheapest
    pattern of each node count), and the training scores are theirs."""
    from iorelay import calibrate_global, sim_score  # (they import this module)

    check_parameters(names)
    if method not in ("local", "global"):
        raise CalibrateError(f"unknown method {method!r}; valid: local, global")
    if resume and method != "global":
        raise CalibrateError("--resume continues a logged global search: give --method global")
    if objective not in calibrate_global.OBJECTIVES:
        valid = ", ".join(calibrate_global.OBJECTIVES)
        raise CalibrateError(f"unknown objective {objective!r}; valid: {valid}")
    source = platform_path(platform_name)
    platform = json.loads(source.read_text())
    cells = sim_cells.measured_cells(read_results(measured), total_bytes)
    if options is not None:
        cells = cells[cells[sim_cells.OPTION].isin(list(options))]
    chosen = list(patterns) if patterns else stratified_patterns(cells, fraction, seed)
    unknown = sorted(set(chosen) - set(cells["pattern"]))
    if unknown:
        raise CalibrateError(f"patterns not in the measured results: {', '.join(unknown[:3])}")
    used = cells[cells["pattern"].isin(chosen)].reset_index(drop=True)
    if used.empty:
        raise CalibrateError("no measured cells to calibrate on")
    log(f"calibrating {len(names)} parameters on {len(used)} cells of {len(chosen)} patterns")

    def simulate(doc: Mapping[str, Any], c: pd.DataFrame, sim_seed: int = 1) -> np.ndarray:
        return sim_cells.simulate_cells(doc, c, requests_per_rank, scheduler, sim_seed, jobs)

    searched = used
    if method == "global" and search_share < 1.0:
        subset = search_patterns(used, chosen, search_share, seed, search_every_node_count)
        searched = used[used["pattern"].isin(subset)].reset_index(drop=True)
        log(
            f"  the search simulates {len(searched)} cells of {len(subset)} patterns "
            f"({searched['processes'].sum() / used['processes'].sum():.0%} of the ranks)"
        )
    # The noise fit's cells (one per stratum and option count is plenty for a median spread).
    sample = used.groupby(["layout", "spatiality"]).head(2).reset_index(drop=True)
    if method == "global":
        # What runs after the search, in simulations of the searched cells by their ranks:
        # the noise fit's 2 x NOISE_SEEDS simulations of the sample; the search leaves time
        # for it.
        cost = lambda c: float(c["processes"].sum())  # noqa: E731
        after = 2 * NOISE_SEEDS * cost(sample)
        found = calibrate_global.global_fit(
            platform, searched, names, simulate, objective=objective,
            max_evaluations=max_evaluations, max_minutes=max_minutes or float("inf"),
            seed=seed, log=log, log_path=log_path or out.with_suffix(".log.jsonl"),
            resume=resume, tail=after / cost(searched),
        )  # fmt: skip
        # The training scores are the searched cells' (simulating all of them again would
        # cost more than the search's points when it saw a share: bench/sim_forge.py scores
        # the held-back patterns anyway).
        best = (
            found.simulated if found.simulated is not None else simulate(found.platform, searched)
        )
        measured_median = searched["median"].to_numpy(float)
        result = Fit(
            platform=found.platform,
            error_before=found.objective_before,
            error_after=found.objective_after,
            evaluations=found.evaluations,
            values=found.values,
        )
        pooled = log_error(best, measured_median)
    else:
        result = fit(platform, used, names, simulate, max_evaluations, log)
        best = simulate(result.platform, used)
        pooled = result.error_after
    ranking = sim_score.choice_lines(searched.assign(simulated=best))
    for line in ranking:
        log(f"  training cells, {line}")
    target = measured_spread(used)
    noise = fit_noise(result.platform, sample, target, simulate)
    doc = result.platform
    doc["storage"]["noise"] = round(noise, 4)
    doc["calibration"] = {
        "from_platform": str(source),
        "measured": [str(m) for m in measured],
        "seed": seed,
        "fraction": fraction,
        "options": sorted(int(o) for o in used[sim_cells.OPTION].unique()),
        "patterns": chosen,
        "cells": len(used),
        "parameters": {n: doc_value(doc, n) for n in names},
        "noise": {"measured_median_cv": round(target, 4), "storage.noise": round(noise, 4)},
        "requests_per_rank": requests_per_rank,
        "total_bytes": total_bytes,
        "scheduler": scheduler,
        "method": (
            "scipy.optimize.differential_evolution, log10 parameters (counts log2, integers), "
            "bounded, seeded, Latin hypercube with the start as a member"
            if method == "global"
            else "scipy.optimize.minimize Nelder-Mead, log10 parameters, bounded"
        )
        + (", device access times by per-size log residual" if ACCESS_TIMES in names else ""),
        "objective": (
            calibrate_global.OBJECTIVES[objective].__doc__.split(".")[0].strip()
            if method == "global"
            else "mean squared log error of median bandwidth per (pattern, ionodes) cell"
        ),
        "error_before": round(result.error_before, 5),
        "error_after": round(result.error_after, 5),
        "log_error_after": round(pooled, 5),
        "training_ranking": ranking,
        "evaluations": result.evaluations,
    }
    if method == "global":
        doc["calibration"]["max_minutes"] = max_minutes
        doc["calibration"]["search_share"] = search_share
        doc["calibration"]["search_every_node_count"] = search_every_node_count
        doc["calibration"]["search_patterns"] = sorted(searched["pattern"].unique())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    what = f"{objective} objective" if method == "global" else "log error"
    log(
        f"{what} {result.error_before:.3f} -> {result.error_after:.3f} in "
        f"{result.evaluations} evaluations (pooled log error {pooled:.3f}); noise {noise:.3f}; "
        f"wrote {out}"
    )
    return doc


def doc_value(doc: Mapping[str, Any], name: str) -> str:
    if name == ACCESS_TIMES:
        return _device(doc).get("access", "")
    section, key = name.split(".", 1)
    if key.startswith("device."):
        return _device(doc)[key.split(".")[1]]
    return str(doc.get(section, {}).get(key, "-"))
