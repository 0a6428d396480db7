#!/usr/bin/env python3
"""A direct-access margin for a FORGE fit, from its training patterns only (issue 50): choose
direct access only when its predicted bandwidth leads the best forwarded option's by more than a
margin (option_ties.choose_with_margin), the margin picked by cross-validation over the fit's
training patterns; then the held-back patterns scored once with and without it.

The platform written by `bench/sim_forge.py --method global` is simulated (noise 0, as the
held-back prediction) on all the training patterns its `calibration` record names, with the
options it was fitted on (sim_forge.training_cells: training-cells-PART.csv beside it, which
sim_forge.py now writes itself); the held-back cells are the ones sim_forge.py predicted
(cells-PART.csv, or --held). sim_forge.py's summary holds the same table row; this adds the
cross-validation's detail and the model's error on the direct / forwarded decision.

    nice -n 10 .venv/bin/python bench/sim_forge_margin.py DIR/marenostrum4-PART.json
        [--held DIR/cells-PART.csv] [--measured DIR] [--jobs 1] [--folds 6]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pandas as pd
from sim_forge import FORGE, slow_mode, training_cells

from iorelay import sim_score


def lead_error(cells: pd.DataFrame) -> pd.Series:
    """Per pattern: log(predicted direct / best predicted forwarded) minus the same measured,
    the model's error on the one decision the margin is about."""
    out = {}
    for pattern, p, m in sim_score._per_pattern(cells, "simulated", None):
        fwd = [k for k in p if k != 0]
        if 0 in p and fwd and p[0] > 0 and min(p[k] for k in fwd) >= 0:
            predicted = math.log(p[0] / max(p[k] for k in fwd))
            measured = math.log(m[0] / max(m[k] for k in fwd))
            out[pattern] = predicted - measured
    return pd.Series(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("platform", type=Path, help="a platform written by sim_forge.py")
    p.add_argument("--held", type=Path, help="default: cells-PART.csv beside the platform")
    p.add_argument("--measured", type=Path, default=FORGE)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--folds", type=int, default=sim_score.MARGIN_FOLDS)
    p.add_argument("--out", type=Path, help="default: margin-PART.md beside the platform")
    args = p.parse_args()
    part = args.platform.stem.split("-", 1)[1]
    train = training_cells(args.platform, args.measured, args.jobs)
    fit = sim_score.fit_direct_margin(train, folds=args.folds)
    held_path = args.held or args.platform.parent / f"cells-{part}.csv"
    held = pd.read_csv(held_path)
    err = lead_error(train).abs()
    lines = [
        f"{args.platform}: {train['pattern'].nunique()} training patterns, options "
        f"{sorted(int(k) for k in train['ionodes'].unique())}; held-back cells {held_path.name}, "
        f"{held['pattern'].nunique()} patterns",
        "",
        f"Training, |log error| of the predicted direct / best-forwarded ratio: median "
        f"{err.median():.2f}, 90th percentile {err.quantile(0.9):.2f} "
        f"(x{math.exp(err.median()):.1f} / x{math.exp(err.quantile(0.9)):.1f})",
        "",
        f"Cross-validation over the training patterns ({args.folds} folds, margins "
        f"{', '.join(f'{m:g}' for m in sim_score.MARGINS)}): regret ratio over all options "
        f"{fit['cv_with']:.3f} with the margin picked on the other folds, {fit['cv_without']:.3f}"
        f" without (margins picked: {', '.join(f'{m:g}' for m in fit['fold_margins'])})",
        f"Margin on all training patterns: {fit['margin']:g} (training regret "
        f"{fit['train_with']:.3f}, without {fit['train_without']:.3f}); the rule helps in "
        f"cross-validation: {'yes' if fit['helps'] else 'no'}",
        "",
        "Held-back, scored once (regret ratio over all options; direct overruled: patterns "
        "where the prediction led with direct by less than the margin):",
        "",
        "| held-back patterns | without the margin | with the margin | direct overruled | "
        "always 8 |",
        "|---|---:|---:|---:|---:|",
    ]
    summary: dict[str, object] = {k: v for k, v in fit.items()}
    for name, cells in (("all", held), ("without the slow mode", held[~slow_mode(held)])):
        s = sim_score.margin_scores(cells, fit["margin"])
        eight = sim_score.fixed_choice_regret(cells, [8])[8]
        summary[name] = {**s, "always_8": eight}
        lines.append(
            f"| {name} ({s['patterns']}) | {s['regret_without']:.3f} | {s['regret_with']:.3f} | "
            f"{s['overruled']} | {eight:.3f} |"
        )
    text = "\n".join(lines) + "\n"
    (args.out or args.platform.parent / f"margin-{part}.md").write_text(text)
    (args.platform.parent / f"margin-{part}.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
