"""`iorelay demo --testbed`: the exploration on the testbed, and what it says.

Holds the testbed (testbed/hold.py), bringing one up (2 compute, 2 I/O-node, 1 storage host)
unless one is up, runs the embedded sweep_testbed.toml with `iorelay explore --testbed`
(resumable, in OUT), writes the `iorelay analyze` report, prints per pattern the median
bandwidth of direct access and of 1 and 2 I/O nodes with which daemons carried the data (from
their counters), and lets go of the testbed: the last user of a testbed brought up so takes it
down.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from iorelay.explore_run import SweepStopped
from iorelay.testbed import cluster
from iorelay.testbed.hold import Hold, TestbedGone, describe
from iorelay.testbed.plan import TestbedConfig
from iorelay.testbed.system import TestbedError

DEMO_CONFIG = TestbedConfig(compute=2, ionode=2, storage=1)
PATTERN = ["spatiality", "request_bytes", "operation"]


class DemoTestbedError(RuntimeError):
    """The testbed demo cannot run here, or a step failed."""


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10} KiB"


def _carried(frame: pd.DataFrame) -> str:
    """Which daemons carried the data of these runs (median MiB per host, from the counters)."""
    per_host: dict[str, list[float]] = {}
    for text in frame["daemon_bytes_by_host"].dropna():
        for item in str(text).split(";"):
            host, _, n = item.partition("=")
            per_host.setdefault(host, []).append(int(n) / 2**20)
    return ", ".join(f"{h} {pd.Series(v).median():.0f}" for h, v in sorted(per_host.items()))


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Per pattern: median MiB/s per I/O-node count, the best option and its gain over direct,
    and per forwarded option the MiB each daemon carried and the requests per dispatch."""
    rows = []
    for key, runs in results.groupby(PATTERN, sort=True):
        medians = runs.groupby("ionodes")["bandwidth_mib_s"].median()
        best = int(medians.idxmax())
        row = dict(zip(PATTERN, key, strict=True))
        row["runs"] = int(runs["run_key"].nunique())
        for k, v in medians.items():
            row[f"mib_s_{int(k)}"] = round(float(v), 1)
        row["best_ionodes"] = best
        row["best_over_direct"] = (
            round(float(medians[best] / medians[0]), 2) if 0 in medians else None
        )
        for k, fwd in runs[runs["ionodes"] > 0].groupby("ionodes"):
            row[f"carried_{int(k)}"] = _carried(fwd)
            row[f"per_dispatch_{int(k)}"] = round(float(fwd["requests_per_dispatch"].median()), 1)
        rows.append(row)
    return pd.DataFrame(rows)


def print_summary(table: pd.DataFrame, console: Console) -> None:
    options = sorted(int(c.rsplit("_", 1)[1]) for c in table.columns if c.startswith("mib_s_"))
    t = Table(title="median MiB/s per I/O-node count (0 = direct on GlusterFS)")
    for name in ("pattern", *(str(k) for k in options), "best", "data carried by (MiB)"):
        t.add_column(
            name, justify="left" if name in ("pattern", "data carried by (MiB)") else "right"
        )
    for _, r in table.iterrows():
        pattern = f"{r['spatiality']} {_size(int(r['request_bytes']))} {r['operation']}"
        best = f"{r['best_ionodes']} ({r['best_over_direct']:.2f}x direct)"
        carried = "; ".join(
            f"{k}: {r[f'carried_{k}']} ({r[f'per_dispatch_{k}']:g} req/dispatch)"
            for k in options
            if k > 0 and isinstance(r.get(f"carried_{k}"), str)
        )
        t.add_row(pattern, *(f"{r[f'mib_s_{k}']:.1f}" for k in options), best, carried)
    console.print(t)
    for line in story(table):
        console.print(line)


def _name(r: pd.Series) -> str:
    return f"{r['spatiality']} {_size(int(r['request_bytes']))} {r['operation']}"


def story(table: pd.DataFrame) -> list[str]:
    """What the table says, pattern by pattern (a clear win is >= 1.2x the other side)."""
    wins = table[(table["best_ionodes"] > 0) & (table["best_over_direct"] >= 1.2)]
    close = table[(table["best_ionodes"] > 0) & (table["best_over_direct"] < 1.2)]
    direct = table[table["best_ionodes"] == 0]
    forwarded = [c for c in table.columns if c.startswith("mib_s_") and c != "mib_s_0"]
    lines = []
    if len(wins):
        lines.append(
            "Forwarding wins: "
            + "; ".join(
                f"{_name(r)} {r['best_over_direct']:.2f}x with {r['best_ionodes']} I/O node(s), "
                f"{r[f'per_dispatch_{r.best_ionodes}']:g} requests per dispatch"
                for _, r in wins.iterrows()
            )
            + ". Where requests per dispatch > 1 the I/O node's scheduler merged the requests "
            "of many ranks into fewer, larger file-system calls."
        )
    if len(close):
        lines.append(
            "Within 20 %: "
            + "; ".join(f"{_name(r)} {r['best_over_direct']:.2f}x" for _, r in close.iterrows())
            + " (no clear winner with these repetitions)."
        )
    if len(direct):
        parts = []
        for _, r in direct.iterrows():
            k = max(forwarded, key=lambda c: r[c]).rsplit("_", 1)[1]
            best = r[f"mib_s_{k}"]
            parts.append(
                f"{_name(r)} (direct {r['mib_s_0']:.1f} MiB/s, best forwarded {best:.1f} with {k} "
                f"I/O node(s), {r[f'per_dispatch_{k}']:g} requests per dispatch)"
            )
        lines.append(
            "Direct access wins: " + "; ".join(parts) + ". Forwarding adds a hop through the I/O "
            "node to every request; it pays off where merging makes fewer, larger requests."
        )
    lines.append(
        "Which daemon carried the data (MiB, from the counters): with 2 I/O nodes block "
        "placement sends each compute host's ranks to its own I/O node (node1 → ion1, node2 → "
        "ion2), so each carries half; with 1, ion1 carries everything."
    )
    return lines


