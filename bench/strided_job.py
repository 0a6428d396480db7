"""The MPI job both scheduler benchmarks run: R ranks of iorelay-bench writing one 1D-strided
shared file in small O_DIRECT requests (rank r's k-th request at (k * R + r) * size)."""

from __future__ import annotations

from iorelay import paths

# Shared memory between ranks on one machine; no network transport is probed.
MPI_ENV = {"OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1"}


def strided_writer_cmd(
    ranks: int, directory: str, env: dict[str, str], request: str = "8K", segments: int = 64
) -> list[str]:
    """mpirun command line; `env`'s names are exported to every rank (-x)."""
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)]
    for k in env:
        cmd += ["-x", k]
    cmd += [str(paths.find("iorelay-bench")), "--write", "--layout", "shared",
            "--spatiality", "strided", "--request", request, "--segments", str(segments),
            "--odirect", "--dir", directory]  # fmt: skip
    return cmd
