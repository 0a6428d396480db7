#!/usr/bin/env python3
"""A FORGE fit on its own training patterns (issue 50): the platform written by
`bench/sim_forge.py --method global` simulated (noise 0, as the held-back prediction is) on all
of the training patterns its `calibration` record names, not only the share its search saw, and
the choosing scores by group: searched or not, node count, layout. Then, from the measurements
only, what the direct-access slow mode does to the regret over all options in this seed's split.
Training data only: nothing here reads the held-back patterns' simulations.

    nice -n 10 .venv/bin/python bench/sim_forge_training.py DIR/marenostrum4-all.json
        [--measured DIR] [--jobs 1] [--out DIR/training.md]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
from sim_forge import FORGE, forge_total, slow_mode

from iorelay import sim_cells, sim_score
from iorelay.analysis.reader import read_results


def row(name: str, cells: pd.DataFrame) -> str:
    a = sim_score.choice_scores(cells)
    f = sim_score.choice_scores(cells, options=sim_score.FORWARDED)
    fwd = cells[cells["ionodes"].isin(sim_score.FORWARDED)]
    eight = sim_score.fixed_choice_regret(cells, [8])[8]
    eight_fwd = sim_score.fixed_choice_regret(fwd, [8])[8]
    return (
        f"| {name} | {a['patterns']} | {a['within_rho']:.3f} / {f['within_rho']:.3f} | "
        f"{a['regret_ratio']:.3f} / {f['regret_ratio']:.3f} | {eight:.3f} / {eight_fwd:.3f} |"
    )


def split_line(cells: pd.DataFrame, patterns: set[str], name: str) -> str:
    """Slow-mode patterns among `patterns`, always-8's regret there, and what a chooser that
    picks direct in the slow mode (as a model without it does) needs on the others to match."""
    mine = cells[cells["pattern"].isin(patterns)]
    best = mine.groupby("pattern")["median"].max()
    direct = mine[mine["ionodes"] == 0].set_index("pattern")["median"] / best
    eight = mine[mine["ionodes"] == 8].set_index("pattern")["median"] / best
    slow = sorted(set(mine.loc[slow_mode(mine), "pattern"]))
    rest = len(best) - len(slow)
    need = (eight.mean() * len(best) - direct[slow].sum()) / rest
    cap = (direct[slow].sum() + rest) / len(best)
    return (
        f"- {name}: {len(slow)} of {len(best)} patterns in the slow mode (direct there "
        f"{direct[slow].mean():.3f} of the best); always 8 {eight.mean():.3f}; right everywhere "
        f"else and direct there {cap:.3f}; to match always 8 the others need {need:.3f}"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("platform", type=Path, help="a platform written by sim_forge.py")
    p.add_argument("--measured", type=Path, default=FORGE)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", type=Path, help="default: training.md beside the platform")
    args = p.parse_args()
    doc = json.loads(args.platform.read_text())
    record = doc["calibration"]
    cells = sim_cells.measured_cells(read_results([args.measured]), forge_total(args.measured))
    train = set(record["patterns"])
    used = cells[cells["pattern"].isin(train) & cells["ionodes"].isin(record["options"])]
    used = used.reset_index(drop=True)
    doc["storage"]["noise"] = 0
    simulated = sim_cells.simulate_cells(
        doc, used, record["requests_per_rank"], record["scheduler"], 1, args.jobs
    )
    scored = used.assign(simulated=simulated)
    searched = scored["pattern"].isin(record.get("search_patterns", sorted(train)))
    lines = [
        f"{args.platform}: seed {record['seed']}, {len(train)} training patterns, "
        f"options {record['options']}, simulated with noise 0",
        "",
        "| training patterns | patterns | within-pattern rho, all / 1-2-4-8 | regret ratio, "
        "all / 1-2-4-8 | always 8, all / 1-2-4-8 |",
        "|---|---|---|---|---|",
        row("all", scored),
        row("searched", scored[searched]),
        row("not searched", scored[~searched]),
        *(row(f"{n} nodes", g) for n, g in scored.groupby("nodes")),
        *(row(f"{lay}", g) for lay, g in scored.groupby("layout")),
        row("without the slow mode", scored[~slow_mode(scored)]),
        "",
        "The slow mode in this seed's split (measurements only, all options):",
    ]
    held = set(cells["pattern"]) - train
    lines += [split_line(cells, train, "training"), split_line(cells, held, "held-back")]
    text = "\n".join(lines) + "\n"
    (args.out or args.platform.parent / "training.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