def significance(patterns: pd.DataFrame) -> str:
    """What the medians above cannot say, from the report's per-pattern tests (patterns.csv):
    where the runs cannot tell the options apart (none significantly worse than the best)."""
    undecided = patterns[
        (patterns["n_options"] > 1) & (patterns["n_choices"] == patterns["n_options"])
    ]
    if undecided.empty:
        return ""
    names = "; ".join(
        f"{r['spatiality']} {_size(int(r['request_bytes']))} {r['operation']}"
        for _, r in undecided.iterrows()
    )
    return (
        f"In {len(undecided)} of {len(patterns)} patterns the runs cannot tell the options apart "
        f"(no option significantly worse than the best; the report has the tests): {names}. "
        "There the medians above may be chance; more repetitions would tell."
    )


def write_summary(table: pd.DataFrame, path: Path, caveat: str = "") -> None:
    """The summary beside the report: a Markdown table per pattern, then the story."""
    options = sorted(int(c.rsplit("_", 1)[1]) for c in table.columns if c.startswith("mib_s_"))
    label = {0: "direct MiB/s", 1: "1 I/O node MiB/s"}
    head = ["pattern", *(label.get(k, f"{k} I/O nodes MiB/s") for k in options), "best",
            "data carried by (MiB)"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in table.iterrows():
        carried = "; ".join(
            f"{k}: {r[f'carried_{k}']} ({r[f'per_dispatch_{k}']:g} req/dispatch)"
            for k in options
            if k > 0 and isinstance(r.get(f"carried_{k}"), str)
        )
        cells = [_name(r), *(f"{r[f'mib_s_{k}']:.1f}" for k in options),
                 f"{r['best_ionodes']} ({r['best_over_direct']:.2f}x direct)", carried]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*lines, "", *story(table), *([caveat] if caveat else [])]) + "\n")


def run_demo(out: Path, console: Console) -> int:
    why = cluster.unmet_requirements()
    if why:
        raise DemoTestbedError("cannot build a testbed here: " + "; ".join(why))
    console.print(
        "Holding the testbed (2 compute, 2 I/O-node, 1 storage host; brought up unless one is "
        "up) ..."
    )
    try:
        with cluster.held(DEMO_CONFIG) as hold:
            _say_whose(hold, console)
            status = _explore(out, console)
    except (TestbedGone, SweepStopped) as e:
        raise DemoTestbedError(f"{e}; run again to resume") from None
    except TestbedError as e:
        raise DemoTestbedError(str(e)) from None
    if hold.down_seconds is not None:
        console.print(f"testbed down in {hold.down_seconds:.1f} s (this demo was its last user)")
    else:
        console.print("Let go of the testbed; it stays up for its other users.")
    return status


def _say_whose(hold: Hold, console: Console) -> None:
    if hold.made:
        seconds = hold.state.doc["facts"]["up_seconds"]
        console.print(f"testbed up in {seconds:.1f} s; it comes down when its last user is done")
        return
    others = describe(hold.others) if hold.others else "nobody else now"
    console.print(
        f"Using the testbed that is up, also held by {others} (iorelay testbed status): it "
        "stays up until every user is done."
    )


def _explore(out: Path, console: Console) -> int:
    from iorelay import explore
    from iorelay.analysis.cli import main as analyze_main
    from iorelay.testbed import explore as testbed_explore

    sweep = explore.load_sweep(None, testbed_explore.TESTBED_SWEEP)
    status = explore.explore(sweep, out, False, console, testbed_explore.run_one)
    results = pd.read_csv(out / "results.csv")
    analyze_main([str(out), "--out", str(out / "report")])
    table = summary(results)
    print_summary(table, console)
    caveat = significance(pd.read_csv(out / "report" / "patterns.csv"))
    if caveat:
        console.print(caveat)
    write_summary(table, out / "report" / "testbed-summary.md", caveat)
    console.print(
        f"results: {out / 'results.csv'}; report: {out / 'report' / 'report.html'}; this "
        f"summary: {out / 'report' / 'testbed-summary.md'}"
    )
    return status
