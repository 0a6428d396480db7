#!/usr/bin/env python3
"""The choice objective (calibrate_global) of a calibrated platform with other values of one
count, on the patterns its global search simulated (its calibration record's search_patterns):
what the search's count steps see, for a platform fitted before they existed.

    nice -n 10 .venv/bin/python bench/sim_count_steps.py PLATFORM.json [--count ionode.slots]
        [--values 32,16,8] [--measured DIR] [--jobs 2]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

from sim_forge import FORGE, forge_total

from iorelay import calibrate, calibrate_global, sim_cells, sim_score
from iorelay.analysis.reader import read_results


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("platform", type=Path)
    p.add_argument("--count", default="ionode.slots")
    p.add_argument("--values", type=lambda s: [int(v) for v in s.split(",")], default=[32, 16, 8])
    p.add_argument("--measured", type=Path, default=FORGE)
    p.add_argument("--jobs", type=int, default=sim_cells.default_jobs())
    args = p.parse_args()
    doc = json.loads(args.platform.read_text())
    record = doc.pop("calibration")
    doc["storage"]["noise"] = 0  # as the search simulated
    cells = sim_cells.measured_cells(read_results([args.measured]), forge_total(args.measured))
    used = cells[cells["pattern"].isin(record["search_patterns"])]
    used = used[used["ionodes"].isin(record["options"])].reset_index(drop=True)
    rpr = record["requests_per_rank"]
    for value in args.values:
        variant = copy.deepcopy(doc)
        calibrate.set_value(variant, args.count, value)
        simulated = sim_cells.simulate_cells(variant, used, rpr, record["scheduler"], 1, args.jobs)
        scored = used.assign(simulated=simulated)
        a = sim_score.choice_scores(scored)
        f = sim_score.choice_scores(scored, options=sim_score.FORWARDED)
        print(
            f"{args.count} {value}: choice objective "
            f"{calibrate_global.choice_objective(simulated, used):.4f}, within-pattern rho "
            f"{a['within_rho']:.3f} / {f['within_rho']:.3f}, regret ratio {a['regret_ratio']:.3f}"
            f" / {f['regret_ratio']:.3f} (all / 1-2-4-8), {len(used)} cells",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
