"""`iorelay simulate run`: the real iorelay-sim on the shipped platforms."""

from __future__ import annotations

import argparse
import json

import pytest

from iorelay import cli, simulate

needs_tool = pytest.mark.needs_build("iorelay-sim")


def _args(*argv: str) -> argparse.Namespace:
    return cli.build_parser().parse_args(["simulate", "run", *argv])


def test_platform_names_resolve_to_shipped_files() -> None:
    assert simulate.platform_path("local").name == "local.json"
    with pytest.raises(simulate.SimulateError, match="marenostrum4"):
        simulate.platform_path("no-such-machine")


def test_settings_change_a_copy_of_the_platform() -> None:
    platform = {"network": {"latency": "1us"}, "ionode": {"slots": 4}}
    settings = ["ionode.slots=8", "network.link=5GBps", "storage.noise=0.1", "cpu.cores=2"]
    out = simulate.apply_settings(platform, settings)
    assert out == {
        "network": {"latency": "1us", "link": "5GBps"},
        "ionode": {"slots": 8},
        "storage": {"noise": 0.1},
        "cpu": {"cores": 2},
    }
    assert platform["ionode"]["slots"] == 4
    for bad in ("ionode.slots", "slots=8", ".key=1", "ionode.=1"):
        with pytest.raises(simulate.SimulateError, match=r"SECTION\.KEY=VALUE"):
            simulate.apply_settings(platform, [bad])


def test_tool_args_pass_only_given_pattern_flags() -> None:
    argv = simulate.tool_args(_args("--platform", "local", "--request", "64K", "--ionodes", "1"))
    assert argv[argv.index("--request") + 1] == "64K"
    assert "--layout" not in argv and "--odirect" not in argv
    assert argv[argv.index("--ionodes") + 1] == "1"
    assert argv[argv.index("--issuer") + 1] == "rank"


@needs_tool
def test_run_returns_the_simulated_numbers() -> None:
    args = _args(
        "--platform", "local", "--spatiality", "strided", "--request", "64K",
        "--segments", "4", "--ranks", "4", "--nodes", "2", "--ionodes", "1",
        "--scheduler", "aioli",
    )  # fmt: skip
    result = simulate.run_tool(simulate.tool_args(args))
    assert result["requests"] == 16
    assert result["bytes_at_storage"] == 16 * 64 * 1024
    assert result["scheduler"] == "aioli"
    assert result["bandwidth_MiBps"] > 0


@needs_tool
def test_mdtest_run_reports_each_phase(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "run", "--platform", "local", "--ranks", "2", "--ionodes", "1"]
    argv += ["--mdtest", "5", "--mdtest-bytes", "4K", "--set", "storage.metadata_service=100us"]
    assert cli.main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert [p["phase"] for p in result["mdtest"]["phases"]] == [
        "File creation", "File stat", "File read", "File removal",
    ]  # fmt: skip
    assert result["metadata_ops"] == 2 * 5 * 6
    assert "--mdtest-shared-dir" in simulate.tool_args(_args(*argv[2:], "--mdtest-shared-dir"))
    assert cli.main(argv[:-2]) == 2  # no metadata server
    assert "metadata_service" in capsys.readouterr().err


@needs_tool
def test_unknown_scheduler_is_one_line_naming_the_choices() -> None:
    args = _args("--platform", "local", "--ionodes", "1", "--scheduler", "nope")
    with pytest.raises(simulate.SimulateError, match="known: aioli"):
        simulate.run_tool(simulate.tool_args(args))


@needs_tool
def test_set_changes_the_platform_of_one_run(capsys: pytest.CaptureFixture[str]) -> None:
    def bandwidth(*settings: str) -> float:
        argv = ["simulate", "run", "--platform", "local", "--ranks", "2", "--nodes", "2"]
        assert cli.main([*argv, *(a for s in settings for a in ("--set", s))]) == 0
        return json.loads(capsys.readouterr().out)["bandwidth_MiBps"]

    assert bandwidth("storage.device=seek=50ms,bw=10MBps") < bandwidth() / 2
    assert cli.main(["simulate", "run", "--platform", "local", "--set", "storage.nic=x"]) == 2
    error = capsys.readouterr().err
    assert "storage.nic" in error and "local with --set storage.nic=x" in error, error


def test_bad_platform_or_scheduler_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["simulate", "run", "--platform", "nosuch"]) == 2
    assert "no platform 'nosuch'" in capsys.readouterr().err
    assert cli.main(["simulate", "replay", "t.trace", "--platform", "nosuch"]) == 2
    assert "no platform 'nosuch'" in capsys.readouterr().err


@needs_tool
def test_a_scheduler_is_checked_without_io_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["simulate", "run", "--platform", "local", "--scheduler", "nosuch"]) == 2
    assert "unknown scheduler 'nosuch'" in capsys.readouterr().err


@needs_tool
def test_cli_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["simulate", "run", "--platform", "local", "--ranks", "2", "--nodes", "2"]) == 0
    assert '"requests": 32' in capsys.readouterr().out
