"""`iorelay explore --simulate`: simulated runs become the same tidy rows as real ones, with
source = simulated, and `iorelay analyze` reads them like measured ones."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from iorelay import explore, explore_run, explore_sim
from iorelay.analysis import reader
from iorelay.analysis.compute import make_spec
from iorelay.simulate import SimulateError

needs_tool = pytest.mark.needs_build("iorelay-sim")

SWEEP = """
[sweep]
seed = 3
repetitions = 2
[pattern]
layout = "shared"
spatiality = ["contiguous", "strided"]
processes = 8
ranks_per_node = 2
request = "64K"
total = "64M"
operations = ["write"]
[relay]
ionodes = [0, 1]
"""


def _config(**over: Any) -> dict[str, Any]:
    run = explore.parse_sweep(SWEEP).runs[0]
    return {**run, **over}


def _explore(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="iorelay")
    explore.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["explore", *argv])
    return args.func(args)


def test_argv_carries_the_pattern_and_the_repetition_as_seed() -> None:
    argv = explore_sim.sim_argv(_config(repetition=1, ionodes=2), "local", "write", 4)
    assert argv[argv.index("--ranks") + 1] == "8"
    assert argv[argv.index("--nodes") + 1] == "4"
    assert argv[argv.index("--ionodes") + 1] == "2"
    assert argv[argv.index("--seed") + 1] == "2"
    assert argv[argv.index("--total") + 1] == str(64 << 20)
    assert argv[argv.index("--max-requests") + 1] == "4"
    assert "--wearout" not in argv
    worn = explore_sim.sim_argv(_config(stonewall_s=2.0, wearout=True), "local", "write", 4)
    assert worn[worn.index("--stonewall") + 1] == "2.0" and "--wearout" in worn


def test_rows_have_the_tidy_columns_and_source() -> None:
    fake = {"bytes": 10, "requests": 2, "simulated_time_s": 0.5, "bandwidth_MiBps": 3.0,
            "dispatches": 2, "errors": 0, "wall_time_s": 0.01}  # fmt: skip
    rows = explore_sim.simulate_run(_config(), ("write",), "local", 4, runner=lambda argv: fake)
    assert len(rows) == 1
    row = rows[0]
    assert row["source"] == "simulated"
    assert row["bandwidth_mib_s"] == 3.0 and row["time_s"] == 0.5
    assert row["command"].startswith("iorelay-sim --platform ")


def test_unmodelled_options_and_unknown_platform_are_refused() -> None:
    with pytest.raises(SimulateError, match="fsync"):
        explore_sim.check_config(_config(fsync=True))
    with pytest.raises(SimulateError, match=r"known: .*marenostrum4"):
        explore_sim.check_sweep([_config()], "no-such-machine")


def test_analysis_keeps_simulated_and_measured_runs_apart(tmp_path: Path) -> None:
    base = {"layout": "shared", "spatiality": "strided", "nodes": 1, "processes": 4,
            "request_bytes": 65536, "operation": "write", "repetition": 0}  # fmt: skip
    rows = [
        {**base, "ionodes": k, "bandwidth_mib_s": float(b), "source": s, "repetition": r}
        for s in ("measured", "simulated")
        for k, b in ((0, 10), (1, 20))
        for r in range(3)
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "mixed.csv", index=False)
    runs = reader.read_results([tmp_path])
    assert set(runs["source"]) == {"measured", "simulated"}
    assert make_spec(runs).pattern[-1] == "source"


@needs_tool
def test_simulated_sweep_is_resumable_and_analysable(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(SWEEP)
    out = tmp_path / "out"
    assert _explore(str(sweep), "--simulate", "local", "--requests-per-rank", "2",
                    "--out", str(out)) == 0  # fmt: skip
    frame = pd.read_csv(out / "results.csv")
    assert len(frame) == 8
    assert set(frame["source"]) == {"simulated"}
    assert (frame["bandwidth_mib_s"] > 0).all()
    assert _explore(str(sweep), "--simulate", "local", "--out", str(out)) == 0
    # A different request cap is another configuration: all 8 runs again.
    assert len(pd.read_csv(out / "results.csv")) == 16
    runs = reader.read_results([out])
    assert set(runs["source"]) == {"simulated"}


def test_unknown_platform_is_a_usage_error(tmp_path: Path) -> None:
    assert _explore("--simulate", "nowhere", "--out", str(tmp_path)) == 2


def test_real_runs_rows_say_measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = {"config": {"nodes": 4}, "phases": [{"operation": "write", "bytes": 1, "time_s": 1.0,
                                               "bandwidth_mib_s": 2.0}]}  # fmt: skip
    outcome = explore_run.RunOutcome(bench, 0.1, "", "cmd")
    monkeypatch.setattr(explore, "run_one", lambda *a: outcome)
    sweep = explore.parse_sweep(SWEEP)
    assert explore.explore(sweep, tmp_path, False, explore.Console(quiet=True)) == 0
    frame = pd.read_csv(tmp_path / "results.csv")
    assert len(frame) == 8
    assert set(frame["source"]) == {"measured"} and set(frame["command"]) == {"cmd"}
