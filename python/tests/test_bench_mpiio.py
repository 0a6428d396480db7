"""iorelay-bench's MPI-IO mode through the relay: 4 ranks of independent and of collective
writes with OpenMPI's two MPI-IO components (OMPIO, its default here, and ROMIO) and with MPICH,
through 2 I/O nodes. Each run must verify, leave the file a direct run leaves, and the I/O nodes'
counters must have carried exactly the bytes the ranks wrote."""

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

from iorelay import collective_advice, mpi, paths, run

pytestmark = [
    pytest.mark.needs_build("iorelay-bench", "iorelayd", "libiorelay_preload.so", "iorelay-ctl"),
    pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun not installed"),
]

RANKS, REQUEST, SEGMENTS, SEED = 4, 16 * 1024, 8, 7
FILE_BYTES = RANKS * REQUEST * SEGMENTS
# The strided pattern: each collective call covers RANKS * REQUEST contiguous bytes, so two-phase
# I/O has no holes to read back and the daemons see exactly FILE_BYTES written.
PATTERN = ("--spatiality", "strided", "--request", "16K", "--segments", str(SEGMENTS))
# romio_cb_write=enable: ROMIO's "automatic" would skip two-phase I/O for this pattern.
COLLECTIVE = ("--collective", "--hint", "romio_cb_write=enable", "--hint", "cb_buffer_size=1048576")
MODES = {"independent": (), "collective": COLLECTIVE}


def mix64(x: int) -> int:
    """splitmix64's finaliser, as src/common/mix64.h."""
    mask = (1 << 64) - 1
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
    return x ^ (x >> 31)


def expected_strided_file() -> bytes:
    """The file the strided pattern writes: word at offset o is rank (o / t) mod P's pattern."""
    words = []
    for offset in range(0, FILE_BYTES, 8):
        rank = offset // REQUEST % RANKS
        words.append(mix64(SEED ^ (rank << 48) ^ offset ^ 0x9E3779B97F4A7C15))
    return b"".join(w.to_bytes(8, "little") for w in words)


def bench(
    launcher: mpi.Launcher, directory: str, args: tuple[str, ...], env: dict[str, str]
) -> dict[str, Any]:
    """iorelay-bench --api mpiio on RANKS ranks, each through `iorelay exec`; its JSON result."""
    argv = [*launcher.prefix(RANKS, list(env)), sys.executable, "-m", "iorelay.exec_cmd", "--",
            str(paths.find(launcher.bench)), "--api", "mpiio", *PATTERN, *args, "--seed", str(SEED),
            "--write", "--read", "--verify", "--keep", "--dir", directory]  # fmt: skip
    proc = subprocess.run(argv, env={**os.environ, **launcher.run_env, **env},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT_S, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["ok"] and result["config"]["api"] == "mpiio"
    for phase in result["phases"]:
        assert phase["bytes"] == FILE_BYTES and phase["wrong_words"] == 0
    return result


def run_both_ways(disk_tmp: Path, launcher: mpi.Launcher, args: tuple[str, ...],
                  env: dict[str, str]) -> dict[str, int]:  # fmt: skip
    """The run direct and through 2 I/O nodes: both files as expected; the I/O nodes' summed
    write counters."""
    direct_dir = disk_tmp / "direct"
    direct_dir.mkdir()
    bench(launcher, str(direct_dir), args, env)
    root, prefix = disk_tmp / "root", str(disk_tmp / "fwd")  # the prefix is absent locally
    config = run.RelayConfig(ionodes=2, root=root, prefix=prefix)
    with run.start_relay(config, disk_tmp / "work") as relay:
        bench(launcher, prefix, args, {**env, **relay.env(preload=False)})
        stats = [s for _, s in relay.stats()]
    assert relay.daemon_exit_codes == [0, 0]
    expected = expected_strided_file()
    assert (direct_dir / "iorelay-bench.dat").read_bytes() == expected
    assert (root / "iorelay-bench.dat").read_bytes() == expected
    assert all(isinstance(s, dict) for s in stats), stats
    totals = [s["total"] for s in stats if isinstance(s, dict)]
    return {
        "bytes_written": sum(t["bytes_written"] for t in totals),
        "bytes_read": sum(t["bytes_read"] for t in totals),
        "writes": sum(t["by_family"]["write"]["requests"] for t in totals),
    }


def check_counters(counters: dict[str, int], mode: str) -> None:
    """What the I/O nodes saw: every written byte once, both read phases, and one write request
    per MPI_File_write_at, or fewer, larger ones from the aggregators of collective calls."""
    assert counters["bytes_written"] == FILE_BYTES
    assert counters["bytes_read"] == 2 * FILE_BYTES  # verify and read phases
    requests = RANKS * SEGMENTS
    if mode == "independent":
        assert counters["writes"] == requests
    else:
        assert counters["writes"] < requests


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("component", ["ompio", "romio321"])
def test_openmpi_mpiio_through_two_ionodes(disk_tmp: Path, component: str, mode: str) -> None:
    counters = run_both_ways(disk_tmp, mpi.LAUNCHERS["openmpi"], MODES[mode],
                             {"OMPI_MCA_io": component})  # fmt: skip
    check_counters(counters, mode)


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None, reason="MPICH not installed")
@pytest.mark.parametrize("mode", MODES)
def test_mpich_mpiio_through_two_ionodes(disk_tmp: Path, mode: str) -> None:
    check_counters(run_both_ways(disk_tmp, mpi.LAUNCHERS["mpich"], MODES[mode], {}), mode)


