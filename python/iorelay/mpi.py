"""The MPI launchers iorelay drives: OpenMPI's mpirun (the default) and MPICH's mpiexec.

Choose with IORELAY_MPI=openmpi|mpich. Each MPI needs its own build of iorelay-bench (the two
ABIs differ): iorelay-bench for OpenMPI, iorelay-bench-mpich for MPICH (built when MPICH's
development files are installed). `iorelay exec` works under either launcher.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ENV = "IORELAY_MPI"


@dataclass(frozen=True)
class Launcher:
    name: str
    bench: str  # the iorelay-bench build for this MPI (paths.find name)
    # Environment for a run on one machine: shared-memory transport, no network probing.
    run_env: Mapping[str, str]

    def prefix(self, processes: int, env_names: Sequence[str] = ()) -> list[str]:
        """The launcher for `processes` ranks on this machine, carrying `env_names` to them."""
        names = sorted(env_names)
        if self.name == "mpich":
            argv = ["mpiexec.mpich", "-n", str(processes)]
            return [*argv, "-genvlist", ",".join(names)] if names else argv
        argv = ["mpirun", "--oversubscribe", "-np", str(processes)]
        if os.geteuid() == 0:
            argv.append("--allow-run-as-root")
        for name in names:
            argv += ["-x", name]  # carried to remote ranks too
        return argv


LAUNCHERS: dict[str, Launcher] = {
    "openmpi": Launcher(
        "openmpi", "iorelay-bench", {"OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1"}
    ),
    "mpich": Launcher("mpich", "iorelay-bench-mpich", {}),
}


def launcher(environ: Mapping[str, str] | None = None) -> Launcher:
    """The launcher IORELAY_MPI names (default openmpi); ValueError names the choices."""
    env = os.environ if environ is None else environ
    name = env.get(ENV, "openmpi") or "openmpi"
    if name not in LAUNCHERS:
        raise ValueError(f"{ENV}={name!r}: choose one of {', '.join(LAUNCHERS)}")
    return LAUNCHERS[name]
