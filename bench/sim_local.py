#!/usr/bin/env python3
"""This machine, or the testbed on it, as a simulated platform (issue 15, criterion 6): a real
`iorelay explore` sweep A calibrates a copy of platforms/MACHINE.json (`iorelay calibrate`),
which then predicts a real sweep B of other patterns; the prediction is scored by Spearman's rho
over B's cells and the regret ratio of its I/O-node choice per pattern, next to the platform as
shipped.

    .venv/bin/python bench/sim_local.py [--machine local|testbed] [--max-evaluations 100]
        [--jobs 2] [--parameters NAME,...] [--out-dir bench/results/sim-MACHINE]
    .venv/bin/python bench/sim_local.py --no-real   # calibrate and predict from --out-dir only
    .venv/bin/python bench/sim_local.py --cpu --start FIT --measured DIR --out-dir OUT
        # the machine's cores modelled (--cpu), the fit starting from FIT (e.g. the
        # MACHINE-calibrated.json of a run without --cpu), the sweeps of DIR/measured-{a,b}

local: bench/sweeps/local-a.toml (4 ranks; 8K, 64K, 512K requests) and local-b.toml (2 and 8
ranks; 16K, 128K, 1M), both O_DIRECT, file per process / shared contiguous / shared strided,
write then read of 128 MiB, 0, 1 and 2 I/O nodes, fifo, 5 repetitions, run by
`python -m iorelay.explore SWEEP --out OUT/measured-{a,b}` (resumable). testbed: a testbed
that is up (`iorelay testbed up`), bench/sweeps/testbed-a.toml (16 ranks on 2 compute hosts;
8K, 1M) and testbed-b.toml (8 ranks on 2 hosts; 64K, 256K), shared strided and contiguous,
16 MiB written then read, aioli, 3 repetitions, run by `iorelay.explore --testbed`. explore
records each forwarded run's daemon counters and fails a run they did not carry; this script
checks them again. Every cell is simulated whole (no request cap), noise off. Writes to
--out-dir: measured-{a,b}/results.csv and measure-log.json (load and wall time of the real
sweeps; both under --measured when given), MACHINE-calibrated.json, cells-a.csv (fit), cells-b.csv
(prediction) and summary.md (also on stdout).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sim_forge import predict  # noise-free cells

from iorelay import calibrate, explore, paths, sim_cells, sim_score
from iorelay.analysis.reader import read_results
from iorelay.markdown import frame_table as markdown

REPO = Path(__file__).resolve().parents[1]

OPTIONS = (0, 1, 2)
# Per machine: the free parameters by default, and what the summary calls it. The testbed's
# compute and I/O-node link caps are what tc enforces, so they stay fixed; its storage "NIC"
# stands for GlusterFS's server side as a whole (FUSE, the brick, the capped link).
MACHINES = {
    "local": {
        "parameters": ("ionode.request_overhead", "ionode.nic", "storage.nic",
                       "storage.device.seek", "storage.device.bw"),
        "title": "This machine",
    },
    "testbed": {
        "parameters": ("ionode.request_overhead", "storage.nic", "storage.device.seek",
                       "storage.device.bw", "storage.device.write"),
        "title": "The testbed (`iorelay testbed up`)",
    },
}  # fmt: skip
# --cpu: the platform's cpu section (docs/simulator.md, platform keys), starting from what was
# measured on this machine: forward_request and ionode_request are the client's and the daemon's
# CPU time per 4 KiB request over shared memory with the null backend (README,
# `bench/shm_rate.py`: 5.6 and 5.4 us); direct_call, and the I/O node's call, the whole machine's
# busy time per 8 KiB O_DIRECT write of fio, direct (bench/results/fio-strided-32-cpu.md: 14.5
# us, fio's own share included); copy, numpy's copyto of 128 KiB to 1 MiB buffers here (13-16
# GB/s). The calls' and the client's costs are fitted, and so are the storage's parallelism and
# its per-file write lock, which decide whether the cores or the disk bind.
CPU = {"cores": os.cpu_count() or 2, "direct_call": "14.5us", "forward_request": "5.6us",
       "copy": "14GBps", "ionode_request": "5.4us", "ionode_call": "14.5us"}  # fmt: skip
CPU_PARAMETERS = ("storage.channels", "storage.file_writes", "cpu.direct_call",
                  "cpu.forward_request", "cpu.ionode_call")  # fmt: skip
SWEEPS: dict[str, Path] = {}
PLATFORM = Path()


def choose_machine(machine: str) -> None:
    """Points SWEEPS and PLATFORM at `machine`'s sweeps and platform file."""
    global PLATFORM
    SWEEPS.update({n: REPO / f"bench/sweeps/{machine}-{n}.toml" for n in ("a", "b")})
    PLATFORM = REPO / f"platforms/{machine}.json"