def test_romio_automatic_gathers_only_interleaved_calls(disk_tmp: Path) -> None:
    """The premise of the advice's romio_cb_write (iorelay.collective_advice): with `automatic`,
    ROMIO writes each rank's own pieces when the ranks' ranges in a call do not interleave (the
    strided pattern: one request per call), and gathers them when they do (a vector view, 4
    requests of a rank per call)."""
    writes = {}
    for name, view in (
        ("strided", ()),
        ("vector", ("--view", "vector", "--requests-per-call", "4")),
    ):
        root = disk_tmp / name
        config = run.RelayConfig(ionodes=1, root=root / "root", prefix=str(root / "fwd"))
        args = ("--collective", "--hint", "romio_cb_write=automatic", *view)
        with run.start_relay(config, root / "work") as relay:
            bench(mpi.LAUNCHERS["openmpi"], config.prefix, args,
                  {"OMPI_MCA_io": "romio321", **relay.env(preload=False)})  # fmt: skip
            (stats,) = [s for _, s in relay.stats()]
        assert stats["total"]["bytes_written"] == FILE_BYTES
        writes[name] = stats["total"]["by_family"]["write"]["requests"]
    assert writes["strided"] == RANKS * SEGMENTS  # every rank's 16 KiB requests, one by one
    assert writes["vector"] < RANKS * SEGMENTS / 4  # gathered: at most a few writes per call


def one_aggregator_writes(disk_tmp: Path, launcher: str, args: tuple[str, ...],
                          env: dict[str, str]) -> int:  # fmt: skip
    """The write requests one I/O node saw for the whole file written in one collective call
    per rank (a vector view of all a rank's requests)."""
    config = run.RelayConfig(ionodes=1, root=disk_tmp / "root", prefix=str(disk_tmp / "fwd"))
    view = ("--collective", "--view", "vector", "--requests-per-call", "0")
    with run.start_relay(config, disk_tmp / "work") as relay:
        bench(mpi.LAUNCHERS[launcher], config.prefix, (*view, *args),
              {**env, **relay.env(preload=False)})  # fmt: skip
        (stats,) = [s for _, s in relay.stats()]
    assert stats["total"]["bytes_written"] == FILE_BYTES
    return int(stats["total"]["by_family"]["write"]["requests"])


CYCLE = FILE_BYTES // 4
ADVICE = collective_advice.Advice(
    aggregators=1, aggregator_ranks=(0,), cb_buffer_size=CYCLE, collective=True,
    stripe_count=1, stripe_size=collective_advice.DEFAULT_STRIPE_SIZE, saturation_point=CYCLE,
    reasons=(), evidence=(), interleaved=True,
)  # fmt: skip


@pytest.mark.parametrize("component", ["ompio", "romio321", "mpich"])
def test_advised_cycle_is_one_write_of_the_aggregator(disk_tmp: Path, component: str) -> None:
    """The premise of the advice's cycle (iorelay.collective_advice.cycle_for): the settings it
    gives each MPI (ROMIO's cb_buffer_size; OMPIO's io_ompio_bytes_per_agg, twice the cycle,
    which OpenMPI 4.1's fcoll halves) make the one aggregator write a call in writes of one
    cycle each."""
    if component == "mpich" and shutil.which("mpiexec.mpich") is None:
        pytest.skip("MPICH not installed")
    if component == "ompio":
        launcher = "openmpi"
        env = {"OMPI_MCA_io": "ompio"} | {
            f"OMPI_MCA_{k}": v for k, v in ADVICE.ompio_parameters().items()
        }
        args: tuple[str, ...] = ()
    else:
        launcher = "mpich" if component == "mpich" else "openmpi"
        env = {} if component == "mpich" else {"OMPI_MCA_io": component}
        args = tuple(a for k, v in ADVICE.romio_hints().items() for a in ("--hint", f"{k}={v}"))
    assert one_aggregator_writes(disk_tmp, launcher, args, env) == FILE_BYTES // CYCLE


def test_ompio_reads_cb_buffer_size_as_its_bytes_per_agg(disk_tmp: Path) -> None:
    """OMPIO also takes ROMIO's cb_nodes and cb_buffer_size info hints, above its MCA
    parameters, with cb_buffer_size meaning its io_ompio_bytes_per_agg: two cycles. (An
    application's own cb_buffer_size hint thus halves the cycle the advice meant for OMPIO.)"""
    hints = ("--hint", "cb_nodes=1", "--hint", f"cb_buffer_size={2 * CYCLE}")
    env = {"OMPI_MCA_io": "ompio", "OMPI_MCA_io_ompio_bytes_per_agg": str(8 * CYCLE)}
    assert one_aggregator_writes(disk_tmp, "openmpi", hints, env) == FILE_BYTES // CYCLE
