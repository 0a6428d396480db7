"""IOR and mdtest for the benchmarks: built once from ../shared/vendor out of tree under
build/ior (not by `make test`), and run under mpirun on this machine."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

from strided_job import MPI_ENV

REPO = Path(__file__).resolve().parents[1]
VENDOR = REPO.parent / "shared" / "vendor" / "ior-5fcf0ba.tar.gz"
IOR_BUILD = REPO / "build" / "ior"


def build_ior() -> Path:
    """The directory holding the ior and mdtest binaries, built the first time."""
    binaries = IOR_BUILD / "src"
    if (binaries / "ior").exists() and (binaries / "mdtest").exists():
        return binaries
    IOR_BUILD.mkdir(parents=True, exist_ok=True)
    with tarfile.open(VENDOR) as tar:
        tar.extractall(IOR_BUILD.parent / "ior-src", filter="data")
    src = next((IOR_BUILD.parent / "ior-src").iterdir())
    subprocess.run(["./bootstrap"], cwd=src, check=True, capture_output=True)
    subprocess.run([str(src / "configure"), "--quiet"], cwd=IOR_BUILD, check=True)
    subprocess.run(["make", "-j2", "--quiet"], cwd=IOR_BUILD, check=True)
    return binaries


def run_mpi(ranks: int, argv: list[str], env: dict[str, str], timeout_s: float = 900) -> str:
    """Runs `argv` on `ranks` local ranks with `env` exported to each; its stdout."""
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)]
    for k in env:
        cmd += ["-x", k]
    full_env = {**os.environ, **MPI_ENV, **env}
    out = subprocess.run([*cmd, *argv], env=full_env, capture_output=True, text=True,
                         timeout=timeout_s, check=False)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {out.stdout[-1500:]} {out.stderr[-1500:]}")
    return out.stdout