def sweep_facts(name: str) -> dict:
    """The total bytes and scheduler of a sweep (one each) and its number of runs."""
    runs = explore.load_sweep(SWEEPS[name]).runs
    totals, scheds = {r["total_bytes"] for r in runs}, {r["scheduler"] for r in runs}
    if len(totals) != 1 or len(scheds) != 1:
        raise SystemExit(f"{SWEEPS[name]}: one total and one scheduler expected")
    return {"total_bytes": totals.pop(), "scheduler": scheds.pop(), "runs": len(runs)}


def results_csv(args: argparse.Namespace, name: str) -> Path:
    return args.measured / f"measured-{name}" / "results.csv"


def run_sweep(args: argparse.Namespace, name: str) -> None:
    """The real sweep through the explore CLI; its load and wall time go to measure-log.json
    when it ran anything (a finished sweep runs nothing)."""
    csv = results_csv(args, name)
    before = len(pd.read_csv(csv)) if csv.exists() else 0
    load, start = os.getloadavg(), time.monotonic()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    sweep, out = (os.path.relpath(f, REPO) for f in (SWEEPS[name], csv.parent))
    cmd = [sys.executable, "-m", "iorelay.explore", sweep, "--out", out]
    if args.machine == "testbed":
        cmd.append("--testbed")
    code = subprocess.run(cmd, cwd=REPO, check=False).returncode
    shutil.rmtree(csv.parent / "parquet", ignore_errors=True)  # a copy of results.csv
    if code != 0:
        raise SystemExit(f"sweep {name} failed (exit {code}); run again to retry the failed runs")
    if len(pd.read_csv(csv)) == before:
        return
    log_path = args.measured / "measure-log.json"
    log = json.loads(log_path.read_text()) if log_path.exists() else {}
    entry = {"command": " ".join([".venv/bin/python", *cmd[1:]]), "started": started,
             "wall_s": round(time.monotonic() - start, 1),
             "rows_added": len(pd.read_csv(csv)) - before,
             "load_start": [round(v, 2) for v in load],
             "load_end": [round(v, 2) for v in os.getloadavg()]}  # fmt: skip
    if name in log:  # a later invocation (failed runs retried): the first one stays the record
        log[name].setdefault("retries", []).append(entry)
    else:
        log[name] = entry
    log_path.write_text(json.dumps(log, indent=1) + "\n")


def check_measured(name: str, rows: pd.DataFrame, facts: dict) -> list[str]:
    """Every run there, verified, and every forwarded byte carried by the daemons."""
    if rows["run_key"].nunique() != facts["runs"]:
        raise SystemExit(f"sweep {name}: {rows['run_key'].nunique()} of {facts['runs']} runs")
    if (rows["errors"] != 0).any() or (rows["wrong_words"] != 0).any():
        raise SystemExit(f"sweep {name}: runs with errors or wrong words")
    fwd = rows[rows["ionodes"] > 0]
    carried = np.where(fwd["operation"] == "write", fwd["daemon_bytes_written"],
                       fwd["daemon_bytes_read"])  # fmt: skip
    if not (carried >= fwd["bytes"]).all():
        raise SystemExit(f"sweep {name}: forwarded rows the daemons did not carry")
    per_dispatch = fwd.groupby("ionodes")["requests_per_dispatch"].median()
    span = pd.to_datetime(rows["finished_at"])
    return [
        f"- sweep {name}: {rows['run_key'].nunique()} runs, {len(rows)} rows, no error, no wrong "
        f"word; all {len(fwd)} forwarded rows' bytes counted by the daemons (bytes written or "
        f"read >= the phase's bytes); median requests per dispatch "
        + ", ".join(f"{k} I/O nodes: {v:.2f}" for k, v in per_dispatch.items())
        + f"; runs' wall time {rows.drop_duplicates('run_key')['run_seconds'].sum() / 60:.1f} min "
        f"summed, finished between {span.min():%H:%M:%S} and {span.max():%H:%M:%S}"
    ]


