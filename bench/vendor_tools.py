"""IOR and mdtest for the benchmarks: built once from ../shared/vendor out of tree under
build/ior (not by `make test`), and run under mpirun on this machine; IOR's hints file and its
write summary."""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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


def ior_hints_text(hints: Mapping[str, str]) -> str:
    """An IOR hints file: one `IOR_HINT__MPI__KEY=VALUE` line per MPI-IO hint, as IOR's
    `--mpiio.hintsFileName=FILE` reads it (IOR 4 has no `-U`; values cannot hold blanks)."""
    for key, value in hints.items():
        if not key or any(c in f"{key}{value}" for c in " =\t\n"):
            raise ValueError(f"a hint IOR cannot carry: {key!r}={value!r}")
    return "".join(f"IOR_HINT__MPI__{k}={v}\n" for k, v in hints.items())


def parse_ior(out: str) -> dict[str, Any]:
    """IOR's write summary (Max(MiB) as MiB/s, Mean(s)) and the hints rank 0's opened file
    reported (`--mpiio.showHints`; OpenMPI 4 echoes the hints passed, MPICH gives ROMIO's)."""
    summary = out.partition("Summary of all tests:")[2].splitlines()
    header = next((ln.split() for ln in summary if ln.startswith("Operation")), None)
    write = next((ln.split() for ln in summary if ln.startswith("write")), None)
    if not header or not write or len(header) > len(write):
        raise RuntimeError(f"no write summary in IOR's output: {out[-1500:]}")
    cells = dict(zip(header, write, strict=False))
    returned = out.partition("hints returned from opened file {")[2].partition("}")[0]
    hints = dict(re.findall(r"^\s*(\S+) = (\S*)\s*$", returned, re.M))
    return {"bandwidth_mib_s": float(cells["Max(MiB)"]), "time_s": float(cells["Mean(s)"]),
            "file_hints": hints}  # fmt: skip
