"""Patterns as numbers for the advice sources: the stratum a pattern belongs to (what must match
exactly) and its numeric features (log2 of sizes and counts), with the documented distance."""

from __future__ import annotations

import numpy as np
import pandas as pd

# What must match exactly for one measured pattern to stand for another.
STRATUM = ("layout", "spatiality", "operation", "odirect")
# The numeric features, each log2 of a positive quantity.
NUMERIC = ("log2_request", "log2_ranks", "log2_nodes", "log2_ranks_per_node")


def strata(patterns: pd.DataFrame) -> pd.Series:
    """Each pattern's stratum as one string, e.g. "shared/strided/write/odirect"."""
    return patterns.apply(
        lambda r: (
            f"{r['layout']}/{r['spatiality']}/{r['operation']}"
            + ("/odirect" if bool(r["odirect"]) else "/buffered")
        ),
        axis=1,
    )


def numeric(patterns: pd.DataFrame) -> pd.DataFrame:
    """log2 of request size, ranks, nodes and ranks per node."""
    ranks = patterns["processes"].astype(float)
    nodes = patterns["nodes"].astype(float)
    return pd.DataFrame(
        {
            "log2_request": np.log2(patterns["request_bytes"].astype(float)),
            "log2_ranks": np.log2(ranks),
            "log2_nodes": np.log2(nodes),
            "log2_ranks_per_node": np.log2(ranks / nodes),
        },
        index=patterns.index,
    )


def model_matrix(patterns: pd.DataFrame) -> np.ndarray:
    """Every feature a learned model sees: layout, spatiality, operation and O_DIRECT as 0/1,
    then the NUMERIC ones."""
    flags = np.column_stack(
        [
            (patterns["layout"] == "shared").to_numpy(float),
            (patterns["spatiality"] == "strided").to_numpy(float),
            (patterns["operation"] == "read").to_numpy(float),
            patterns["odirect"].astype(bool).to_numpy(float),
        ]
    )
    return np.column_stack([flags, numeric(patterns).to_numpy(float)])


def distance(strata_a: np.ndarray, x_a: np.ndarray, stratum: str, x: np.ndarray) -> np.ndarray:
    """The reference distance from each pattern of a (its strata and NUMERIC features as
    arrays) to one pattern: infinite across strata, else the sum of absolute differences of the
    NUMERIC features (so one doubling of request size, ranks, nodes or ranks per node counts 1;
    equal weights)."""
    return np.where(strata_a == stratum, np.abs(x_a - x).sum(axis=1), np.inf)
