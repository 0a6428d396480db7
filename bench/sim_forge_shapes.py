#!/usr/bin/env python3
"""Per request size, the simulated curve over I/O-node counts against the measured one, on the
training patterns of bench/sim_forge.py's split (one layout, or all): the mean over patterns of
each option's log bandwidth against its pattern's mean, and the choosing scores
(sim_score.choice_scores), for a platform and variants of it (noise off). For finding which
parameter shapes a pattern's options, before a calibration.

    nice -n 10 .venv/bin/python bench/sim_forge_shapes.py PLATFORM [--seed 1] [--layout shared]
        [--variants '[{"storage.metanode_share": 0.5}, {"storage.metanode_share": 0.65}]']
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sim_forge import FORGE, forge_total

from iorelay import calibrate, sim_cells, sim_score
from iorelay.analysis.reader import read_results


def shape(cells: pd.DataFrame, column: str) -> pd.Series:
    logs = np.log(cells[column])
    return logs - logs.groupby(cells["pattern"]).transform("mean")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("platform", type=Path)
    p.add_argument("--measured", type=Path, default=FORGE)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--fraction", type=float, default=0.3)
    p.add_argument("--layout", default="shared", help="fpp, shared or all")
    p.add_argument("--variants", type=json.loads, default=[{}], help="JSON list of {name: value}")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    cells = sim_cells.measured_cells(read_results([args.measured]), forge_total(args.measured))
    train = cells[
        cells["pattern"].isin(calibrate.stratified_patterns(cells, args.fraction, args.seed))
    ]
    if args.layout != "all":
        train = train[train["layout"] == args.layout]
    train = train.reset_index(drop=True)
    base = json.loads(args.platform.read_text())
    base["storage"]["noise"] = 0
    for variant in args.variants:
        doc = copy.deepcopy(base)
        for name, value in variant.items():
            calibrate.set_value(doc, name, float(value))
        began = time.monotonic()
        scored = train.assign(
            simulated=sim_cells.simulate_cells(doc, train, 4, "fifo", 1, args.jobs)
        )
        a = sim_score.choice_scores(scored)
        b = sim_score.choice_scores(scored, options=sim_score.FORWARDED)
        err = calibrate.log_error(scored["simulated"].to_numpy(), scored["median"].to_numpy())
        print(
            f"{variant or 'as given'}: within-pattern rho {a['within_rho']:.3f} / "
            f"{b['within_rho']:.3f}, regret ratio {a['regret_ratio']:.3f} / "
            f"{b['regret_ratio']:.3f}, cannot tell {a['cannot_tell']} / {b['cannot_tell']}, "
            f"log error {err:.3f} ({time.monotonic() - began:.0f} s)"
        )
        scored = scored.assign(
            measured_shape=shape(scored, "median"), sim_shape=shape(scored, "simulated")
        )
        for (layout, size), g in scored.groupby(["layout", "request_bytes"]):
            m = g.groupby(sim_cells.OPTION)[["measured_shape", "sim_shape"]].mean().round(2)
            print(f"  {layout} {size >> 10} KiB, options {list(m.index)}: measured "
                  f"{list(m['measured_shape'])}, simulated {list(m['sim_shape'])}")  # fmt: skip
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