def with_predictions(args: argparse.Namespace, cells: pd.DataFrame, fitted: Path) -> pd.DataFrame:
    """Cells with `simulated` (calibrated) and `uncalibrated` (the shipped platform) columns."""
    out = predict(fitted, cells, args)
    out["uncalibrated"] = predict(PLATFORM, cells, args)["simulated"]
    return out


def scores_table(cells: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name, column in (("calibrated on A", "simulated"),
                         (f"{PLATFORM.name} as shipped", "uncalibrated")):  # fmt: skip
        log_ratio = np.log(cells[column] / cells["median"])
        rows.append({"platform": name, "cells": len(cells), "patterns": cells["pattern"].nunique(),
                     "Spearman rho": sim_score.spearman(cells, column),
                     "regret ratio": sim_score.regret_ratio(cells, column),
                     "median sim/measured": float(np.exp(np.median(log_ratio))),
                     "mean squared log error": float(np.mean(log_ratio**2))})  # fmt: skip
    return pd.DataFrame(rows)


def by_group(cells: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Calibrated simulated / measured (geometric mean and range) and rho within each group."""
    rows = []
    for key, g in cells.groupby(keys):
        ratio = g["simulated"] / g["median"]
        picks, best = sim_cells.best_option(g, "simulated"), sim_cells.best_option(g, "median")
        rows.append({**dict(zip(keys, key, strict=True)), "cells": len(g),
                     "sim/measured": float(np.exp(np.log(ratio).mean())),
                     "min": float(ratio.min()), "max": float(ratio.max()),
                     "rho": sim_score.spearman(g) if len(g) > 2 else float("nan"),
                     "same best option": f"{int((picks == best).sum())}/{len(best)}"
                     if g["ionodes"].nunique() > 1 else "-"})  # fmt: skip
    return pd.DataFrame(rows)


def forwarding_lines(name: str, cells: pd.DataFrame) -> list[str]:
    """What forwarding costs against direct access of the same pattern, measured and simulated:
    the geometric mean of forwarded / direct over the forwarded cells, and Spearman's rho of
    that ratio (does the model know which patterns forwarding hurts most?)."""
    direct = cells[cells["ionodes"] == 0].set_index("pattern")
    fwd = cells[cells["ionodes"] > 0]
    rel = {c: fwd[c].to_numpy() / direct.loc[fwd["pattern"], c].to_numpy()
           for c in ("median", "simulated", "uncalibrated")}  # fmt: skip
    gm = {c: float(np.exp(np.log(v).mean())) for c, v in rel.items()}
    rho = {c: float(pd.Series(rel[c]).corr(pd.Series(rel["median"]), method="spearman"))
           for c in ("simulated", "uncalibrated")}  # fmt: skip
    margin = {c: direct[c] / fwd.groupby("pattern")[c].max().loc[direct.index]
              for c in ("median", "simulated")}  # fmt: skip
    close = int((abs(margin["simulated"] - 1) < 0.01).sum())
    return [
        f"Sweep {name}, forwarded / direct bandwidth of the same pattern (geometric mean over "
        f"{len(fwd)} forwarded cells): measured {gm['median']:.2f}, calibrated "
        f"{gm['simulated']:.2f}, uncalibrated {gm['uncalibrated']:.2f}; Spearman rho of this "
        f"ratio against the measured one: calibrated {rho['simulated']:.3f}, uncalibrated "
        f"{rho['uncalibrated']:.3f}. Direct / best forwarded option per pattern: measured median "
        f"{margin['median'].median():.2f}, calibrated {margin['simulated'].median():.3f} "
        f"(within 1% in {close} of {len(direct)} patterns: there the calibrated model picks "
        "direct access by a hair)."
    ]


def cell_table(cells: pd.DataFrame) -> pd.DataFrame:
    c = cells.sort_values(["layout", "spatiality", "operation", "processes", "request_bytes",
                           "ionodes"])  # fmt: skip
    return pd.DataFrame({
        "pattern": c["pattern"], "I/O nodes": c["ionodes"], "runs": c["n"],
        "measured MiB/s": c["median"].map("{:.1f}".format), "cv": c["cv"].map("{:.2f}".format),
        "calibrated MiB/s": c["simulated"].map("{:.1f}".format),
        "sim/measured": (c["simulated"] / c["median"]).map("{:.2f}".format),
        "uncalibrated MiB/s": c["uncalibrated"].map("{:.2f}".format),
    })  # fmt: skip


def fit_lines(doc: dict) -> list[str]:
    cal = doc["calibration"]
    start = Path(cal.get("from_platform", PLATFORM))
    start = start if start.exists() else PLATFORM
    source = json.loads(start.read_text())
    rows = [{"parameter": n, start.name: calibrate.doc_value(source, n), "fitted": v}
            for n, v in cal["parameters"].items()]  # fmt: skip
    return [
        f"Fit on sweep A ({cal['cells']} cells, {len(cal['patterns'])} patterns, "
        f"{cal['evaluations']} evaluations): mean squared log error {cal['error_before']:.3f} "
        f"({start.name}) -> {cal['error_after']:.3f}; storage.noise {doc['storage']['noise']} "
        f"(measured median cv {cal['noise']['measured_median_cv']}; off for every prediction "
        "below).",
        "",
        markdown(pd.DataFrame(rows)),
    ]


def summary(args: argparse.Namespace, a: pd.DataFrame, b: pd.DataFrame, facts: dict) -> str:
    doc = json.loads((args.out_dir / f"{args.machine}-calibrated.json").read_text())
    log_path = args.measured / "measure-log.json"
    log = json.loads(log_path.read_text()) if log_path.exists() else {}
    b_scores = scores_table(b)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True, check=False).stdout.strip()  # fmt: skip
    built_s = paths.find("iorelay-sim").stat().st_mtime
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(built_s))
    met = b_scores.loc[0, "Spearman rho"] >= 0.8
    lines = [
        f"## {MACHINES[args.machine]['title']}, calibrated on sweep A, predicting sweep B "
        f"({time.strftime('%Y-%m-%d')})",
        "",
        f"Host {os.uname().nodename}, {os.cpu_count()} cores, commit {commit}, iorelay-sim "
        f"built {built}. This summary: "
        f"`{' '.join(['.venv/bin/python bench/sim_local.py', *sys.argv[1:]])}`; free parameters "
        f"{', '.join(args.parameters)}; every cell simulated whole (--max-requests 0), "
        f"{args.scheduler}, noise off.",
        "",
        f"Real sweeps (`iorelay explore`: {SWEEPS['a'].name}, {SWEEPS['b'].name}; cells = median "
        "of the repetitions):",
        "",
    ]
    for name in ("a", "b"):
        m = log.get(name, {})
        lines.append(
            f"- `{m.get('command', '')}`: started {m.get('started', '?')}, wall "
            f"{m.get('wall_s', float('nan')) / 60:.1f} min, load average (1/5/15 min) "
            f"{m.get('load_start')} at the start, {m.get('load_end')} at the end"
        )
    lines += facts["checks"]
    lines += ["", f"Calibration and prediction: {facts['model_s'] / 60:.1f} min wall here.", ""]
    lines += fit_lines(doc)
    lines += ["", "Sweep A (in-sample):", "", markdown(scores_table(a))]
    lines += ["", "Sweep A by ionodes, operation (calibrated):", "",
              markdown(by_group(a, ["ionodes", "operation"]))]  # fmt: skip
    lines += ["", "**Sweep B (other patterns, predicted):**", "", markdown(b_scores), ""]
    fixed = sim_score.fixed_choice_regret(b, OPTIONS)
    verdict = "met" if met else "not met"
    lines.append("Regret ratio of always choosing one option over sweep B's patterns: "
                 + ", ".join(f"{k} I/O nodes {v:.3f}" for k, v in fixed.items())
                 + f". Goal rho >= 0.8 over sweep B: **{verdict}**.")  # fmt: skip
    lines += ["", *forwarding_lines("A", a), "", *forwarding_lines("B", b)]
    for keys in (["ionodes", "operation"], ["layout", "spatiality", "operation"],
                 ["processes", "request_bytes"]):  # fmt: skip
        table = markdown(by_group(b, keys))
        lines += ["", f"Sweep B by {', '.join(keys)} (calibrated):", "", table]
    lines += ["", "Sweep B, every cell:", "", markdown(cell_table(b))]
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--machine", choices=sorted(MACHINES), default="local")
    p.add_argument("--parameters", type=lambda s: s.split(","), default=None)
    p.add_argument("--max-evaluations", type=int, default=100)
    p.add_argument("--jobs", type=int, default=sim_cells.default_jobs())
    p.add_argument("--no-real", action="store_true", help="use the results --out-dir holds")
    p.add_argument("--out-dir", type=Path, default=None, help="bench/results/sim-MACHINE")
    p.add_argument(
        "--cpu",
        action="store_true",
        help="model the machine's shared cores with measured costs; fit the storage's "
        "channels and per-file write lock too",
    )
    p.add_argument(
        "--measured",
        type=Path,
        default=None,
        help="where the real sweeps' results are (and go): DIR/measured-{a,b} (default --out-dir)",
    )
    p.add_argument(
        "--start",
        type=Path,
        default=None,
        help="fit from this platform (e.g. an earlier fit on sweep A), not the shipped one",
    )
    args = p.parse_args()
    choose_machine(args.machine)
    args.parameters = args.parameters or [
        *MACHINES[args.machine]["parameters"],
        *(CPU_PARAMETERS if args.cpu else ()),
    ]
    args.out_dir = args.out_dir or REPO / f"bench/results/sim-{args.machine}"
    args.measured = args.measured or args.out_dir
    args.requests_per_rank = 0  # whole patterns: 128 MiB in requests of 8 KiB and more is cheap
    args.out_dir.mkdir(parents=True, exist_ok=True)
    facts = {n: sweep_facts(n) for n in SWEEPS}
    args.scheduler = facts["a"]["scheduler"]
    if not args.no_real:
        for name in SWEEPS:
            run_sweep(args, name)
    checks = []
    for name in SWEEPS:
        checks += check_measured(name, pd.read_csv(results_csv(args, name)), facts[name])
    start = time.monotonic()
    fitted = args.out_dir / f"{args.machine}-calibrated.json"
    start_platform = args.start or PLATFORM
    if args.cpu:
        start_platform = args.out_dir / f"{args.machine}-cpu-start.json"
        doc = json.loads((args.start or PLATFORM).read_text())
        doc.pop("calibration", None)
        doc["storage"].pop("noise", None)  # fitted again at the end, as from the shipped file
        doc["cpu"] = CPU
        start_platform.write_text(json.dumps(doc, indent=1) + "\n")
    calibrate.calibrate(
        [str(results_csv(args, "a"))], str(start_platform), fitted, names=args.parameters,
        requests_per_rank=0, total_bytes=facts["a"]["total_bytes"], scheduler=args.scheduler,
        max_evaluations=args.max_evaluations, jobs=args.jobs,
    )  # fmt: skip
    cells = {}
    for name in SWEEPS:
        measured = read_results([results_csv(args, name)])
        cells[name] = with_predictions(
            args, sim_cells.measured_cells(measured, facts[name]["total_bytes"]), fitted
        )
        cells[name].to_csv(args.out_dir / f"cells-{name}.csv", index=False)
    info = {"checks": checks, "model_s": time.monotonic() - start}
    text = summary(args, cells["a"], cells["b"], info)
    (args.out_dir / "summary.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
