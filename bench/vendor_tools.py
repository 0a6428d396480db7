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


def build_ior(mpi: str = "openmpi") -> Path:
    """The directory holding the ior and mdtest binaries, built the first time: for OpenMPI
    under build/ior, for MPICH (mpicc.mpich) under build/ior-mpich."""
    build = IOR_BUILD if mpi == "openmpi" else IOR_BUILD.with_name(f"ior-{mpi}")
    binaries = build / "src"
    if (binaries / "ior").exists() and (binaries / "mdtest").exists():
        return binaries
    build.mkdir(parents=True, exist_ok=True)
    src_dir = IOR_BUILD.parent / "ior-src"
    if not src_dir.exists():
        with tarfile.open(VENDOR) as tar:
            tar.extractall(src_dir, filter="data")
    src = next(src_dir.iterdir())
    if not (src / "configure").exists():
        subprocess.run(["./bootstrap"], cwd=src, check=True, capture_output=True)
    cc = [] if mpi == "openmpi" else [f"CC=mpicc.{mpi}"]
    subprocess.run([str(src / "configure"), "--quiet", *cc], cwd=build, check=True)
    subprocess.run(["make", "-j2", "--quiet"], cwd=build, check=True)
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
