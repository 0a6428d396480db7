#!/usr/bin/env python3
"""Simple baselines for choosing I/O nodes on FORGE's MareNostrum 4, scored as
bench/sim_forge.py scores the simulator (sim_score.choice_scores, within each held-back pattern
over its options), for several seeds of the same 30% stratified split: the stratum's shape (the
mean over the training patterns of layout x spatiality x processes per node of each option's log
bandwidth against its pattern's mean, a lookup that cannot predict an option it did not see),
always 8, and the measurements' own split-half ceiling (each held-back pattern's runs split in two
halves by their order in the data, one half's medians predicting the other's). Simulates nothing.

    .venv/bin/python bench/forge_shape_baseline.py [--seeds 1,2,3] [--fraction 0.3]
        [--out bench/results/forge-shape-baseline.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sim_forge import FORGE, forge_total

from iorelay import calibrate, sim_cells, sim_score
from iorelay.analysis.reader import read_results
from iorelay.markdown import frame_table

REPO = Path(__file__).resolve().parents[1]
SLOW_MODE = "fpp/contiguous, 12 and 24 per node"


def stratum_shape(train: pd.DataFrame, test: pd.DataFrame, options: list[int]) -> pd.Series:
    """Each test cell predicted by its stratum's mean shape over the training cells of
    `options` (an option the training never saw gets NaN)."""
    keys = ["layout", "spatiality", "ppn"]
    t = train[train[sim_cells.OPTION].isin(options)].copy()
    logs = np.log(t["median"])
    t["shape"] = logs - logs.groupby(t["pattern"]).transform("mean")
    shape = t.groupby([*keys, sim_cells.OPTION])["shape"].mean()
    index = pd.MultiIndex.from_frame(test[[*keys, sim_cells.OPTION]])
    return pd.Series(np.exp(shape.reindex(index).to_numpy()), index=test.index)


def split_half(runs: pd.DataFrame, test_patterns: set[str]) -> pd.DataFrame:
    """Held-back cells with `median` from the runs at even positions and `simulated` from the
    odd ones (cells of a single run dropped)."""
    runs = runs.copy()
    keys = [*sim_cells.pattern_columns(runs), sim_cells.OPTION]
    runs["pos"] = runs.groupby(keys, dropna=False).cumcount()
    halves = []
    for parity in (0, 1):
        half = sim_cells.measured_cells(runs[runs["pos"] % 2 == parity])
        halves.append(half.set_index(["pattern", sim_cells.OPTION])["median"])
    both = pd.concat(halves, axis=1, keys=["median", "simulated"]).dropna().reset_index()
    both = both[both["pattern"].isin(test_patterns)]
    full = both.groupby("pattern")[sim_cells.OPTION].transform("count") == 5
    return both[full]


def row(name: str, seed: int, cells: pd.DataFrame, predicted: str = "simulated") -> dict:
    out: dict = {"predictor": name, "seed": seed}
    ppn = cells["pattern"].str.extract(r"/n(\d+)/p(\d+)/").astype(int)
    slow = cells["pattern"].str.startswith("fpp/contiguous") & (ppn[1] // ppn[0]).isin([12, 24])
    for label, part in (("", cells), (" w/o slow", cells[~slow])):
        for opt_label, opts in (("all", None), ("1-2-4-8", sim_score.FORWARDED)):
            s = sim_score.choice_scores(part, predicted, opts)
            out[f"rho {opt_label}{label}"] = round(s["within_rho"], 3)
            out[f"regret {opt_label}{label}"] = round(s["regret_ratio"], 3)
    out["patterns"] = cells["pattern"].nunique()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=lambda s: [int(v) for v in s.split(",")], default=[1, 2, 3])
    p.add_argument("--fraction", type=float, default=0.3)
    p.add_argument("--out", type=Path, default=REPO / "bench/results/forge-shape-baseline.md")
    args = p.parse_args()
    runs = read_results([FORGE])
    cells = sim_cells.measured_cells(runs, forge_total(FORGE))
    cells["ppn"] = cells["processes"] // cells["nodes"]
    rows = []
    for seed in args.seeds:
        train_p = set(calibrate.stratified_patterns(cells, args.fraction, seed))
        train = cells[cells["pattern"].isin(train_p)]
        test = cells[~cells["pattern"].isin(train_p)].reset_index(drop=True)
        for name, opts in (("stratum shape, all options", [0, 1, 2, 4, 8]),
                           ("stratum shape, 0/1/2 (4, 8 unseen: NaN)", [0, 1, 2])):  # fmt: skip
            scored = test.assign(simulated=stratum_shape(train, test, opts).fillna(0.0))
            rows.append(row(name, seed, scored))
        rows.append(row("always 8", seed, test.assign(simulated=test[sim_cells.OPTION] == 8)))
        rows.append(
            row("split-half of the measurements", seed, split_half(runs, set(test["pattern"])))
        )
    table = pd.DataFrame(rows)
    text = [
        "# FORGE MareNostrum 4: simple baselines for choosing I/O nodes",
        "",
        f"Command: `.venv/bin/python bench/forge_shape_baseline.py --seeds "
        f"{','.join(map(str, args.seeds))} --fraction {args.fraction}`. Held-back patterns of "
        f"each seed's 30% stratified split; within-pattern Spearman rho and regret ratio "
        f"(sim_score.choice_scores: ties within 3%, flat predictions rho 0 and the cheapest "
        f"option); 'w/o slow': without the direct-access slow-mode patterns ({SLOW_MODE}). "
        "'always 8' over all options is always the best-of 8 (rho is that of a two-level "
        "prediction); the split-half row keeps patterns with runs in both halves for all five "
        "options.",
        "",
        frame_table(table),
        "",
    ]
    args.out.write_text("\n".join(text))
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
