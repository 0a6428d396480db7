#!/usr/bin/env python3
"""FORGE's direct (0-forwarder) runs against its one-forwarder runs, by layout, ranks per node
and whether the run wrote its whole planned total before the stonewall; and the best regret
ratio a predictor can reach on the held-back patterns of bench/sim_forge.py while it picks direct
access for file per process at 12 and 24 ranks per node (as a model whose direct access is fast
does). Reads ../shared/data/forge-marenostrum4 only; simulates nothing.

    .venv/bin/python bench/forge_direct_modes.py [--fraction 0.3] [--seed 1]
        [--out bench/results/forge-direct-modes.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from sim_forge import FORGE

from iorelay import calibrate, sim_cells, sim_score
from iorelay.analysis.reader import read_results
from iorelay.markdown import frame_table as markdown

REPO = Path(__file__).resolve().parents[1]

PATTERN = ["layout", "spatiality", "clients", "processes", "request"]


def direct_runs() -> pd.DataFrame:
    """Every direct run with its pattern's one-forwarder median, their ratio, and whether it
    wrote its whole planned total before the stonewall."""
    runs = pd.concat(pd.read_csv(FORGE / f, sep=";") for f in ("direct.csv", "forwarding.csv"))
    runs["ranks_per_node"] = runs["processes"] // runs["clients"]
    one = runs[runs["forwarders"] == 1].groupby(PATTERN)["bandwidth"].median()
    direct = runs[runs["forwarders"] == 0].copy()
    direct["one_forwarder"] = direct.set_index(PATTERN).index.map(one)
    direct["ratio"] = direct["bandwidth"] / direct["one_forwarder"]
    direct["finished"] = direct["transfered"] >= 0.99 * direct["total"]
    direct["layout"] = direct["layout"].map({0: "fpp", 1: "shared"})
    return direct


def ratio_quartiles(direct: pd.DataFrame) -> pd.DataFrame:
    """The ratio's quartiles by layout, ranks per node and whether the run finished."""
    table = direct.groupby(["layout", "ranks_per_node", "finished"])["ratio"].describe()
    table = table[["count", "25%", "50%", "75%"]].round(2).reset_index()
    table["count"] = table["count"].astype(int)
    names = {"ranks_per_node": "ranks per node", "finished": "wrote the whole total",
             "count": "runs", "50%": "median"}  # fmt: skip
    return table.rename(columns=names)


def slow_by_request(direct: pd.DataFrame) -> pd.DataFrame:
    """File per process at fewer than 48 ranks per node, runs stopped by the stonewall: their
    median bandwidth and the one-forwarder median by request size (the same shape, 512 KiB
    dip included, if they move what one forwarder moves)."""
    slow = direct[(direct["layout"] == "fpp") & (direct["ranks_per_node"] < 48)]
    return slow[~slow["finished"]].groupby("request").agg(**{
        "runs": ("ratio", "size"), "direct / one forwarder": ("ratio", "median"),
        "direct": ("bandwidth", "median"), "one forwarder": ("one_forwarder", "median"),
    }).round(2).reset_index().rename(columns={"request": "request KiB"})  # fmt: skip


def regret_ceiling(fraction: float, seed: int) -> tuple[int, int, float]:
    """(held-back patterns, of them fpp at < 48 ranks per node, the regret ratio of picking
    the measured best everywhere except direct access for those)."""
    cells = sim_cells.measured_cells(read_results([FORGE]))
    test = cells[~cells["pattern"].isin(calibrate.stratified_patterns(cells, fraction, seed))]
    slow = (test["layout"] == "fpp") & (test["processes"] / test["nodes"] < 48)
    # A prediction that is the measurement, except that those patterns rank direct first.
    predicted = test["median"].where(~slow, (test[sim_cells.OPTION] == 0).astype(float))
    test = test.assign(predicted=predicted)
    ceiling = sim_score.regret_ratio(test, "predicted")
    return test["pattern"].nunique(), test.loc[slow, "pattern"].nunique(), ceiling


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--fraction", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "forge-direct-modes.md")
    args = p.parse_args()
    direct = direct_runs()
    patterns, slow, ceiling = regret_ceiling(args.fraction, args.seed)
    lines = [
        "FORGE direct runs: bandwidth / the pattern's one-forwarder median (quartiles)",
        "",
        markdown(ratio_quartiles(direct)),
        "",
        "File per process, 12 and 24 ranks per node, runs stopped by the stonewall, by request "
        "size (medians, MiB/s):",
        "",
        markdown(slow_by_request(direct)),
    ]
    lines += [
        "",
        f"Held-back patterns (fraction {args.fraction}, seed {args.seed}): {patterns}; file per "
        f"process at 12 or 24 ranks per node: {slow}. Regret ratio when those pick direct access "
        f"and every other pattern its measured best: {ceiling:.3f}.",
    ]
    text = "\n".join(lines) + "\n"
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
