"""The units rule: every case of tests/data/units_cases.json, shared with the C++ parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iorelay import units

CASES = json.loads(
    (Path(__file__).resolve().parents[2] / "tests" / "data" / "units_cases.json").read_text()
)["cases"]
PARSERS = {
    "size": units.parse_bytes,
    "duration": units.parse_duration_ns,
    "rate": units.parse_bytes_per_second,
}


@pytest.mark.parametrize("case", CASES, ids=[f"{c['kind']}:{c['text']!r}" for c in CASES])
def test_shared_case(case: dict) -> None:
    parse = PARSERS[case["kind"]]
    if case.get("error"):
        with pytest.raises(units.UnitError):
            parse(case["text"])
    else:
        assert parse(case["text"]) == pytest.approx(case["value"], rel=1e-15)
        assert isinstance(parse(case["text"]), float if case["kind"] == "rate" else int)


def test_errors_name_the_accepted_forms() -> None:
    with pytest.raises(units.UnitError, match="KiB"):
        units.parse_bytes("12 parsecs")
    with pytest.raises(units.UnitError, match="10Gbps"):
        units.parse_bytes_per_second("10Gbit/s")


def test_format_parses_back() -> None:
    for n in (0, 1, 1000, 1024, 65536, 3 << 30, (1 << 40) + 1):
        assert units.parse_bytes(units.format_bytes(n)) == n
