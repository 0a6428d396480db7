#!/usr/bin/env python3
"""Variants tried for the leave-one-pattern-out target of `iorelay advise` on FORGE MareNostrum 4
(issue 47, >= 0.975): each model of the learned source fitted alone, and means of several, in a
leave-one-out that is NOT nested (the variant is fixed beforehand, then scored on the same
folds that judge it): what the best choice made in hindsight could reach, not a judged figure.

    nice -n 10 .venv/bin/python bench/advise_variants.py [--with-gp | --pooled | --classify]
        [--out bench/results/advise-forge-variants.md]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.gaussian_process.kernels import ConstantKernel as Constant
from sklearn.linear_model import RidgeCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from iorelay.advise.models import CANDIDATES, Arrays, arrays
from iorelay.advise.scores import not_worse_tolerance
from iorelay.advise.table import pattern_table
from iorelay.analysis.reader import read_results

REPO = Path(__file__).resolve().parents[1]
FORGE = REPO.parent / "shared" / "data" / "forge-marenostrum4"
# request, nodes, ranks per node (log2): ranks is the sum of the last two.
GRID = (0, 2, 3)


class Columns:
    """A regressor fitted on some feature columns only."""

    def __init__(self, inner, cols):
        self.inner, self.cols = inner, list(cols)

    def fit(self, x, y):
        self.inner.fit(x[:, self.cols], y)
        return self

    def predict(self, x):
        return self.inner.predict(x[:, self.cols])


class HatRidge:
    """Piecewise-linear hat functions on each feature (knots: its training values; constant
    beyond them), with or without the products of pairs of features' hats, under a ridge whose
    strength RidgeCV picks by leave-one-out on the training data."""

    def __init__(self, pairs: bool):
        self.pairs = pairs

    def _basis(self, x):
        blocks = []
        for c, k in zip(GRID, self.knots, strict=True):
            v = np.clip(x[:, c], k[0], k[-1])
            b = np.zeros((len(x), len(k)))
            if len(k) == 1:
                b[:, 0] = 1.0
            else:
                j = np.clip(np.searchsorted(k, v, side="right") - 1, 0, len(k) - 2)
                w = (v - k[j]) / (k[j + 1] - k[j])
                b[np.arange(len(x)), j] = 1 - w
                b[np.arange(len(x)), j + 1] = w
            blocks.append(b)
        if self.pairs:
            for a, b in itertools.combinations(list(blocks), 2):
                blocks.append(np.einsum("ni,nj->nij", a, b).reshape(len(x), -1))
        return np.hstack(blocks)

    def fit(self, x, y):
        self.knots = [np.unique(x[:, c]) for c in GRID]
        self.model = RidgeCV(alphas=np.logspace(-3, 3, 13)).fit(self._basis(x), y)
        return self

    def predict(self, x):
        return self.model.predict(self._basis(x))


EXTRA = {
    "extra trees, 100, 2 per leaf": lambda: ExtraTreesRegressor(
        100, min_samples_leaf=2, random_state=0, n_jobs=1
    ),
    "hat-function ridge, main effects": lambda: HatRidge(pairs=False),
    "hat-function ridge, with pairs": lambda: HatRidge(pairs=True),
}
GP = {
    "Gaussian process, ARD RBF + white noise": lambda: Columns(
        GaussianProcessRegressor(
            Constant(1.0) * RBF([1.0] * 3, (1e-2, 1e3)) + WhiteKernel(0.01, (1e-5, 1.0)),
            normalize_y=True,
            random_state=0,
        ),
        GRID,
    )
}


def loo_log_bw(make, data: Arrays) -> np.ndarray:
    """Leave-one-out predicted log bandwidth, per stratum, of the profile + level model pair
    (as models.fit_learned fits one candidate)."""
    out = np.zeros_like(data.log_bw)
    profile, level = data.profile, data.log_bw.mean(axis=1)
    for s in np.unique(data.strata):
        rows = np.flatnonzero(data.strata == s)
        for i in rows:
            train = rows[rows != i]
            x, xi = data.x[train], data.x[i : i + 1]
            p = np.asarray(make().fit(x, profile[train]).predict(xi)).reshape(-1)
            m = float(np.asarray(make().fit(x, level[train]).predict(xi)).reshape(-1)[0])
            out[i] = p + m
    return out


def loo_log_bw_pooled(make, data: Arrays) -> np.ndarray:
    """Leave-one-out predicted log bandwidth of one profile + level model pair fitted on every
    stratum at once, the stratum given as indicator columns (x 10, beyond any log2 feature's
    spread, so a neighbour rule stays within its stratum): more patterns per fit, and trees can
    share a split on request size or nodes across strata."""
    strata = np.unique(data.strata)
    x = np.hstack([data.x, 10.0 * np.stack([data.strata == s for s in strata], axis=1)])
    out = np.zeros_like(data.log_bw)
    profile, level = data.profile, data.log_bw.mean(axis=1)
    for i in range(len(x)):
        train = np.arange(len(x)) != i
        p = np.asarray(make().fit(x[train], profile[train]).predict(x[i : i + 1])).reshape(-1)
        m = float(np.asarray(make().fit(x[train], level[train]).predict(x[i : i + 1]))[0])
        out[i] = p + m
    return out


def recommended_share(log_pred: np.ndarray, log_bw: np.ndarray, band: float) -> float:
    """Mean measured share of the best of the cheapest option within `band` of the predicted
    best (columns by I/O nodes ascending), the figure evaluate.recommended_regret computes."""
    within = log_pred >= log_pred.max(axis=1, keepdims=True) - band
    picked = np.argmax(within, axis=1)
    bw = np.exp(log_bw)
    return float(np.mean(bw[np.arange(len(bw)), picked] / bw.max(axis=1)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--with-gp", action="store_true", help="also the Gaussian process (slow)")
    parser.add_argument(
        "--pooled",
        action="store_true",
        help="only models.CANDIDATES fitted on all strata at once (loo_log_bw_pooled)",
    )
    parser.add_argument(
        "--classify",
        action="store_true",
        help="only classifiers of the option to take (classified)",
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # the GP's and ridge's convergence notes
    table = pattern_table(read_results([FORGE]))
    data = arrays(table)
    band = not_worse_tolerance(table)
    if args.classify:
        return classified(data, band, args.out or REPO / "bench/results/advise-forge-classify.md")
    if args.pooled:
        return pooled(data, band, args.out or REPO / "bench/results/advise-forge-pooled.md")
    args.out = args.out or REPO / "bench/results/advise-forge-variants.md"
    makers = {**CANDIDATES, **EXTRA, **(GP if args.with_gp else {})}
    log = [
        "# Variants for the leave-one-out target of iorelay advise (bench/advise_variants.py)\n",
        "Command: `.venv/bin/python bench/advise_variants.py"
        + (" --with-gp" if args.with_gp else "")
        + "`\n",
        "Not nested: each variant fixed beforehand and scored on the 189 leave-one-out folds.",
        f"Recommended: cheapest within the not-worse band {band:.4f}; predicted best: argmax.\n",
        "| variant | recommended | predicted best | seconds |\n|---|---|---|---|",
    ]
    preds = score_each(makers, loo_log_bw, data, band, log)
    base = list(CANDIDATES)
    means = {
        "mean of models.CANDIDATES (the ensemble source)": base,
        "... and extra trees": [*base, "extra trees, 100, 2 per leaf"],
        "... and hat ridge (main effects)": [*base, "hat-function ridge, main effects"],
        "... and both": [*base, "extra trees, 100, 2 per leaf", "hat-function ridge, main effects"],
        "random forest and extra trees": [
            "random forest, 50 trees",
            "extra trees, 100, 2 per leaf",
        ],
    }
    if args.with_gp:
        means["... and the Gaussian process"] = [*base, *GP]
    for name, members in means.items():
        mean = np.mean([preds[m] for m in members], axis=0)
        log.append(
            f"| {name} | {recommended_share(mean, data.log_bw, band):.4f} | "
            f"{recommended_share(mean, data.log_bw, 0.0):.4f} | |"
        )
    median = np.median([preds[m] for m in base], axis=0)
    log.append(
        f"| median of models.CANDIDATES | {recommended_share(median, data.log_bw, band):.4f} | "
        f"{recommended_share(median, data.log_bw, 0.0):.4f} | |"
    )
    text = "\n".join(log)
    print(text)
    args.out.write_text(text + "\n")
    return 0


CLASSIFIERS = {
    "tree, 3 per leaf": lambda: DecisionTreeClassifier(min_samples_leaf=3, random_state=0),
    "tree, 5 per leaf": lambda: DecisionTreeClassifier(min_samples_leaf=5, random_state=0),
    "1-NN (L1)": lambda: KNeighborsClassifier(1, p=1),
    "random forest, 100 trees": lambda: RandomForestClassifier(100, random_state=0, n_jobs=1),
    "extra trees, 100, 2 per leaf": lambda: ExtraTreesClassifier(
        100, min_samples_leaf=2, random_state=0, n_jobs=1
    ),
}


def classified(data: Arrays, band: float, out: Path) -> int:
    """The option predicted directly, per stratum, by a classifier of the measured label: the
    cheapest option within the not-worse band of the best (what the recommendation aims at), or
    the best itself; leave-one-out, not nested."""
    bw = np.exp(data.log_bw)
    within = data.log_bw >= data.log_bw.max(axis=1, keepdims=True) - band
    labels = {"cheapest within the band": np.argmax(within, axis=1), "best": bw.argmax(axis=1)}
    log = [
        "# Classifiers for the leave-one-out target of iorelay advise "
        "(bench/advise_variants.py --classify)\n",
        "Command: `.venv/bin/python bench/advise_variants.py --classify`\n",
        "A classifier per stratum learns the option to take (its label measured on the training",
        "patterns) instead of the bandwidths; not nested (each fixed beforehand, scored on the",
        f"189 leave-one-out folds). Band {band:.4f}. Score: the measured median of the option",
        "picked / the best measured median, the mean over patterns.\n",
        "| label | classifier | share of the best | seconds |\n|---|---|---|---|",
    ]
    for label_name, label in labels.items():
        for name, make in CLASSIFIERS.items():
            start = time.monotonic()
            pick = np.zeros(len(bw), int)
            for s in np.unique(data.strata):
                rows = np.flatnonzero(data.strata == s)
                for i in rows:
                    train = rows[rows != i]
                    if len(set(label[train])) == 1:
                        pick[i] = label[train][0]
                        continue
                    fitted = make().fit(data.x[train], label[train])
                    pick[i] = fitted.predict(data.x[i : i + 1])[0]
            share = float(np.mean(bw[np.arange(len(bw)), pick] / bw.max(axis=1)))
            log.append(f"| {label_name} | {name} | {share:.4f} | {time.monotonic() - start:.0f} |")
            print(log[-1], flush=True)
    text = "\n".join(log)
    out.write_text(text + "\n")
    print(text)
    return 0


def score_each(makers, predict, data: Arrays, band: float, log: list[str]) -> dict:
    """Leave-one-out predictions of each variant by `predict`, a row each in log (printed as it
    comes: the slow variants take minutes)."""
    preds = {}
    for name, make in makers.items():
        start = time.monotonic()
        preds[name] = predict(make, data)
        log.append(
            f"| {name} | {recommended_share(preds[name], data.log_bw, band):.4f} | "
            f"{recommended_share(preds[name], data.log_bw, 0.0):.4f} | "
            f"{time.monotonic() - start:.0f} |"
        )
        print(log[-1], flush=True)
    return preds


def pooled(data: Arrays, band: float, out: Path) -> int:
    log = [
        "# Pooled variants for the leave-one-out target of iorelay advise "
        "(bench/advise_variants.py --pooled)\n",
        "Command: `.venv/bin/python bench/advise_variants.py --pooled`\n",
        "Each of models.CANDIDATES fitted on all of FORGE's strata at once, the stratum as",
        "indicator columns; not nested (each variant fixed beforehand, scored on the 189",
        f"leave-one-out folds). Recommended: cheapest within the not-worse band {band:.4f}.\n",
        "| variant (pooled) | recommended | predicted best | seconds |\n|---|---|---|---|",
    ]
    preds = score_each(CANDIDATES, loo_log_bw_pooled, data, band, log)
    mean = np.mean(list(preds.values()), axis=0)
    log.append(
        f"| mean of the pooled candidates | {recommended_share(mean, data.log_bw, band):.4f} | "
        f"{recommended_share(mean, data.log_bw, 0.0):.4f} | |"
    )
    text = "\n".join(log)
    print(text)
    out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
