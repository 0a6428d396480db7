"""`iorelay place`: which I/O node serves which compute node, compared across policies.

Runs the C++ tool iorelay-place (topologies, Blue Gene/Q routing, policies, metrics), shows the
metrics of several policies side by side, writes the chosen mapping as the JSON file the client
library reads (IORELAY_PLACEMENT=map:FILE), and optionally plots the messages per link.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from iorelay import paths
from iorelay.tools import run_json_tool

TOOL = "iorelay-place"
TOOL_TIMEOUT_S = 300.0
POLICIES = ("default", "block", "round-robin", "nearest", "route-aware")
DEFAULT_MAPPING_FILE = "placement-map.json"


class PlaceError(RuntimeError):
    """iorelay-place failed, printed something that is not its JSON, or plotting is impossible."""


def run_tool(args: Sequence[str], timeout_s: float = TOOL_TIMEOUT_S) -> dict[str, Any]:
    """Runs `iorelay-place ARGS --json` and returns its JSON report."""
    tool = paths.find(TOOL)
    cmd = [str(tool), *args, "--json"]
    report = run_json_tool(cmd, error=PlaceError, timeout_s=timeout_s)
    if "policies" not in report:
        raise PlaceError(f"{TOOL}: unexpected report (no 'policies')")
    return report


def tool_args(args: argparse.Namespace) -> list[str]:
    """The iorelay-place command line for parsed `iorelay place` arguments (without --json)."""
    out = ["--topology", args.topology] if args.topology else ["--nodes", str(args.nodes)]
    policies = list(args.policies.split(",")) if args.policies else list(POLICIES)
    out += ["--policies", ",".join(policies), "--policy", args.policy]
    out += ["--ranks-per-node", str(args.ranks_per_node), "--cap", str(args.cap)]
    out += ["--unreached", args.unreached, "--daemon-unit", args.daemon_unit]
    out += ["--nodes-per-bridge", str(args.nodes_per_bridge)]
    if args.aggregate:
        out.append("--aggregate")
    if args.out:
        out += ["--out", str(args.out)]
    if args.plot:
        out.append("--link-loads")
    return out


def metrics_rows(report: Mapping[str, Any], aggregated: bool = False) -> list[dict[str, Any]]:
    """One flat row per policy: hops, messages per link, bridge transits, loads."""
    key = "metrics_aggregated" if aggregated else "metrics"
    rows = []
    for entry in report["policies"]:
        m = entry[key]
        rows.append(
            {
                "policy": entry["policy"],
                "hops_mean": m["hops_mean"],
                "hops_max": m["hops_max"],
                "link_msgs_max": m["link_messages"]["max"],
                "link_msgs_mean": m["link_messages"]["mean"],
                "link_cv": m["link_messages"]["cv"],
                "links_used": m["links_used"],
                "bridge_transit_msgs": m["bridge_transit_messages"],
                "bridge_load_max": m["bridge_load"]["max"],
                "ionode_load_max": m["ionode_load"]["max"],
            }
        )
    return rows


# Short column titles, so the table fits a terminal of 80 columns (the title explains them).
_HEADERS = {
    "policy": "policy",
    "hops_mean": "hops",
    "hops_max": "max",
    "link_msgs_max": "link max",
    "link_msgs_mean": "mean",
    "link_cv": "CV",
    "bridge_transit_msgs": "transit",
    "bridge_load_max": "bridge",
    "ionode_load_max": "ION",
}
_LEGEND = (
    "hops to the bridge node (mean, max); messages per used link (max, mean, CV); "
    "messages through another bridge node; most compute nodes on one bridge / I/O node"
)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if value >= 10 else f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def render_table(report: Mapping[str, Any], console: Console) -> None:
    """Prints the policies side by side, as messages per rank and with intra-node aggregation."""
    console.print(
        f"{report['topology']}: {report['nodes']:,} nodes, layout {report['layout']}, "
        f"{report['bridges']} bridge nodes, {report['ionodes']} I/O nodes"
    )
    per_rank = f"{report['ranks_per_node']} ranks/node"
    modes = [(False, per_rank), (True, "intra-node aggregation")]
    if report["aggregate"]:
        modes = [(False, "intra-node aggregation")]
    for aggregated, title in modes:
        rows = metrics_rows(report, aggregated)
        table = Table(title=f"messages: {title}", box=box.SIMPLE_HEAD, show_edge=False)
        for col, header in _HEADERS.items():
            justify = "left" if col == "policy" else "right"
            table.add_column(header, justify=justify, no_wrap=True)
        for row in rows:
            style = "bold" if row["policy"] == report["mapping_policy"] else None
            table.add_row(*(_cell(row[c]) for c in _HEADERS), style=style)
        console.print(table)
    console.print(_LEGEND)


def link_load_series(report: Mapping[str, Any]) -> dict[str, list[int]]:
    """Messages on each used link, largest first, per policy present in 'link_messages'."""
    loads = report.get("link_messages") or {}
    return {
        policy: sorted((int(c) for c in counts if c > 0), reverse=True)
        for policy, counts in loads.items()
    }


def plot_link_loads(report: Mapping[str, Any], path: str | Path) -> Path:
    """Draws messages per link (links sorted by load) for the default and chosen policies."""
    try:
        import matplotlib
    except ImportError as e:
        raise PlaceError(
            "--plot needs matplotlib, a dependency of the iorelay package that is missing "
            "here; reinstall the package (`make deps` in the repository) and retry"
        ) from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = link_load_series(report)
    if not series:
        raise PlaceError("the report has no per-link loads (run iorelay-place with --link-loads)")
    fig, ax = plt.subplots(figsize=(7, 4))
    try:
        for policy, loads in series.items():
            ax.plot(range(1, len(loads) + 1), loads, label=f"{policy} ({len(loads)} links)")
        ax.set_xlabel("links, by decreasing load")
        ax.set_ylabel("I/O messages on the link")
        ax.set_xscale("log")
        ax.set_title(f"{report['topology']}, {report['ranks_per_node']} ranks/node")
        ax.legend()
        fig.tight_layout()
        out = Path(path)
        fig.savefig(out)
    finally:
        plt.close(fig)
    return out


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "place",
        help="compare I/O-node placement policies and write a mapping",
        description=(
            "Assign compute nodes to I/O nodes on a torus or fat tree (default model, block, "
            "round-robin, nearest, route-aware), show hops, messages per link and bridge "
            "transits side by side, and write the chosen mapping for IORELAY_PLACEMENT=map:FILE."
        ),
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--topology",
        help="torus:4x4x4x4x2[:order=ABCDE], fattree:LxPxU or dragonfly:GxRxNxP[:routing=valiant] "
        "(docs/placement.md)",
    )
    where.add_argument("--nodes", type=int, help="a Mira partition size, e.g. 512 or 8192")
    p.add_argument(
        "--policy", default="route-aware", choices=POLICIES, help="policy whose mapping is written"
    )
    p.add_argument("--policies", help="comma-separated policies to compare (default: all)")
    p.add_argument("--ranks-per-node", type=int, default=16, help="MPI ranks per compute node")
    p.add_argument(
        "--aggregate", action="store_true", help="one message per node instead of one per rank"
    )
    p.add_argument("--cap", type=int, default=256, help="route-aware connectivity tree cap")
    p.add_argument(
        "--unreached",
        choices=("default", "nearest"),
        default="default",
        help="route-aware: nodes no tree reaches keep their default bridge, or go to the nearest "
        "bridge under its share",
    )
    p.add_argument(
        "--daemon-unit",
        choices=("ionode", "bridge"),
        default="ionode",
        help="what a daemon index in the mapping numbers",
    )
    p.add_argument(
        "--nodes-per-bridge",
        type=int,
        default=64,
        help="layout for topologies that are not Blue Gene/Q midplanes",
    )
    p.add_argument(
        "--out",
        default=DEFAULT_MAPPING_FILE,
        help=f"mapping JSON to write (default {DEFAULT_MAPPING_FILE}; '' to skip)",
    )
    p.add_argument("--json", action="store_true", help="print the tool's JSON report")
    p.add_argument("--plot", metavar="FILE.png", help="draw messages per link (needs matplotlib)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        report = run_tool(tool_args(args))
        if args.json:
            print(json.dumps(report, indent=1))
        else:
            console = Console()
            render_table(report, console)
            if args.out:
                console.print(f"mapping ({args.policy}) written to {args.out}")
        if args.plot:
            out = plot_link_loads(report, args.plot)
            print(f"link loads plotted to {out}", file=sys.stderr)
    except PlaceError as e:
        print(f"iorelay place: {e}", file=sys.stderr)
        return 1
    return 0
