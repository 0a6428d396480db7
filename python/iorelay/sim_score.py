"""How well simulated cells predict measured ones: Spearman's rho over all cells, and the regret
ratio of choosing each pattern's option by the simulation (issue 15's FORGE criterion); and the
scores that matter for choosing (issue 50): the rank correlation within each pattern, over its
options, and the regret of a choice that reports ties (option_ties) and flat predictions."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pandas as pd
from scipy.stats import spearmanr

from iorelay import option_ties
from iorelay.sim_cells import OPTION, best_option

FORWARDED = (1, 2, 4, 8)  # the forwarded options of FORGE's data (0 is direct access)


def spearman(cells: pd.DataFrame, predicted: str = "simulated") -> float:
    """Spearman's rho between `predicted` and the measured median over all cells."""
    rho = spearmanr(cells[predicted], cells["median"]).statistic
    return float(rho)


def regret_ratio(cells: pd.DataFrame, predicted: str = "simulated") -> float:
    """Mean over patterns of (measured median of the option `predicted` ranks best) / (best
    measured median). 1 means the prediction always picks a measured best."""
    picked = best_option(cells, predicted)
    measured = cells.set_index(["pattern", OPTION])["median"]
    best = cells.groupby("pattern")["median"].max()
    ratios = [measured[(p, k)] / best[p] for p, k in picked.items()]
    return float(sum(ratios) / len(ratios))


def fixed_choice_regret(cells: pd.DataFrame, options: Sequence[int]) -> dict[int, float]:
    """The regret ratio of always choosing the same option, for each of `options`."""
    out = {}
    best = cells.groupby("pattern")["median"].max()
    for k in options:
        mine = cells[cells[OPTION] == k].set_index("pattern")["median"]
        out[int(k)] = float((mine / best.loc[mine.index]).mean())
    return out


def same_best_share(a: pd.DataFrame, b: pd.DataFrame, column: str = "simulated") -> float:
    """The share of patterns whose best option by `column` is the same in a and b."""
    best_a, best_b = best_option(a, column), best_option(b, column)
    common = best_a.index.intersection(best_b.index)
    return float((best_a.loc[common] == best_b.loc[common]).mean())


def _per_pattern(
    cells: pd.DataFrame, predicted: str, options: Sequence[int] | None
) -> list[tuple[str, dict[int, float], dict[int, float]]]:
    """(pattern, {option: predicted}, {option: measured median}) per pattern, only `options`."""
    if options is not None:
        cells = cells[cells[OPTION].isin(list(options))]
    out = []
    for pattern, g in cells.groupby("pattern", sort=True):
        ks = g[OPTION].astype(int).tolist()
        out.append(
            (
                str(pattern),
                dict(zip(ks, g[predicted].astype(float), strict=True)),
                dict(zip(ks, g["median"].astype(float), strict=True)),
            )
        )
    return out


def pattern_spearman(
    predicted: dict[int, float], measured: dict[int, float], tolerance: float
) -> float:
    """Spearman's rho of one pattern's options, predicted against measured (average ranks for
    exact ties). A flat prediction (option_ties.cannot_tell) counts 0: it orders nothing, and a
    tiny numerical slope must not count as an order. Fewer than two options: NaN."""
    if len(predicted) < 2:
        return float("nan")
    if option_ties.cannot_tell(predicted, tolerance):
        return 0.0
    ks = sorted(predicted)
    p = pd.Series([predicted[k] for k in ks]).rank()
    m = pd.Series([measured[k] for k in ks]).rank()
    rho = p.corr(m)
    return 0.0 if rho != rho else float(rho)  # measured flat: no order to find


def within_pattern_spearman(
    cells: pd.DataFrame,
    predicted: str = "simulated",
    options: Sequence[int] | None = None,
    tolerance: float = option_ties.TIE_TOLERANCE,
) -> float:
    """The mean over patterns of Spearman's rho between predicted and measured bandwidth over
    the pattern's options (only `options` when given, e.g. FORWARDED); flat predictions count
    0 (pattern_spearman). Unlike the pooled rho, a model that only knows that big patterns are
    big scores 0 here."""
    rhos = [
        pattern_spearman(p, m, tolerance) for _, p, m in _per_pattern(cells, predicted, options)
    ]
    rhos = [r for r in rhos if r == r]
    return float(sum(rhos) / len(rhos)) if rhos else float("nan")


def choices(
    cells: pd.DataFrame,
    predicted: str = "simulated",
    options: Sequence[int] | None = None,
    tolerance: float = option_ties.TIE_TOLERANCE,
) -> pd.DataFrame:
    """Per pattern: the predicted tie set (as "1/2/4"), whether the prediction cannot tell
    (flat), the option chosen (the cheapest of the tie set), and the measured ratios of the
    chosen option and of the tie set's mean to the pattern's measured best."""
    rows = []
    for pattern, p, m in _per_pattern(cells, predicted, options):
        tied = option_ties.tie_set(p, tolerance)
        best = max(m.values())
        chosen = option_ties.choose(p, tolerance)
        rows.append(
            {
                "pattern": pattern,
                "tie_set": "/".join(str(k) for k in tied),
                "cannot_tell": option_ties.cannot_tell(p, tolerance),
                "chosen": chosen,
                "chosen_ratio": m[chosen] / best,
                "tie_set_ratio": sum(m[k] for k in tied) / len(tied) / best,
            }
        )
    return pd.DataFrame(rows)


