"""A parallel HDF5 program (h5py's MPI-IO driver, tools/hdf5/h5_selections.py) through the relay:
4 ranks write and read small row selections and an element-strided hyperslab of one shared
file, independent and collective, through 2 I/O nodes. Each run checks every element (each
rank its own, rank 0 the whole file), the file under the I/O nodes' root reads back right
without the relay, and the I/O nodes' counters carried the data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S

from iorelay import mpi, paths, run

SYSTEM_PYTHON = "/usr/bin/python3"
PROGRAM = paths.REPO_ROOT / "tools" / "hdf5" / "h5_selections.py"
RANKS, ROWS, WIDTH, ELEMENTS = 4, 64, 8, 512
DATA_BYTES = 8 * RANKS * (ROWS * WIDTH + ELEMENTS)


def has_parallel_h5py() -> bool:
    probe = "import h5py._debian_h5py_mpi, mpi4py"
    try:
        return (
            subprocess.run([SYSTEM_PYTHON, "-c", probe], capture_output=True, timeout=60).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


pytestmark = [
    pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl"),
    pytest.mark.skipif(not has_parallel_h5py(), reason="python3-h5py-mpi not installed"),
]


@pytest.mark.parametrize("collective", [False, True], ids=["independent", "collective"])
def test_parallel_hdf5_through_two_ionodes(disk_tmp: Path, collective: bool) -> None:
    launcher = mpi.LAUNCHERS["openmpi"]
    root, prefix = disk_tmp / "root", str(disk_tmp / "fwd")  # the prefix is absent locally
    config = run.RelayConfig(ionodes=2, root=root, prefix=prefix)
    with run.start_relay(config, disk_tmp / "work") as relay:
        env = relay.env(preload=False)
        argv = [*launcher.prefix(RANKS, list(env)), sys.executable, "-m", "iorelay.exec_cmd",
                "--", SYSTEM_PYTHON, str(PROGRAM), "--dir", prefix, "--rows", str(ROWS),
                "--width", str(WIDTH), "--elements", str(ELEMENTS), "--keep",
                *(["--collective"] if collective else [])]  # fmt: skip
        proc = subprocess.run(argv, env={**os.environ, **launcher.run_env, **env},
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=SUBPROCESS_TIMEOUT_S, check=False)  # fmt: skip
        stats = [s for _, s in relay.stats()]
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["ok"] and result["bytes"] == DATA_BYTES and result["collective"] == collective
    assert relay.daemon_exit_codes == [0, 0]
    check = subprocess.run([SYSTEM_PYTHON, str(PROGRAM), "--check", str(root / "h5-selections.h5")],
                           capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr
    totals = [s["total"] for s in stats if isinstance(s, dict)]
    assert len(totals) == 2
    # The data and HDF5's own metadata went through the I/O nodes, and were read back.
    assert sum(t["bytes_written"] for t in totals) >= DATA_BYTES
    assert sum(t["bytes_read"] for t in totals) >= DATA_BYTES
    writes = sum(t["by_family"]["write"]["requests"] for t in totals)
    if collective:
        assert writes < RANKS * ROWS  # the aggregators wrote fewer, larger pieces
    else:
        assert writes >= RANKS * ROWS  # a request per row selection, at least
