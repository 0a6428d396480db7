"""The `--pattern key=value,...` of `iorelay advise`: parsed and checked into one pattern row, or
a PatternError naming what is wrong."""

from __future__ import annotations

import pandas as pd

from iorelay import units

KEYS = ("layout", "spatiality", "request", "ranks", "nodes", "operation", "odirect")
REQUIRED = ("layout", "spatiality", "request", "ranks", "nodes")
CHOICES = {
    "layout": ("shared", "fpp"),
    "spatiality": ("contiguous", "strided"),
    "operation": ("write", "read"),
}
BOOLEANS = {"1": True, "yes": True, "true": True, "0": False, "no": False, "false": False}


class PatternError(ValueError):
    """A pattern that cannot be advised on; the message names the key and what is accepted."""


def _count(key: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise PatternError(f"{key}={text!r}: expected a whole number") from None
    if value <= 0:
        raise PatternError(f"{key}={value}: must be positive")
    return value


def parse_pattern(text: str, default_odirect: bool = False) -> pd.DataFrame:
    """One row in the advisor's description columns (iorelay.advise.table.DESCRIPTION).
    operation defaults to write, odirect to `default_odirect`."""
    items: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep:
            raise PatternError(f"{part!r}: expected key=value")
        if key not in KEYS:
            raise PatternError(f"unknown pattern key {key!r}; known: {', '.join(KEYS)}")
        if key in items:
            raise PatternError(f"pattern key {key!r} given twice")
        items[key] = value.strip()
    missing = [k for k in REQUIRED if k not in items]
    if missing:
        raise PatternError(f"the pattern lacks {', '.join(missing)}")
    for key, allowed in CHOICES.items():
        if key in items and items[key] not in allowed:
            raise PatternError(f"{key}={items[key]!r}: expected one of {', '.join(allowed)}")
    try:
        request = units.parse_bytes(items["request"])
    except units.UnitError as e:
        raise PatternError(f"request: {e}") from None
    if request <= 0:
        raise PatternError("request: must be positive")
    ranks, nodes = _count("ranks", items["ranks"]), _count("nodes", items["nodes"])
    if ranks < nodes:
        raise PatternError(f"ranks={ranks} is fewer than nodes={nodes}")
    odirect = default_odirect
    if "odirect" in items:
        if items["odirect"].lower() not in BOOLEANS:
            raise PatternError(f"odirect={items['odirect']!r}: expected yes or no")
        odirect = BOOLEANS[items["odirect"].lower()]
    row = {
        "layout": items["layout"],
        "spatiality": items["spatiality"],
        "request_bytes": request,
        "processes": ranks,
        "nodes": nodes,
        "operation": items.get("operation", "write"),
        "odirect": odirect,
    }
    return pd.DataFrame([row], index=pd.Index(["asked"], name="pattern"))


def given_odirect(text: str) -> bool:
    """Whether the pattern text names odirect itself."""
    return any(p.strip().startswith("odirect=") for p in text.split(","))
