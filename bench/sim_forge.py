#!/usr/bin/env python3
"""The simulator against FORGE's MareNostrum 4 measurements (issue 15, criterion 2; issue 50):
calibrate platforms/marenostrum4-nominal.json on a seeded, stratified share of the 189 patterns,
predict the rest, and score the prediction (Spearman's rho over held-back cells; within each
pattern, over its options, the mean rho and the regret ratio of the simulator's choice, with
ties reported as sim_score does); then the same calibrated only on 0, 1 and 2 forwarders
(extrapolation to 4 and 8). Any FORGE-format data set with --measured.

    nice -n 10 .venv/bin/python bench/sim_forge.py [--measured DIR] [--fraction 0.3] [--seed 1]
        [--requests-per-rank 4] [--max-evaluations 30] [--out-dir bench/results/sim-forge]
        [--method local|global] [--objective choice] [--max-minutes 20] [--search-share 0.34]
        [--parts all,extrapolation,uncalibrated]   # none: only summarize what --out-dir holds
    ... bench/sim_forge.py --cap-check [--patterns 9]   # does the request cap change rankings?
    ... bench/sim_forge.py --speed-check [--reps 5]     # the whole sweep, repeated: how long?

Writes the calibrated platforms, every cell (measured median, simulated) as CSV, and a Markdown
summary (also on stdout) to --out-dir.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

from iorelay import calibrate, calibrate_global, paths, sim_cells, sim_score
from iorelay.analysis.reader import read_results
from iorelay.markdown import frame_table

REPO = Path(__file__).resolve().parents[1]

FORGE = REPO.parent / "shared" / "data" / "forge-marenostrum4"
OPTIONS = (0, 1, 2, 4, 8)


# The parameters behind the documented 0.804 / 0.644 (docs/simulator.md), with 30 evaluations.
DOCUMENTED_PARAMETERS = [
    "storage.device.access",
    "ionode.slots",
    "storage.file_writes_per_client",
    "storage.token_handoff",
    "storage.device.seek",
    "ionode.request_overhead",
]


def forge_total(measured: Path = FORGE) -> int:
    """The bytes every FORGE run planned to move (column total, MiB; one value in the data)."""
    totals = set(pd.read_csv(measured / "direct.csv", sep=";")["total"])
    if len(totals) != 1:
        raise SystemExit(f"FORGE runs plan different totals: {sorted(totals)}")
    return int(totals.pop()) << 20


def predict(platform_file: Path, cells: pd.DataFrame, args: argparse.Namespace) -> pd.DataFrame:
    doc = json.loads(platform_file.read_text())
    doc["storage"]["noise"] = 0  # the prediction is the noise-free model
    out = cells.copy()
    out["simulated"] = sim_cells.simulate_cells(
        doc, cells, args.requests_per_rank, args.scheduler, 1, args.jobs
    )
    return out


def scores(cells: pd.DataFrame) -> dict[str, float]:
    """Pooled rho and the old regret ratio (exact ties to the fewest I/O nodes), and the choosing
    scores over all options and over the forwarded ones (sim_score.choice_scores)."""
    out: dict[str, float] = {
        "cells": len(cells),
        "patterns": cells["pattern"].nunique(),
        "spearman": sim_score.spearman(cells),
        "regret_ratio": sim_score.regret_ratio(cells),
    }
    for label, options in (("all", None), ("fwd", sim_score.FORWARDED)):
        for key, value in sim_score.choice_scores(cells, options=options).items():
            out[f"{label}_{key}"] = value
    return out


PARTS = {"all": None, "extrapolation": [0, 1, 2]}


def slow_mode(cells: pd.DataFrame) -> pd.Series:
    """The direct-access slow-mode patterns' cells: file per process, 12 and 24 per node."""
    per_node = cells["processes"] // cells["nodes"]
    return (cells["layout"] == "fpp") & per_node.isin([12, 24])


