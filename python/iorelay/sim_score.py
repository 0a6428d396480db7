"""How well simulated cells predict measured ones: Spearman's rho over all cells, and the regret
ratio of choosing each pattern's option by the simulation (issue 15's FORGE criterion)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from scipy.stats import spearmanr

from iorelay.sim_cells import OPTION, best_option


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
