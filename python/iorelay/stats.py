"""`iorelay stats`: fetches a daemon's counters with iorelay-ctl and shows them.

The daemon's JSON is passed through as is (--json) or shown as tables: the daemon-wide scalar
fields, then one row per application with whatever counters the daemon reports.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from iorelay import paths
from iorelay.tools import run_json_tool

QUERY_TIMEOUT_S = 10.0
# Columns shown first when present; any other counter follows in the daemon's order.
_PREFERRED = (
    "requests",
    "bytes",
    "bytes_read",
    "bytes_written",
    "errors",
    "queue_time_ns",
    "service_time_ns",
)


class StatsError(RuntimeError):
    """The daemon could not be queried, or answered something that is not JSON."""


def query_stats(
    address: str,
    secret_file: str | os.PathLike[str] | None = None,
    timeout_s: float = QUERY_TIMEOUT_S,
) -> dict[str, Any]:
    """Runs `iorelay-ctl stats ADDRESS` and returns its JSON document.

    The secret comes from secret_file, else from $IORELAY_SECRET_FILE in our environment.
    """
    ctl = paths.find("iorelay-ctl")
    env = dict(os.environ)
    if secret_file is not None:
        env["IORELAY_SECRET_FILE"] = str(secret_file)
    return run_json_tool(
        [str(ctl), "stats", address], error=StatsError, timeout_s=timeout_s, env=env
    )


def application_rows(stats: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per-application counters as rows with an "application" key.

    Accepts "applications" (or "apps") as a list of objects with a "name", or as an object
    mapping application name to counters.
    """
    apps = stats.get("applications", stats.get("apps", []))
    if isinstance(apps, Mapping):
        return [{"application": name, **dict(counters)} for name, counters in apps.items()]
    rows = []
    for app in apps:
        row = dict(app)
        row["application"] = row.pop("name", row.pop("application", "?"))
        rows.append(row)
    return rows


def _flatten(counters: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested counters (e.g. by_family.read.requests) as one level of dotted names."""
    flat: dict[str, Any] = {}
    for key, value in counters.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _counter_names(rows: list[dict[str, Any]]) -> list[str]:
    seen: list[str] = []
    for row in rows:
        seen += [k for k in row if k not in seen and k != "application"]
    first = [k for k in _PREFERRED if k in seen]
    return [*first, *(k for k in seen if k not in first)]


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def render_stats(stats: Mapping[str, Any], console: Console, title: str = "") -> None:
    """Prints the daemon-wide fields and the per-application counters (one column each)."""
    scalars = {k: v for k, v in stats.items() if not isinstance(v, (dict, list))}
    if scalars:
        head = Table(title=title or None, show_header=False, box=None)
        for key, value in scalars.items():
            head.add_row(key, _cell(value))
        console.print(head)
    rows = [_flatten(row) for row in application_rows(stats)]
    if not rows:
        console.print("(no application has used this daemon yet)")
        return
    # Counters down, applications across: many counters, few applications.
    table = Table(title="per-application counters")
    table.add_column("counter", justify="left")
    for row in rows:
        table.add_column(str(row.get("application", "?")), justify="right")
    for name in _counter_names(rows):
        table.add_row(name, *(_cell(row.get(name, "")) for row in rows))
    console.print(table)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "stats",
        help="show a daemon's counters",
        description="Query a running iorelayd (through iorelay-ctl) and show its counters.",
    )
    p.add_argument("address", help="daemon address, e.g. tcp:127.0.0.1:43211 or unix:/tmp/d0.sock")
    p.add_argument(
        "--secret-file",
        help="job credential file (default: $IORELAY_SECRET_FILE)",
    )
    p.add_argument("--json", action="store_true", help="print the daemon's JSON unchanged")
    p.add_argument(
        "--timeout", type=float, default=QUERY_TIMEOUT_S, help="seconds to wait for the answer"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    stats = query_stats(args.address, args.secret_file, args.timeout)
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        render_stats(stats, Console(), title=args.address)
    return 0
