"""iorelay-bench under mpirun, directly on disk: every pattern, the JSON schema, stonewall with
wear-out, and that its data verification catches a corrupted file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SUBPROCESS_TIMEOUT_S

import iorelay
from iorelay import mpi, paths
from iorelay.explore import mpirun_prefix
from iorelay.results import rows_from_bench
from iorelay.stats import query_stats

pytestmark = [
    pytest.mark.needs_build("iorelay-bench"),
    pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun not installed"),
]

PATTERNS = [("fpp", "contiguous"), ("shared", "contiguous"), ("shared", "strided")]


def bench(np: int, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    """Runs iorelay-bench on `np` ranks; returns the process and its JSON result (or None)."""
    argv = [*mpirun_prefix(np), str(paths.find("iorelay-bench")), *args]
    proc = subprocess.run(
        argv,
        env={**os.environ, **mpi.launcher().run_env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    try:
        return proc, json.loads(proc.stdout)
    except json.JSONDecodeError:
        return proc, None


@pytest.mark.parametrize(("layout", "spatiality"), PATTERNS)
def test_each_pattern_runs_verified_on_four_ranks(
    disk_tmp: Path, layout: str, spatiality: str
) -> None:
    proc, result = bench(
        4,
        *("--layout", layout, "--spatiality", spatiality, "--request", "16K", "--total", "2M"),
        *("--verify", "--odirect", "--fsync", "--dir", str(disk_tmp)),
    )
    assert proc.returncode == 0, proc.stderr
    assert result is not None and result["ok"]
    assert [p["operation"] for p in result["phases"]] == ["write", "verify", "read"]
    for phase in result["phases"]:
        assert phase["bytes"] == 2 * 1024 * 1024
        assert phase["rank_bytes"] == [512 * 1024] * 4
        assert phase["wrong_words"] == 0
    assert list(disk_tmp.iterdir()) == []  # files removed without --keep
    assert f"{layout}/{spatiality} 4 ranks" in proc.stderr


def test_json_result_follows_the_documented_schema(disk_tmp: Path) -> None:
    proc, result = bench(
        2, "--request", "8K", "--block", "32K", "--ranks-per-node", "2", "--dir", str(disk_tmp)
    )
    assert proc.returncode == 0, proc.stderr
    assert result is not None
    assert result["schema"] == "iorelay-bench" and result["schema_version"] == 1
    config = result["config"]
    assert config["processes"] == 2 and config["nodes"] == 1 and config["ranks_per_node"] == 2
    assert config["request_bytes"] == 8192 and config["block_bytes"] == 32768
    assert config["segments"] == 1 and config["planned_bytes"] == 65536
    for key in ("layout", "spatiality", "stonewall_s", "wearout", "odirect", "fsync", "seed"):
        assert key in config
    assert config["iorelay_version"] == iorelay.__version__
    assert isinstance(config["protocol_version"], int) and config["protocol_version"] >= 2
    rows = rows_from_bench({"repetition": 0}, result)
    assert {r["iorelay_version"] for r in rows} == {iorelay.__version__}
    assert [p["operation"] for p in result["phases"]] == ["write", "read"]
    for phase in result["phases"]:
        assert phase["bytes"] == 65536 and phase["requests"] == 8
        times = phase["rank_times_s"]
        assert len(times) == 2 and phase["time_s"] == max(times)
        assert phase["rank_time_s"] == {
            "min": min(times),
            "median": sum(times) / 2,
            "max": max(times),
        }
        assert phase["bandwidth_mib_s"] == pytest.approx(65536 / 2**20 / phase["time_s"])
        for key in ("rank_bytes", "rank_requests", "rank_wrong_words", "rank_errors"):
            assert len(phase[key]) == 2
    assert result["ok"] is True and result["wrong_words"] == 0 and result["errors"] == 0


def test_verification_catches_a_flipped_byte(disk_tmp: Path) -> None:
    common = ("--request", "64K", "--total", "1M", "--dir", str(disk_tmp))
    proc, _ = bench(4, "--write", "--keep", *common)
    assert proc.returncode == 0, proc.stderr
    data = disk_tmp / "iorelay-bench.dat"
    assert data.stat().st_size == 1024 * 1024
    middle = 512 * 1024 + 3  # rank 2's block
    with data.open("r+b") as f:
        f.seek(middle)
        byte = f.read(1)
        f.seek(middle)
        f.write(bytes([byte[0] ^ 0x40]))
    proc, result = bench(4, "--read", *common)
    assert proc.returncode != 0
    assert result is not None and not result["ok"]
    assert result["wrong_words"] == 1
    assert result["phases"][0]["rank_wrong_words"] == [0, 0, 1, 0]
    assert "FAILED" in proc.stderr


def test_read_of_a_missing_file_fails_with_an_error(disk_tmp: Path) -> None:
    proc, result = bench(2, "--read", "--dir", str(disk_tmp))
    assert proc.returncode != 0
    assert result is not None and result["errors"] == 2
    assert "No such file" in proc.stderr


def test_wearout_makes_every_rank_reach_the_fastest_ranks_count(disk_tmp: Path) -> None:
    proc, result = bench(
        4, "--write", "--request", "4K", "--total", "64G", "--stonewall", "0.2", "--wearout",
        "--dir", str(disk_tmp),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert result is not None
    (write,) = result["phases"]
    assert write["stonewalled_ranks"] == 4
    counts = write["rank_requests"]
    assert len(set(counts)) == 1 and 0 < counts[0] < 64 * 2**30 // 4096 // 4
    assert write["time_s"] >= 0.2


def test_bad_options_exit_with_usage(disk_tmp: Path) -> None:
    proc, result = bench(1, "--layout", "fpp", "--spatiality", "strided", "--dir", str(disk_tmp))
    assert proc.returncode != 0 and result is None
    assert "file-per-process is only contiguous" in proc.stderr


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None, reason="MPICH not installed")
def test_mpich_launcher_runs_the_mpich_bench_through_a_daemon(daemon_factory) -> None:
    """IORELAY_MPI=mpich: mpiexec.mpich, iorelay-bench-mpich and `iorelay exec` per rank."""
    binary = paths.find("iorelay-bench-mpich")
    d = daemon_factory(1)
    relay_env = {k: v for k, v in d.env().items() if k != "LD_PRELOAD"}
    launcher = mpi.launcher({"IORELAY_MPI": "mpich"})
    argv = [*launcher.prefix(2, list(relay_env)), sys.executable, "-m", "iorelay.exec_cmd", "--",
            str(binary), "--write", "--read", "--verify", "--spatiality", "strided",
            "--request", "8K", "--segments", "32", "--dir", d.prefix]  # fmt: skip
    proc = subprocess.run(argv, env={**os.environ, **launcher.run_env, **relay_env},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT_S, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["ok"] and result["config"]["processes"] == 2
    by_op = query_stats(d.addresses()[0], d.credential_file)["total"]["by_op"]
    assert by_op.get("pwrite", 0) >= 64, by_op  # the ranks' writes went through the daemon


def test_unknown_mpi_is_named() -> None:
    with pytest.raises(ValueError, match="openmpi, mpich"):
        mpi.launcher({"IORELAY_MPI": "lam"})
