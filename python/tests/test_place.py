"""`iorelay place`: the real iorelay-place on small tori, the mapping file format, the numbers."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest
from rich.console import Console

from iorelay import place

needs_tool = pytest.mark.needs_build("iorelay-place")


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    place.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["place", *argv])


def _by_policy(report: dict) -> dict[str, dict]:
    return {p["policy"]: p["metrics"] for p in report["policies"]}


@needs_tool
def test_mapping_file_is_what_the_client_reads(tmp_path: Path) -> None:
    out = tmp_path / "map.json"
    report = place.run_tool(["--topology", "torus:4x4x4x4x2", "--out", str(out)])
    doc = json.loads(out.read_text())
    mapping = doc["mapping"]
    assert sorted(mapping, key=int) == [str(v) for v in range(512)]
    assert all(isinstance(d, int) and 0 <= d < 4 for d in mapping.values())
    assert doc["daemons"] == 4 and doc["daemon_unit"] == "ionode"
    assert doc["policy"] == "route-aware"
    assert doc["topology"] == "torus:4x4x4x4x2:order=ABCDE"
    # Daemon index = I/O node of the assigned bridge; 2 bridges per I/O node.
    assert doc["ionode_of_bridge"] == [0, 0, 1, 1, 2, 2, 3, 3]
    loads = [list(mapping.values()).count(d) for d in range(4)]
    assert sum(loads) == 512 and max(loads) <= 128 + 16  # share + nodes no tree reaches
    assert doc["metrics"] == _by_policy(report)["route-aware"]


@needs_tool
def test_numbers_on_a_midplane() -> None:
    report = place.run_tool(["--topology", "torus:4x4x4x4x2", "--ranks-per-node", "16"])
    m = _by_policy(report)
    assert list(m) == list(place.POLICIES)
    default, aware = m["default"], m["route-aware"]
    assert default["hops_mean"] == pytest.approx(4.0)  # the documented default model
    assert default["bridge_load"] == {"mean": 64.0, "max": 64, "min": 64, "cv": 0.0}
    assert aware["hops_mean"] < default["hops_mean"]
    assert aware["link_messages"]["max"] < default["link_messages"]["max"]
    assert aware["bridge_transit_messages"] < default["bridge_transit_messages"]
    assert default["messages"] == 512 * 16
    agg = {p["policy"]: p["metrics_aggregated"] for p in report["policies"]}
    assert agg["default"]["messages"] == 512
    assert agg["default"]["link_messages"]["max"] * 16 == default["link_messages"]["max"]


@needs_tool
def test_small_non_bgq_torus_uses_the_spread_layout(tmp_path: Path) -> None:
    out = tmp_path / "map.json"
    spread = ["--topology", "torus:4x4x2:order=CBA", "--nodes-per-bridge", "8"]
    report = place.run_tool(
        [*spread, "--out", str(out), "--daemon-unit", "bridge", "--unreached", "nearest"]
    )
    assert report["layout"] == "spread:8" and report["bridges"] == 4
    doc = json.loads(out.read_text())
    assert doc["daemons"] == 4 and doc["daemon_unit"] == "bridge"
    values = list(doc["mapping"].values())
    assert len(values) == 32 and max(values.count(d) for d in range(4)) <= 8


@needs_tool
def test_tool_rejects_a_bad_topology() -> None:
    with pytest.raises(place.PlaceError, match="topology"):
        place.run_tool(["--topology", "torus:4xx4"])


@needs_tool
def test_subcommand_prints_table_and_writes_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m.json"
    args = _args(
        "--topology", "torus:4x4x4x4x2", "--policies", "default,route-aware", "--out", str(out)
    )
    assert place.run(args) == 0
    text = capsys.readouterr().out
    assert "route-aware" in text and "intra-node aggregation" in text
    assert json.loads(out.read_text())["policy"] == "route-aware"


@needs_tool
def test_plot_or_a_clear_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "links.png"
    args = _args("--topology", "torus:4x4x4x4x2", "--out", "", "--plot", str(png))
    status = place.run(args)
    if importlib.util.find_spec("matplotlib") is None:
        assert status == 1
        assert "--plot needs matplotlib" in capsys.readouterr().err
    else:
        assert status == 0 and png.stat().st_size > 0


def test_link_load_series_sorts_used_links() -> None:
    report = {"link_messages": {"default": [0, 5, 2, 0, 9], "route-aware": [1, 1, 0]}}
    assert place.link_load_series(report) == {"default": [9, 5, 2], "route-aware": [1, 1]}
    assert place.link_load_series({}) == {}


def test_tool_args_follow_the_options() -> None:
    args = _args("--nodes", "8192", "--aggregate", "--out", "", "--cap", "128")
    argv = place.tool_args(args)
    assert argv[:2] == ["--nodes", "8192"]
    assert "--aggregate" in argv and "--out" not in argv and "--link-loads" not in argv
    assert argv[argv.index("--cap") + 1] == "128"


def test_render_table_marks_the_mapping_policy() -> None:
    metrics = {
        "hops_mean": 1.5,
        "hops_max": 3,
        "links_used": 10,
        "link_messages": {"mean": 2.0, "max": 4, "min": 1, "cv": 0.5},
        "bridge_transit_messages": 0,
        "bridge_load": {"mean": 4.0, "max": 4, "min": 4, "cv": 0.0},
        "ionode_load": {"mean": 8.0, "max": 8, "min": 8, "cv": 0.0},
    }
    report = {
        "topology": "torus:4:order=A",
        "nodes": 4,
        "layout": "spread:4",
        "bridges": 1,
        "ionodes": 1,
        "ranks_per_node": 2,
        "aggregate": False,
        "mapping_policy": "route-aware",
        "policies": [{"policy": "route-aware", "metrics": metrics, "metrics_aggregated": metrics}],
    }
    console = Console(record=True, width=200)
    place.render_table(report, console)
    text = console.export_text()
    assert "2 ranks/node" in text and "1.500" in text
    assert place.metrics_rows(report)[0]["link_msgs_max"] == 4
