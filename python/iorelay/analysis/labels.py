"""How pattern values, options and pattern keys are shown to people (plots, HTML, terminal)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_UNITS = ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K"))
_NAMES = {
    "layout": "layout",
    "spatiality": "spatiality",
    "nodes": "compute nodes",
    "processes": "processes",
    "request_bytes": "request size",
    "operation": "operation",
    "odirect": "O_DIRECT",
    "stonewall_s": "stonewall (s)",
    "ionodes": "I/O nodes",
    "scheduler": "scheduler",
    "placement": "placement",
    "aggregators": "aggregators",
    "stripes": "stripes",
    "access": "layout/spatiality",
}


def size(n_bytes: float) -> str:
    """1024 → "1K", 6291456 → "6M", 1000 → "1000"; exact multiples only, else bytes."""
    n = int(n_bytes)
    for unit, suffix in _UNITS:
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def column(name: str) -> str:
    """A column's human name ("request_bytes" → "request size")."""
    return _NAMES.get(name, name)


def value(name: str, v: Any) -> str:
    """One value of a column as text ("request_bytes", 32768 → "32K")."""
    if name == "request_bytes":
        return size(v)
    if name == "odirect":
        return "O_DIRECT" if bool(v) else "buffered"
    if name == "access":
        return str(v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def option(name: str, v: Any) -> str:
    """An option value as text; 0 I/O nodes is "direct"."""
    if name == "ionodes" and int(v) == 0:
        return "0 (direct)"
    return value(name, v)


def access(layout: str, spatiality: str) -> str:
    """The layout/spatiality pair as one label: "fpp-contiguous", "shared-strided"."""
    return f"{layout}-{spatiality}"


def key(pattern: Mapping[str, Any], columns: list[str] | tuple[str, ...]) -> str:
    """A pattern as short text: "shared-strided 16 nodes 384 procs 1M"."""
    parts: list[str] = []
    if "layout" in columns or "spatiality" in columns:
        # Either one varying names the access pair (only spatiality varies in a sweep of one
        # shared file, and "8K write" alone would name two patterns).
        if "layout" in pattern and "spatiality" in pattern:
            parts.append(access(pattern["layout"], pattern["spatiality"]))
        else:
            parts.append(str(pattern["layout" if "layout" in columns else "spatiality"]))
    for c in columns:
        if c in ("layout", "spatiality"):
            continue
        v = pattern[c]
        if c == "nodes":
            parts.append(f"{v} nodes")
        elif c == "processes":
            parts.append(f"{v} procs")
        elif c == "stonewall_s":
            parts.append(f"stonewall {value(c, v)}s")
        elif c in ("request_bytes", "odirect", "operation", "layout", "spatiality"):
            parts.append(value(c, v))
        else:
            parts.append(f"{column(c)}={value(c, v)}")
    return " ".join(parts)
