"""Made-up measured results for the tests of `iorelay advise` inputs and `iorelay run --ionodes
auto`: every layout, spatiality and operation of buffered I/O, over wide ranges of request size and
ranks, with a known best number of I/O nodes per stratum, so a test knows the advice to expect."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OPTIONS = (0, 1, 2, 4)
# The measured profile (bandwidth / direct) per (layout, spatiality): shared strided gains most
# at 2 I/O nodes, shared contiguous at 4, file-per-process contiguous loses with any.
PROFILES = {
    ("shared", "strided"): {0: 1.0, 1: 1.6, 2: 2.2, 4: 1.5},
    ("shared", "contiguous"): {0: 1.0, 1: 1.2, 2: 1.5, 4: 2.0},
    ("fpp", "contiguous"): {0: 1.0, 1: 0.6, 2: 0.7, 4: 0.8},
    ("fpp", "strided"): {0: 1.0, 1: 1.3, 2: 1.1, 4: 0.9},
}
BEST = {key: max(p, key=p.get) for key, p in PROFILES.items()}
REQUESTS = (1, 1 << 16, 1 << 32)  # 1 B to 4 GiB
SHAPES = ((1, 1), (64, 16384))  # (nodes, ranks)


def write_results(folder: Path, seed: int = 3) -> Path:
    """runs.csv in `folder` (3 repetitions per cell, 3% noise); returns the folder."""
    rng = np.random.default_rng(seed)
    rows = []
    for (layout, spatiality), profile in PROFILES.items():
        for operation in ("write", "read"):
            for odirect in (False,):
                for request in REQUESTS:
                    for nodes, ranks in SHAPES:
                        base = 50.0 * (request / 65536) ** 0.2 * ranks**0.1
                        for k in OPTIONS:
                            for rep in range(3):
                                rows.append(
                                    {
                                        "layout": layout,
                                        "spatiality": spatiality,
                                        "nodes": nodes,
                                        "processes": ranks,
                                        "request_bytes": request,
                                        "operation": operation,
                                        "odirect": odirect,
                                        "ionodes": k,
                                        "repetition": rep,
                                        "bandwidth_mib_s": base
                                        * profile[k]
                                        * float(rng.lognormal(0, 0.03)),
                                    }
                                )
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "runs.csv", index=False)
    return folder
