"""Measured access patterns as the table-driven evaluation uses them: each pattern's features
and its median bandwidth (MiB/s) per number of I/O nodes, the ground truth. Read through the
project's one loader of measured runs (analysis.reader) and its cells (sim_cells)."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from iorelay import sim_cells
from iorelay.analysis.reader import read_results


@dataclass(frozen=True)
class PatternFeatures:
    """What a predictor may know of a pattern before running it (FORGE's dimensions)."""

    layout: str  # "fpp" or "shared"
    spatiality: str  # "contiguous" or "strided"
    request_bytes: int
    ranks: int
    nodes: int

    @property
    def ranks_per_node(self) -> float:
        return self.ranks / self.nodes

    def vector(self) -> tuple[float, ...]:
        """Numbers for a distance: layout and spatiality as 0/1, the rest as log2."""
        return (
            float(self.layout == "shared"),
            float(self.spatiality == "strided"),
            math.log2(self.request_bytes),
            math.log2(self.ranks),
            math.log2(self.nodes),
            math.log2(self.ranks_per_node),
        )


@dataclass(frozen=True)
class Pattern:
    """A measured pattern: a readable label, its features and its median bandwidth (MiB/s) for
    every number of I/O nodes measured (0 = direct)."""

    label: str
    features: PatternFeatures
    bandwidth_mib_s: Mapping[int, float] = field(hash=False)


def patterns_from_runs(runs: pd.DataFrame) -> list[Pattern]:
    """One Pattern per measured pattern of runs (the internal schema), sorted by label; only
    patterns measured direct (0 I/O nodes) too, since a job may always run direct."""
    cells = sim_cells.measured_cells(runs)
    out = []
    for label, group in cells.groupby("pattern", sort=True):
        first = group.iloc[0]
        bandwidth = {
            int(k): float(m) for k, m in zip(group["ionodes"], group["median"], strict=True)
        }
        if 0 not in bandwidth:
            continue
        features = PatternFeatures(
            layout=str(first["layout"]),
            spatiality=str(first["spatiality"]),
            request_bytes=int(first["request_bytes"]),
            ranks=int(first["processes"]),
            nodes=int(first["nodes"]),
        )
        out.append(Pattern(str(label), features, bandwidth))
    return out


def read_patterns(paths: Iterable[str | os.PathLike[str]]) -> list[Pattern]:
    """The patterns of measured results files or directories (FORGE's CSV or iorelay's)."""
    return patterns_from_runs(read_results(paths))
