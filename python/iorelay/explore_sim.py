"""`iorelay explore --simulate PLATFORM`: a sweep's runs on a simulated machine (iorelay-sim),
written as the same tidy rows as real runs, with `source` = "simulated".

A real run moves `total` bytes or stops at the stonewall; FORGE's 60 s stonewalls are hundreds
of millions of requests, far too many to simulate one by one. In a simulated run each rank
therefore issues at most its first `requests_per_rank` requests (iorelay-sim --max-requests:
the files' layout stays that of the whole pattern), and the stonewall is kept in simulated
seconds. docs/simulator.md shows on a FORGE subset how much this cap changes the ranking of
options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from iorelay.results import SCHEMA_VERSION, run_key
from iorelay.simulate import SimulateError, platform_path, run_tool

DEFAULT_REQUESTS_PER_RANK = 8
SOURCE = "simulated"
# Sweep keys a simulated run cannot honour: the model has no fsync.
UNMODELLED = ("fsync",)


def check_config(config: Mapping[str, Any]) -> None:
    """Raises SimulateError when a configuration asks for what the simulator does not model."""
    asked = [k for k in UNMODELLED if config.get(k)]
    if asked:
        raise SimulateError(
            f"the simulator does not model {', '.join(asked)}; set them false in the sweep"
        )


def check_sweep(runs: list[dict[str, Any]], platform: str) -> None:
    """Checks before any run that the platform exists and every run can be simulated."""
    platform_path(platform)
    for config in runs:
        check_config(config)


def sim_argv(
    config: Mapping[str, Any], platform: str, operation: str, requests_per_rank: int
) -> list[str]:
    """The iorelay-sim command line of one run and operation; the repetition is the seed."""
    argv = [
        "--platform", str(platform_path(platform)),
        "--layout", config["layout"],
        "--spatiality", config["spatiality"],
        "--operation", operation,
        "--request", str(config["request_bytes"]),
        "--total", str(config["total_bytes"]),
        "--max-requests", str(max(0, requests_per_rank)),
        "--ranks", str(config["processes"]),
        "--nodes", str(config["nodes"]),
        "--ionodes", str(config["ionodes"]),
        "--scheduler", config["scheduler"],
        "--placement", config["placement"],
        "--seed", str(int(config["repetition"]) + 1),
    ]  # fmt: skip
    if config["stonewall_s"]:
        argv += ["--stonewall", str(config["stonewall_s"])]
        if config.get("wearout"):
            argv.append("--wearout")
    if config["odirect"]:
        argv.append("--odirect")
    return argv


def row_from_sim(
    config: Mapping[str, Any], operation: str, result: Mapping[str, Any], extra: Mapping[str, Any]
) -> dict[str, Any]:
    """One tidy row (docs/analysis.md) of a simulated run and operation."""
    return {
        "schema_version": SCHEMA_VERSION,
        "run_key": run_key(config),
        **config,
        "operation": operation,
        "bytes": result["bytes"],
        "requests": result["requests"],
        "time_s": result["simulated_time_s"],
        "bandwidth_mib_s": result["bandwidth_MiBps"],
        "dispatches": result["dispatches"],
        "errors": result["errors"],
        "source": SOURCE,
        **extra,
    }


Runner = Callable[[list[str]], dict[str, Any]]


def simulate_run(
    config: Mapping[str, Any],
    operations: tuple[str, ...],
    platform: str,
    requests_per_rank: int,
    runner: Runner = run_tool,
) -> list[dict[str, Any]]:
    """Rows of one configuration, one simulated run per operation (`runner` runs iorelay-sim)."""
    check_config(config)
    rows = []
    for op in operations:
        argv = sim_argv(config, platform, op, requests_per_rank)
        result = runner(argv)
        extra = {
            "wall_time_s": result.get("wall_time_s"),
            "command": "iorelay-sim " + " ".join(argv),
        }
        rows.append(row_from_sim(config, op, result, extra))
    return rows