def training_cells(platform_file: Path, measured: Path, jobs: int) -> pd.DataFrame:
    """The training patterns a written platform's `calibration` record names, with the options
    it was fitted on, simulated on it with noise 0 (as the held-back prediction); kept beside
    it as training-cells-PART.csv and read from there when present."""
    cache = platform_file.parent / f"training-cells-{platform_file.stem.split('-', 1)[1]}.csv"
    if cache.exists():
        return pd.read_csv(cache)
    doc = json.loads(platform_file.read_text())
    record = doc["calibration"]
    cells = sim_cells.measured_cells(read_results([measured]), forge_total(measured))
    used = cells["pattern"].isin(record["patterns"]) & cells["ionodes"].isin(record["options"])
    train = cells[used].reset_index(drop=True)
    doc["storage"]["noise"] = 0
    train["simulated"] = sim_cells.simulate_cells(
        doc, train, record["requests_per_rank"], record["scheduler"], 1, jobs
    )
    train.to_csv(cache, index=False)
    return train


MARGIN_HEADER = [
    "| platform | margin (cross-validated training regret, with / plain) | used | regret ratio, "
    "all options: plain / with the margin | without the slow mode: plain / with | direct "
    "overruled | always 8, all / without the slow mode |",
    "|---|---|---|---|---|---|---|",
]


def margin_row(name: str, train: pd.DataFrame, held: pd.DataFrame) -> tuple[str, dict]:
    """The direct-access margin fitted on a fit's training cells (sim_score.fit_direct_margin)
    and the held-back cells' regret ratio over all options with and without it, as a table row
    (MARGIN_HEADER) and a record."""
    fit = sim_score.fit_direct_margin(train)
    rest = held[~slow_mode(held)]
    a, b = (
        sim_score.margin_scores(held, fit["margin"]),
        sim_score.margin_scores(rest, fit["margin"]),
    )
    eight, eight_rest = (sim_score.fixed_choice_regret(c, [8])[8] for c in (held, rest))
    row = (
        f"| {name} | {fit['margin']:g} ({fit['cv_with']:.3f} / {fit['cv_without']:.3f}) | "
        f"{'yes' if fit['helps'] else 'no'} | {a['regret_without']:.3f} / {a['regret_with']:.3f} | "
        f"{b['regret_without']:.3f} / {b['regret_with']:.3f} | {a['overruled']} | "
        f"{eight:.3f} / {eight_rest:.3f} |"
    )
    return row, {**fit, "held_back": a, "held_back_without_slow_mode": b}


def calibrate_part(args: argparse.Namespace, cells: pd.DataFrame, name: str) -> None:
    """Calibrates on the training patterns (all options, or 0/1/2 forwarders) and writes the
    platform and the held-back cells with their predictions."""
    train = calibrate.stratified_patterns(cells, args.fraction, args.seed)
    test = cells[~cells["pattern"].isin(train)].reset_index(drop=True)
    out = args.out_dir / f"marenostrum4-{name}.json"
    start = time.monotonic()
    calibrate.calibrate(
        [str(args.measured)], args.platform, out, names=args.parameters, options=PARTS[name],
        patterns=train, fraction=args.fraction, seed=args.seed,
        requests_per_rank=args.requests_per_rank, total_bytes=forge_total(args.measured),
        scheduler=args.scheduler, max_evaluations=args.max_evaluations, jobs=args.jobs,
        method=args.method, objective=args.objective, max_minutes=args.max_minutes,
        search_share=args.search_share, log_path=args.out_dir / f"marenostrum4-{name}.log.jsonl",
        resume=args.resume, search_every_node_count=args.search_every_node_count,
    )  # fmt: skip
    predicted = predict(out, test, args)
    predicted["seconds"] = round(time.monotonic() - start, 1)
    predicted.to_csv(args.out_dir / f"cells-{name}.csv", index=False)
    training_cells(out, args.measured, args.jobs)  # for the direct-access margin (summarize)


