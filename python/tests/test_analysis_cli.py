"""`iorelay analyze` end to end: arguments, terminal summary, report directory."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd
import pytest

from iorelay.analysis import cli

TIDY = Path(__file__).parent / "data" / "tidy_schedulers.csv"


def test_report_directory_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    assert cli.main([str(TIDY), "--option", "scheduler", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "36 runs, 2 patterns" in printed
    assert "Choices that matter" in printed
    html = (out / "report.html").read_text(encoding="utf-8")
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs == [
        "best.png",
        "choices.png",
        "grid-fpp-contiguous.png",
        "grid-shared-strided.png",
        "heatmap-fpp-contiguous.png",
        "heatmap-shared-strided.png",
    ]
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == len(pngs)
    assert all(img.startswith("iVBORw0KGgo") for img in images)  # PNG signature in base64
    assert "<img" in html and 'src="' not in html.replace('src="data:', "")  # nothing external
    assert "shared-strided 1M" in html and "aggregate" in html
    for table in ("patterns", "options", "choices", "best", "by_dimension"):
        assert (out / f"{table}.csv").is_file()
    # The known answer of the fixture: aggregate wins the strided pattern alone; in the other
    # the three schedulers are alike.
    p = pd.read_csv(out / "patterns.csv").set_index("layout")
    assert len(p) == 2
    assert p.loc["shared", "best"] == "aggregate" and p.loc["shared", "n_choices"] == 1
    assert p.loc["fpp", "n_choices"] == 3  # all schedulers alike there


def test_errors_are_reported_not_raised(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([str(TIDY), "--option", "stripes"]) == 1
    assert "no option column 'stripes'" in capsys.readouterr().err
    assert cli.main(["/nonexistent/results.csv"]) == 1


def test_bad_alpha_is_a_usage_error() -> None:
    with pytest.raises(SystemExit):
        cli.main([str(TIDY), "--alpha", "2"])


def test_plugs_into_the_iorelay_command() -> None:
    parser = argparse.ArgumentParser(prog="iorelay")
    sub = parser.add_subparsers(dest="command", required=True)
    cli.add_parser(sub)
    args = parser.parse_args(["analyze", "a.csv", "b", "--option", "forwarders", "--alpha", "0.01"])
    assert args.func is cli.run
    assert (args.results, args.option, args.alpha, args.metric, args.out) == (
        ["a.csv", "b"],
        "forwarders",
        0.01,
        "bandwidth",
        None,
    )