def choice_scores(
    cells: pd.DataFrame,
    predicted: str = "simulated",
    options: Sequence[int] | None = None,
    tolerance: float = option_ties.TIE_TOLERANCE,
) -> dict[str, float]:
    """The choosing scores over `options`: within-pattern mean rho; the regret ratio of the
    cheapest of each tie set (flat patterns included, so it equals the old regret_ratio at
    tolerance 0); the regret ratio of a random pick from the tie set (its mean); the regret
    ratio over the patterns the prediction can tell; patterns, ties and cannot-tell counts."""
    c = choices(cells, predicted, options, tolerance)
    told = c[~c["cannot_tell"]]
    return {
        "patterns": len(c),
        "within_rho": within_pattern_spearman(cells, predicted, options, tolerance),
        "regret_ratio": float(c["chosen_ratio"].mean()),
        "regret_ratio_tie_mean": float(c["tie_set_ratio"].mean()),
        "regret_ratio_told": float(told["chosen_ratio"].mean()) if len(told) else float("nan"),
        "ties": int((c["tie_set"].str.count("/") > 0).sum()),
        "cannot_tell": int(c["cannot_tell"].sum()),
    }


def choice_lines(cells: pd.DataFrame, predicted: str = "simulated") -> list[str]:
    """choice_scores over all options and over the forwarded ones, beside the pooled rho and
    always-8, as lines for a report."""
    lines = [f"pooled Spearman rho {spearman(cells, predicted):.3f} over {len(cells)} cells"]
    for label, opts in (("all options", None), ("forwarded 1/2/4/8", FORWARDED)):
        s = choice_scores(cells, predicted, opts)
        sub = cells if opts is None else cells[cells[OPTION].isin(opts)]
        always8 = (
            fixed_choice_regret(sub, [8]).get(8, float("nan"))
            if (sub[OPTION] == 8).any()
            else float("nan")
        )
        lines.append(
            f"{label}: within-pattern rho {s['within_rho']:.3f}, regret ratio "
            f"{s['regret_ratio']:.3f} (tie-set mean {s['regret_ratio_tie_mean']:.3f}; always 8: "
            f"{always8:.3f}), {s['patterns']} patterns, {s['ties']} with ties, "
            f"{s['cannot_tell']} cannot tell (flat within {option_ties.TIE_TOLERANCE:.0%})"
        )
    return lines


# The direct-access margin (issue 50): the margins tried, on the ratio of direct's predicted
# bandwidth to the best forwarded option's minus 1 (-TIE_TOLERANCE is the plain tie rule, inf
# never chooses direct), and the folds of the cross-validation that picks one on training data.
MARGINS = (-option_ties.TIE_TOLERANCE, 0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, float("inf"))
MARGIN_FOLDS = 6


def margin_regret(
    cells: pd.DataFrame, margin: float, predicted: str = "simulated"
) -> tuple[float, int]:
    """The regret ratio over all options of option_ties.choose_with_margin, and the number of
    patterns where the margin overruled direct (the plain tie rule would have chosen it)."""
    ratios, overruled = [], 0
    for _, p, m in _per_pattern(cells, predicted, None):
        chosen = option_ties.choose_with_margin(p, margin)
        overruled += chosen != 0 and option_ties.choose(p) == 0
        ratios.append(m[chosen] / max(m.values()))
    return float(sum(ratios) / len(ratios)), overruled


def _best_margin(cells: pd.DataFrame, margins: Sequence[float]) -> float:
    """The margin with the highest regret ratio on `cells`; ties to the smallest margin (the
    one that overrules the model least)."""
    scored = [(margin_regret(cells, m)[0], -i) for i, m in enumerate(margins)]
    return margins[-max(scored)[1]]


def fit_direct_margin(
    cells: pd.DataFrame,
    margins: Sequence[float] = MARGINS,
    folds: int = MARGIN_FOLDS,
    seed: int = 0,
) -> dict:
    """Picks the direct-access margin on training cells (simulated and measured): the best of
    `margins` on all of them, and a `folds`-fold cross-validation over patterns (a seeded
    shuffle) that picks one on the other folds and scores it on the held fold. The rule
    `helps` when its cross-validated regret ratio beats the plain tie rule's on the same
    patterns; the caller uses the margin only then."""
    patterns = sorted(cells["pattern"].unique())
    random.Random(seed).shuffle(patterns)
    fold_of = {p: i % folds for i, p in enumerate(patterns)}
    fold = cells["pattern"].map(fold_of)
    plain = -option_ties.TIE_TOLERANCE
    with_, without, picked = [], [], []
    for f in range(folds):
        inner, held = cells[fold != f], cells[fold == f]
        if held.empty:
            continue
        m = _best_margin(inner, margins)
        picked.append(m)
        n = held["pattern"].nunique()
        with_.append(margin_regret(held, m)[0] * n)
        without.append(margin_regret(held, plain)[0] * n)
    margin = _best_margin(cells, margins)
    cv_with, cv_without = sum(with_) / len(patterns), sum(without) / len(patterns)
    return {
        "margin": margin,
        "fold_margins": picked,
        "cv_with": cv_with,
        "cv_without": cv_without,
        "helps": cv_with > cv_without,
        "train_with": margin_regret(cells, margin)[0],
        "train_without": margin_regret(cells, plain)[0],
    }


def margin_scores(cells: pd.DataFrame, margin: float) -> dict:
    """The regret ratio over all options without and with the direct-access margin, the
    patterns, and how many choices of direct the margin overruled."""
    with_, overruled = margin_regret(cells, margin)
    return {
        "patterns": int(cells["pattern"].nunique()),
        "regret_without": margin_regret(cells, -option_ties.TIE_TOLERANCE)[0],
        "regret_with": with_,
        "overruled": overruled,
    }