def uncalibrated_part(args: argparse.Namespace, cells: pd.DataFrame) -> None:
    train = calibrate.stratified_patterns(cells, args.fraction, args.seed)
    test = cells[~cells["pattern"].isin(train)].reset_index(drop=True)
    predict(calibrate.platform_path(args.platform), test, args).to_csv(
        args.out_dir / "cells-uncalibrated.csv", index=False
    )


def by_stratum(cells: pd.DataFrame) -> pd.DataFrame:
    """Spearman rho, regret ratio and the simulator's most frequent pick per layout, spatiality
    and processes per node."""
    cells = cells.assign(ppn=cells["processes"] // cells["nodes"])
    rows = []
    for (layout, spatiality, ppn), group in cells.groupby(["layout", "spatiality", "ppn"]):
        picks = sim_cells.best_option(group, "simulated")
        best = sim_cells.best_option(group, "median")
        rows.append({"layout": layout, "spatiality": spatiality, "per node": ppn,
                     "patterns": group["pattern"].nunique(),
                     "rho": sim_score.spearman(group), "regret": sim_score.regret_ratio(group),
                     "simulator picks": picks.mode().iloc[0],
                     "measured best": best.mode().iloc[0]})  # fmt: skip
    return pd.DataFrame(rows)


def slow_mode_free_row(name: str, cells: pd.DataFrame) -> str:
    """The choosing scores of `cells` without the direct-access slow-mode patterns (file per
    process at 12 and 24 processes per node), beside always-8 on the same, as a table row."""
    kept = cells[~slow_mode(cells)]
    forwarded = kept[kept["ionodes"].isin(sim_score.FORWARDED)]
    a = sim_score.choice_scores(kept)
    f = sim_score.choice_scores(kept, options=sim_score.FORWARDED)
    eight = sim_score.fixed_choice_regret(kept, [8])[8]
    eight_fwd = sim_score.fixed_choice_regret(forwarded, [8])[8]
    return (
        f"| {name} | {a['patterns']} | {a['within_rho']:.3f} / {f['within_rho']:.3f} | "
        f"{a['regret_ratio']:.3f} / {f['regret_ratio']:.3f} | {eight:.3f} / {eight_fwd:.3f} | "
        f"{a['cannot_tell']} / {f['cannot_tell']} |"
    )


def summarize(args: argparse.Namespace, cells: pd.DataFrame) -> list[str]:
    """The scores of every part whose cells are in --out-dir."""
    train = calibrate.stratified_patterns(cells, args.fraction, args.seed)
    test = cells[~cells["pattern"].isin(train)]
    lines = [
        f"{args.measured.name}: {cells['pattern'].nunique()} patterns, {len(cells)} cells; "
        f"calibrated on {len(train)} patterns (seed {args.seed}, fraction {args.fraction}, "
        f"stratified by layout x spatiality), scored on the {test['pattern'].nunique()} "
        f"held-back patterns; {args.requests_per_rank} requests per rank, scheduler "
        f"{args.scheduler}",
        "",
        "| platform | fitted on | held-back cells | pooled rho | regret ratio (old) | "
        "within-pattern rho, all / 1-2-4-8 | regret ratio, all / 1-2-4-8 | tie-set mean, "
        "all / 1-2-4-8 | ties, all / 1-2-4-8 | cannot tell, all / 1-2-4-8 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    summary: dict[str, object] = {"train_patterns": train, "seed": args.seed}
    strata: dict[str, pd.DataFrame] = {}
    for name, fitted in (
        ("all", "all options"),
        ("extrapolation", "0, 1, 2 forwarders"),
        ("uncalibrated", f"- ({args.platform} as shipped)"),
    ):
        path = args.out_dir / f"cells-{name}.csv"
        if not path.exists():
            continue
        predicted = pd.read_csv(path)
        s = scores(predicted)
        if name == "extrapolation":
            s["spearman_4_8"] = sim_score.spearman(predicted[predicted["ionodes"] >= 4])
        summary[name] = s
        lines.append(
            f"| {name} | {fitted} | {s['cells']} | {s['spearman']:.3f} | {s['regret_ratio']:.3f} | "
            f"{s['all_within_rho']:.3f} / {s['fwd_within_rho']:.3f} | "
            f"{s['all_regret_ratio']:.3f} / {s['fwd_regret_ratio']:.3f} | "
            f"{s['all_regret_ratio_tie_mean']:.3f} / {s['fwd_regret_ratio_tie_mean']:.3f} | "
            f"{s['all_ties']} / {s['fwd_ties']} | {s['all_cannot_tell']} / {s['fwd_cannot_tell']} |"
        )
        strata[name] = by_stratum(predicted)
    lines += ["", "The same without the direct-access slow-mode patterns (file per process, "
              "12 and 24 processes per node; docs/simulator.md):", "",
              "| platform | patterns | within-pattern rho, all / 1-2-4-8 | regret ratio, all / "
              "1-2-4-8 | always 8, all / 1-2-4-8 | cannot tell, all / 1-2-4-8 |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for name in ("all", "extrapolation", "uncalibrated"):
        path = args.out_dir / f"cells-{name}.csv"
        if path.exists():
            lines.append(slow_mode_free_row(name, pd.read_csv(path)))
    margins = []
    for name in PARTS:
        held, train_path = (
            args.out_dir / f"cells-{name}.csv",
            args.out_dir / f"training-cells-{name}.csv",
        )
        if held.exists() and train_path.exists():
            row, record = margin_row(name, pd.read_csv(train_path), pd.read_csv(held))
            margins.append(row)
            summary[f"margin_{name}"] = record
    if margins:
        lines += ["", "The choice with the direct-access margin (direct only when its predicted "
                  "lead over the best forwarded option is at least the margin, fitted on the "
                  "training patterns by cross-validation; used when it beats the plain tie rule "
                  "there; docs/simulator.md):", "", *MARGIN_HEADER, *margins]  # fmt: skip
    fixed = sim_score.fixed_choice_regret(test, OPTIONS)
    forwarded = test[test["ionodes"].isin(sim_score.FORWARDED)]
    fixed_fwd = sim_score.fixed_choice_regret(forwarded, sim_score.FORWARDED)
    summary["fixed_choice_regret"] = fixed
    summary["fixed_choice_regret_forwarded"] = fixed_fwd
    lines += ["", "Regret ratio of always choosing one option, same held-back patterns: "
              + ", ".join(f"{k}: {v:.3f}" for k, v in fixed.items())
              + "; choosing among 1/2/4/8 only: "
              + ", ".join(f"{k}: {v:.3f}" for k, v in fixed_fwd.items())]  # fmt: skip
    for name, table in strata.items():
        lines += ["", f"{name}, by stratum (processes per node = processes / nodes):", "",
                  frame_table(table)]  # fmt: skip
    extrapolated = summary.get("extrapolation")
    if isinstance(extrapolated, dict):
        rho48 = extrapolated["spearman_4_8"]
        lines.append(f"Extrapolation, Spearman rho over the 4- and 8-forwarder cells: {rho48:.3f}")
    (args.out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return lines


def run_cap_check(args: argparse.Namespace, cells: pd.DataFrame) -> list[str]:
    """The same patterns with a small and a large request cap: same best option? same order?"""
    rng = random.Random(args.seed)
    names = sorted(cells.loc[cells["processes"] <= args.max_processes, "pattern"].unique())
    chosen = rng.sample(names, args.patterns)
    subset = cells[cells["pattern"].isin(chosen)].reset_index(drop=True)
    platform = calibrate.platform_path(args.cap_platform or args.platform)
    results = {}
    for cap in args.caps:
        args.requests_per_rank = cap
        start = time.monotonic()
        results[cap] = predict(platform, subset, args)
        results[cap]["seconds"] = time.monotonic() - start
        results[cap].to_csv(args.out_dir / f"cap-{cap}.csv", index=False)
    lo, hi = args.caps[0], args.caps[-1]
    a, b = results[lo], results[hi]
    taus = []
    for p in chosen:
        x = a[a["pattern"] == p]["simulated"].rank().to_numpy()
        y = b[b["pattern"] == p]["simulated"].rank().to_numpy()
        taus.append(pd.Series(x).corr(pd.Series(y), method="kendall"))
    return [
        f"Request cap check on {len(chosen)} patterns (seed {args.seed}) x {len(OPTIONS)} options,"
        f" platform {platform.name}: {lo} vs {hi} requests per rank",
        f"- same best option: {sim_score.same_best_share(a, b):.0%} of patterns",
        f"- mean Kendall tau of the option order within a pattern: {sum(taus) / len(taus):.3f}",
        f"- wall seconds: {a['seconds'].iloc[0]:.0f} vs {b['seconds'].iloc[0]:.0f}",
    ]


def run_stonewall_check(args: argparse.Namespace) -> list[str]:
    """What simulating FORGE's stonewalled runs to their stonewall would cost, in simulated
    requests, against the pipeline's cap of --requests-per-rank per rank: the requests each
    measured run made before its stonewall (MiB moved / request size)."""
    runs = pd.concat(
        [pd.read_csv(args.measured / f, sep=";") for f in ("direct.csv", "forwarding.csv")]
    )
    made = runs["transfered"] * 1024 / runs["request"]
    cap = args.requests_per_rank * runs["processes"]
    stopped = (runs["transfered"] < 0.999 * runs["total"]).mean()
    ratio = made / cap
    return [
        f"Stonewall: {len(runs)} runs, {stopped:.0%} stopped by their stonewall "
        f"({', '.join(f'{v:g} s' for v in sorted(runs['stonewall'].unique()))})",
        f"- requests made per run: median {made.median():,.0f}; all runs {made.sum():.3g}",
        f"- at the cap of {args.requests_per_rank} per rank: all runs {cap.sum():.3g} "
        f"({made.sum() / cap.sum():.0f}x fewer); per run made / cap: median {ratio.median():.1f},"
        f" max {ratio.max():,.0f}",
    ]


def run_speed_check(args: argparse.Namespace, cells: pd.DataFrame) -> list[str]:
    """Every cell (all patterns x options) --reps times with seeds 1..reps on the calibrated
    platform, its noise on (repetitions differ), --jobs at a time: the sweep's wall time,
    simulated requests per wall second and the largest run's peak memory."""
    doc = json.loads(calibrate.platform_path(args.cap_platform or args.platform).read_text())
    runs = cells.to_dict("records")
    time_bin = shutil.which("time") or "/usr/bin/time"
    with tempfile.TemporaryDirectory(prefix="iorelay-speed-") as tmp:
        platform = Path(tmp) / "platform.json"
        platform.write_text(json.dumps(doc))
        tool = str(paths.find("iorelay-sim"))

        def one(job: tuple[int, dict]) -> tuple[int, int]:
            seed, cell = job
            argv = sim_cells.sim_argv(cell, platform, args.requests_per_rank, args.scheduler, seed)
            with tempfile.NamedTemporaryFile("r", dir=tmp, suffix=".rss") as rss:
                out = subprocess.run([time_bin, "-f", "%M", "-o", rss.name, tool, *argv],
                                     capture_output=True, text=True, check=True)  # fmt: skip
                peak_kb = int(rss.read().split()[-1])
            return json.loads(out.stdout)["requests"], peak_kb

        jobs = [(seed, cell) for seed in range(1, args.reps + 1) for cell in runs]
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(one, jobs))
        wall = time.monotonic() - start
    requests = sum(r for r, _ in results)
    return [
        f"Speed: {cells['pattern'].nunique()} patterns x {cells['ionodes'].nunique()} options x "
        f"{args.reps} repetitions = {len(jobs)} runs, {args.requests_per_rank} requests per rank, "
        f"{args.jobs} at a time, platform {doc.get('name')} "
        f"(noise {doc['storage'].get('noise', 0)})",
        f"- wall time {wall:.0f} s ({wall / len(jobs) * 1000:.0f} ms per run)",
        f"- simulated requests {requests:,}, {requests / wall:,.0f} per wall second",
        f"- peak RSS of the largest run {max(k for _, k in results) / 1024:.0f} MB",
    ]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--measured", type=Path, default=FORGE, help="a FORGE-format data directory")
    p.add_argument("--platform", default="marenostrum4-nominal")
    p.add_argument("--fraction", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--requests-per-rank", type=int, default=sim_cells.DEFAULT_REQUESTS_PER_RANK)
    p.add_argument("--scheduler", default="fifo")
    p.add_argument("--max-evaluations", type=int, default=30)
    p.add_argument("--parameters", type=lambda s: s.split(","), default=DOCUMENTED_PARAMETERS)
    p.add_argument("--method", choices=("local", "global"), default="local")
    p.add_argument("--objective", choices=tuple(calibrate_global.OBJECTIVES), default="choice")
    p.add_argument("--max-minutes", type=float, default=0.0, help="--method global: budget")
    p.add_argument("--search-share", type=float, default=1.0, help="--method global: the "
                   "share of the training patterns each point of the search simulates")  # fmt: skip
    p.add_argument("--search-every-node-count", action=argparse.BooleanOptionalAction,
                   default=True, help="--search-share: also the cheapest pattern of each "
                   "layout x spatiality x node count (default on; --no-...: off)")  # fmt: skip
    p.add_argument("--resume", action="store_true", help="--method global: continue the logs")
    p.add_argument("--jobs", type=int, default=sim_cells.default_jobs())
    p.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results" / "sim-forge")
    p.add_argument(
        "--parts",
        type=lambda s: s.split(","),
        default=["all", "extrapolation", "uncalibrated"],
        help="what to compute before the summary: all, extrapolation, uncalibrated (none: "
        "only summarize the cells already in --out-dir)",
    )
    p.add_argument("--cap-check", action="store_true", help="only the request-cap check")
    p.add_argument("--patterns", type=int, default=9, help="--cap-check: patterns to simulate")
    p.add_argument("--max-processes", type=int, default=1536, help="--cap-check: pattern size")
    p.add_argument("--cap-platform", help="--cap-check, --speed-check: platform (default: "
                   "--platform)")  # fmt: skip
    p.add_argument("--speed-check", action="store_true", help="only time the whole sweep")
    p.add_argument("--stonewall-check", action="store_true", help="only what simulating to "
                   "the measured runs' stonewall would cost in requests")  # fmt: skip
    p.add_argument("--reps", type=int, default=5, help="--speed-check: repetitions")
    p.add_argument("--caps", type=lambda s: [int(v) for v in s.split(",")], default=[4, 32])
    args = p.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    cells = sim_cells.measured_cells(read_results([args.measured]), forge_total(args.measured))
    if args.stonewall_check:
        print("\n".join(run_stonewall_check(args)))
        return 0
    if args.speed_check:
        lines = run_speed_check(args, cells)
    elif args.cap_check:
        lines = run_cap_check(args, cells)
    else:
        for part in args.parts:
            if part in PARTS:
                calibrate_part(args, cells, part)
            elif part == "uncalibrated":
                uncalibrated_part(args, cells)
            elif part != "none":
                raise SystemExit(f"unknown part {part!r}; valid: all, extrapolation, uncalibrated")
        lines = summarize(args, cells)
    text = "\n".join(lines) + "\n"
    name = (
        "speed-check.md" if args.speed_check else "cap-check.md" if args.cap_check else "summary.md"
    )
    (args.out_dir / name).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
