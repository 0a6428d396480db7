"""`iorelay advise --pattern`: what is accepted, and the one-line reason for what is not."""

from __future__ import annotations

import pytest

from iorelay.advise.pattern import PatternError, parse_pattern


def test_a_full_pattern_is_parsed_with_units():
    row = parse_pattern(
        "layout=shared,spatiality=strided,request=64KiB,ranks=384,nodes=16,operation=write"
    ).iloc[0]
    assert row["request_bytes"] == 65536
    assert (row["processes"], row["nodes"]) == (384, 16)
    assert (row["layout"], row["spatiality"], row["operation"]) == ("shared", "strided", "write")
    assert bool(row["odirect"]) is False


def test_operation_and_odirect_defaults():
    row = parse_pattern("layout=fpp,spatiality=contiguous,request=1M,ranks=96,nodes=8", True)
    assert row.iloc[0]["operation"] == "write"
    assert bool(row.iloc[0]["odirect"]) is True
    row = parse_pattern("layout=fpp,spatiality=contiguous,request=1M,ranks=96,nodes=8,odirect=no")
    assert bool(row.iloc[0]["odirect"]) is False


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("layout=shared,spatiality=strided,request=64KiB,ranks=384,nodes=16,color=red", "color"),
        ("layout=shared,spatiality=strided,request=64QB,ranks=384,nodes=16", "request"),
        ("layout=shared,spatiality=strided,request=64KiB,ranks=-4,nodes=16", "ranks=-4"),
        ("layout=shared,spatiality=strided,request=64KiB,ranks=384,nodes=0", "nodes=0"),
        ("layout=shared,spatiality=strided,request=0,ranks=384,nodes=16", "request"),
        ("layout=tree,spatiality=strided,request=64KiB,ranks=384,nodes=16", "layout"),
        ("layout=shared,request=64KiB,ranks=384,nodes=16", "spatiality"),
        ("layout=shared,spatiality=strided,request=64KiB,ranks=8,nodes=16", "fewer"),
        ("layout=shared,layout=fpp,spatiality=strided,request=1M,ranks=8,nodes=4", "twice"),
        ("layout=shared,spatiality=strided,request=1M,ranks=8,nodes=4,odirect=maybe", "odirect"),
        ("shared,strided", "key=value"),
    ],
)
def test_bad_patterns_name_what_is_wrong(text, says):
    with pytest.raises(PatternError, match=says):
        parse_pattern(text)
