"""Quantities with units: the rule of src/common/units.h, for the Python tools.

Sizes (bytes): a bare number is bytes; K, M, G, T (or k, m, g, t) and KiB, MiB, GiB, TiB are
powers of 1024; kB (or KB), MB, GB, TB powers of 1000; B alone is bytes; a fraction must come
to a whole number of bytes. Rates (bytes per second): a number, an optional prefix k (or K),
M, G, T (1000-based) or Ki, Mi, Gi, Ti (1024-based), B (bytes) or b (bits), then "ps" or "/s".
Durations: a number with ns, us, ms or s; 0 may stand alone. Both parsers pass
tests/data/units_cases.json.
"""

from __future__ import annotations

import math
import re

_KI = 1024
_SIZE_SUFFIXES = {
    "": 1, "B": 1,
    "K": _KI, "k": _KI, "KiB": _KI,
    "M": _KI**2, "m": _KI**2, "MiB": _KI**2,
    "G": _KI**3, "g": _KI**3, "GiB": _KI**3,
    "T": _KI**4, "t": _KI**4, "TiB": _KI**4,
    "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
}  # fmt: skip
_RATE_PREFIXES = {
    "": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
    "Ki": _KI, "Mi": _KI**2, "Gi": _KI**3, "Ti": _KI**4,
}  # fmt: skip
_TIME_SUFFIXES = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9}

SIZE_FORMS = (
    "a number of bytes with an optional unit: B; K, M, G, T or KiB, MiB, GiB, TiB "
    "(1024-based); kB, MB, GB, TB (1000-based)"
)
RATE_FORMS = (
    "a number, an optional prefix k, M, G, T (1000-based) or Ki, Mi, Gi, Ti (1024-based), "
    "B (bytes) or b (bits), then ps or /s, e.g. 10Gbps or 1.5GBps"
)
TIME_FORMS = "a number with ns, us, ms or s (0 may stand alone)"

# A plain decimal: digits with at most one point, no sign or exponent; then the unit.
_NUMBER = re.compile(r"([0-9]*\.?[0-9]*)(.*)", re.DOTALL)


class UnitError(ValueError):
    """A quantity that does not follow the rule; the message names the accepted forms."""


def _split(text: str) -> tuple[float, str] | None:
    m = _NUMBER.fullmatch(text.strip(" "))
    if m is None or not any(c.isdigit() for c in m.group(1)):
        return None
    return float(m.group(1)), m.group(2).strip(" ")


def _bad(what: str, text: str, forms: str) -> UnitError:
    return UnitError(f"bad {what} {text!r}: expected {forms}")


def parse_bytes(text: str | int) -> int:
    """Bytes from "64K", "1.5MB", "4096"; an int is returned as it is (if not negative)."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise UnitError(f"size {text} is negative")
        return text
    split = _split(str(text))
    if split is None or split[1] not in _SIZE_SUFFIXES:
        raise _bad("size", str(text), SIZE_FORMS)
    value = split[0] * _SIZE_SUFFIXES[split[1]]
    if value >= 2.0**64:
        raise UnitError(f"size {text!r} is larger than 2^64 - 1")
    whole = round(value)
    if abs(value - whole) > 1e-6 * max(1.0, whole):
        raise UnitError(f"size {text!r} is not a whole number of bytes")
    return int(whole)


def parse_duration_ns(text: str) -> int:
    """Nanoseconds from "0.9ms", "20ms", "1s"."""
    split = _split(text)
    if split is None:
        raise _bad("duration", text, TIME_FORMS)
    value, suffix = split
    if suffix == "" and value == 0:
        return 0
    if suffix not in _TIME_SUFFIXES:
        raise _bad("duration", text, TIME_FORMS)
    ns = value * _TIME_SUFFIXES[suffix]
    if ns >= 2.0**63:
        raise UnitError(f"duration {text!r} is out of range")
    return math.floor(ns + 0.5)  # half away from zero, as C's llround for these values


def parse_bytes_per_second(text: str) -> float:
    """Bytes per second from "10Gbps" (bits), "1.5GBps", "1GiB/s"."""
    split = _split(text)
    if split is None:
        raise _bad("rate", text, RATE_FORMS)
    value, unit = split
    if not (unit.endswith("ps") or unit.endswith("/s")):
        raise _bad("rate", text, RATE_FORMS)
    unit = unit[:-2]
    if not unit or unit[-1] not in "Bb":
        raise _bad("rate", text, RATE_FORMS)
    per_unit = 1.0 if unit[-1] == "B" else 1.0 / 8.0
    if unit[:-1] not in _RATE_PREFIXES:
        raise _bad("rate", text, RATE_FORMS)
    rate = value * _RATE_PREFIXES[unit[:-1]] * per_unit
    if rate <= 0:
        raise UnitError(f"rate {text!r} is not positive")
    return rate


def format_bytes(n: int) -> str:
    """The largest binary unit that divides n exactly: 65536 → "64KiB", 1000 → "1000B"."""
    for shift, name in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n and n % (1 << shift) == 0:
            return f"{n >> shift}{name}"
    return f"{n}B"
