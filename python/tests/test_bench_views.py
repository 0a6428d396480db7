"""iorelay-bench's MPI file views (--view vector|subarray): 4 ranks write through a view, 3
requests per call, collective, with OpenMPI's OMPIO and ROMIO and with MPICH; every run
verifies, and the file must hold each word where the view puts it (checked here against the
views' definitions, so a view MPI ignored or misread would fail even though the ranks read their
own data back). One configuration also runs through 2 I/O nodes, whose counters must carry the
bytes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S

from iorelay import mpi, paths, run

pytestmark = [
    pytest.mark.needs_build("iorelay-bench", "iorelayd", "libiorelay_preload.so", "iorelay-ctl"),
    pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun not installed"),
]

RANKS, REQUEST, SEGMENTS, SEED = 4, 4096, 6, 11
FILE_BYTES = RANKS * REQUEST * SEGMENTS
ROWS, COLS = 2, 2  # the subarray grid of 4 ranks (layout.h TileOf)


def mix64(x: int) -> int:
    """splitmix64's finaliser, as src/common/mix64.h."""
    mask = (1 << 64) - 1
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
    return x ^ (x >> 31)


def owner(view: str, offset: int) -> int:
    """The rank whose data the view puts at `offset`: vector, (o / t) mod P; subarray, the tile
    of 2D cell (row, column) with rows of COLS * t bytes and tiles SEGMENTS rows high."""
    cell = offset // REQUEST
    if view == "vector":
        return cell % RANKS
    row, col = divmod(cell, COLS)
    return row // SEGMENTS * COLS + col


def expected_file(view: str) -> bytes:
    words = (mix64(SEED ^ (owner(view, o) << 48) ^ o ^ 0x9E3779B97F4A7C15)
             for o in range(0, FILE_BYTES, 8))  # fmt: skip
    return b"".join(w.to_bytes(8, "little") for w in words)


# (launcher, OpenMPI's io component: "" for MPICH, whose ROMIO is built in)
MPIS = {"ompio": ("openmpi", "ompio"), "romio321": ("openmpi", "romio321"), "mpich": ("mpich", "")}


def bench(directory: str, view: str, which: str, env: dict[str, str]) -> None:
    name, component = MPIS[which]
    launcher = mpi.LAUNCHERS[name]
    if component:
        env = {**env, "OMPI_MCA_io": component}
    argv = [*launcher.prefix(RANKS, list(env)), sys.executable, "-m", "iorelay.exec_cmd", "--",
            str(paths.find(launcher.bench)), "--api", "mpiio", "--collective",
            "--hint", "romio_cb_write=enable", "--spatiality", "strided", "--request",
            str(REQUEST), "--segments", str(SEGMENTS), "--view", view, "--requests-per-call", "3",
            "--seed", str(SEED), "--write", "--read", "--verify", "--keep",
            "--dir", directory]  # fmt: skip
    proc = subprocess.run(argv, env={**os.environ, **launcher.run_env, **env},
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT_S, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["ok"] and result["config"]["view"] == view
    for phase in result["phases"]:
        assert phase["bytes"] == FILE_BYTES and phase["wrong_words"] == 0
        assert phase["requests"] == RANKS * SEGMENTS


@pytest.mark.parametrize("view", ["vector", "subarray"])
@pytest.mark.parametrize("which", list(MPIS))
def test_views_put_every_word_where_the_view_says(disk_tmp: Path, which: str, view: str) -> None:
    if which == "mpich" and shutil.which("mpiexec.mpich") is None:
        pytest.skip("MPICH not installed")
    bench(str(disk_tmp), view, which, {})
    assert (disk_tmp / "iorelay-bench.dat").read_bytes() == expected_file(view)


def test_subarray_view_through_two_ionodes(disk_tmp: Path) -> None:
    root, prefix = disk_tmp / "root", str(disk_tmp / "fwd")  # the prefix is absent locally
    with run.start_relay(run.RelayConfig(ionodes=2, root=root, prefix=prefix),
                         disk_tmp / "work") as relay:  # fmt: skip
        bench(prefix, "subarray", "ompio", relay.env(preload=False))
        stats = [s for _, s in relay.stats()]
    assert relay.daemon_exit_codes == [0, 0]
    assert (root / "iorelay-bench.dat").read_bytes() == expected_file("subarray")
    totals = [s["total"] for s in stats if isinstance(s, dict)]
    assert sum(t["bytes_written"] for t in totals) == FILE_BYTES
    assert sum(t["bytes_read"] for t in totals) == 2 * FILE_BYTES  # verify and read
