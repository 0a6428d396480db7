"""Starts and stops iorelayd processes on this machine, for the demo, tests and local runs.

Each daemon listens on loopback TCP and on a Unix socket, exports one root, and announces its
real addresses in a ready file. Daemons are always stopped on exit, exceptions included.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from iorelay import paths
from iorelay.credential import create_credential
from iorelay.prctl import die_with_parent

READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
_POLL_S = 0.02
_MAX_UNIX_PATH_BYTES = 100  # sun_path is 108 bytes on Linux, keep a margin


class DaemonError(RuntimeError):
    """A daemon failed to start (exited, or did not become ready in time)."""


class DaemonGroup:
    """A set of daemons as a context manager: started on entry, always stopped on exit."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> list[int | None]:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class RemoteDaemons(DaemonGroup):
    """What the launchers of daemons on other hosts (Slurm, ssh) are given: one iorelayd per
    host, exporting root_dir at prefix, with its files in workdir."""

    def __init__(
        self,
        hosts: Sequence[str],
        root_dir: str | os.PathLike[str],
        prefix: str,
        workdir: str | os.PathLike[str],
        scheduler: str,
        extra_args: Sequence[str],
        interface: str | None,
        ready_timeout_s: float,
        credential_file: str | os.PathLike[str] | None = None,
    ) -> None:
        if not hosts:
            raise ValueError("no host to start iorelayd on")
        self.hosts = list(hosts)
        self.root_dir = Path(root_dir)
        self.prefix = prefix
        self.workdir = Path(workdir)
        self.scheduler = scheduler
        self.extra_args = tuple(extra_args)
        self.interface = interface
        self.ready_timeout_s = ready_timeout_s
        # Given: the daemons share it (node relays use their I/O nodes'); else start() makes one.
        self.credential_file: Path | None = Path(credential_file) if credential_file else None
        self.exit_codes: list[int | None] = []

    def _credential(self) -> Path:
        if self.credential_file is None:
            self.credential_file = create_credential(self.workdir / "credential")  # 0600
        return self.credential_file


@dataclass(frozen=True)
class Daemon:
    """One running iorelayd: its index, process id, announced addresses and log files."""

    index: int
    pid: int
    addresses: tuple[str, ...]
    stdout_path: Path
    stderr_path: Path

    def address(self, transport: str) -> str:
        """The first announced address of this transport ("tcp" or "unix")."""
        for addr in self.addresses:
            if addr.startswith(transport + ":"):
                return addr
        raise KeyError(f"daemon {self.index} announced no {transport} address: {self.addresses}")


def _tail(path: Path, max_bytes: int = 4000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return "(no output)"
    text = data[-max_bytes:].decode(errors="replace").strip()
    return text or "(no output)"


# More daemons than this on one machine is a mistake (each is a process with its own threads),
# not an experiment.
MAX_LOCAL_DAEMONS = 64


class LocalDaemons(DaemonGroup):
    """Context manager running `count` iorelayd processes on loopback.

    with LocalDaemons(2, root_dir, "/fwd", workdir) as d:
        subprocess.run(cmd, env={**os.environ, **d.env()}, timeout=...)

    root_dir: directory every daemon exports (the "parallel file system").
    prefix: path prefix the interposer forwards; PREFIX/x is served as ROOT/x.
    workdir: existing directory for logs, ready files and (unless given) the credential.
    """

    def __init__(
        self,
        count: int,
        root_dir: str | os.PathLike[str],
        prefix: str,
        workdir: str | os.PathLike[str],
        scheduler: str = "fifo",
        backend: str = "posix",
        extra_args: Sequence[str] = (),
        *,
        credential_file: str | os.PathLike[str] | None = None,
        app_name: str = "app0",
        daemon_binary: str | os.PathLike[str] | None = None,
        preload_library: str | os.PathLike[str] | None = None,
        ready_timeout_s: float = READY_TIMEOUT_S,
        stop_timeout_s: float = STOP_TIMEOUT_S,
    ) -> None:
        if not 1 <= count <= MAX_LOCAL_DAEMONS:
            raise DaemonError(
                f"{count} daemons on this machine: 1 to {MAX_LOCAL_DAEMONS} (I/O nodes on other "
                "hosts come from a host file or a Slurm allocation)"
            )
        self.count = count
        self.root_dir = Path(root_dir).resolve()
        self.prefix = prefix
        self.workdir = Path(workdir).resolve()
        self.scheduler = scheduler
        self.backend = backend
        self.extra_args = tuple(extra_args)
        self.app_name = app_name
        self.credential_file = Path(credential_file) if credential_file else None
        self._daemon_binary = Path(daemon_binary) if daemon_binary else None
        self._preload_library = Path(preload_library) if preload_library else None
        self.ready_timeout_s = ready_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.daemons: list[Daemon] = []
        self.exit_codes: list[int | None] = []
        self._procs: list[subprocess.Popen[bytes]] = []
        self._sock_dir: Path | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Starts all daemons and waits until each has announced its addresses."""
        binary = self._daemon_binary or paths.find("iorelayd")
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.credential_file is None:
            self.credential_file = create_credential(self.workdir / "credential")
        # Unix socket paths must stay short: a private directory directly under /tmp.
        self._sock_dir = Path(tempfile.mkdtemp(prefix="ior", dir="/tmp"))
        try:
            ready_files = [self._spawn(binary, i) for i in range(self.count)]
            for i, ready in enumerate(ready_files):
                self.daemons.append(self._wait_ready(i, ready))
        except BaseException:
            self.stop()
            raise

    def _spawn(self, binary: Path, index: int) -> Path:
        ready = self.workdir / f"d{index}.ready"
        ready.unlink(missing_ok=True)
        sock = self._sock_dir / f"d{index}.sock"  # type: ignore[operator]
        if len(os.fsencode(sock)) >= _MAX_UNIX_PATH_BYTES:
            raise DaemonError(f"Unix socket path too long: {sock}")
        argv = [
            str(binary),
            "--listen", "tcp:127.0.0.1:0",
            "--listen", f"unix:{sock}",
            "--export", f"{self.prefix}={self.root_dir}",
            "--credential", f"{self.app_name}={self.credential_file}",
            "--ready-file", str(ready),
            "--scheduler", self.scheduler,
            "--backend", self.backend,
            *self.extra_args,
        ]  # fmt: skip
        stdout_path = self.workdir / f"d{index}.out"
        stderr_path = self.workdir / f"d{index}.err"
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=self.workdir,
                start_new_session=True,  # a terminal's Ctrl-C reaches us; we stop the daemons
                # SIGTERM when this process dies (`iorelay run` SIGKILLed, a CI timeout killing
                # pytest), so no daemon outlives the run.
                preexec_fn=die_with_parent,
            )
        self._procs.append(proc)
        return ready

    def _wait_ready(self, index: int, ready: Path) -> Daemon:
        proc = self._procs[index]
        stderr_path = self.workdir / f"d{index}.err"
        deadline = time.monotonic() + self.ready_timeout_s
        while True:
            if ready.exists():  # renamed into place by the daemon, so complete
                addresses = tuple(
                    line.strip() for line in ready.read_text().splitlines() if line.strip()
                )
                if not addresses:
                    raise DaemonError(f"daemon {index} wrote an empty ready file {ready}")
                return Daemon(
                    index, proc.pid, addresses, self.workdir / f"d{index}.out", stderr_path
                )
            code = proc.poll()
            if code is not None:
                raise DaemonError(
                    f"iorelayd {index} exited with status {code} before it was ready.\n"
                    f"command: {' '.join(map(str, proc.args))}\n"  # type: ignore[arg-type]
                    f"stderr:\n{_tail(stderr_path)}"
                )
            if time.monotonic() > deadline:
                raise DaemonError(
                    f"iorelayd {index} did not write {ready} within {self.ready_timeout_s:g} s.\n"
                    f"stderr:\n{_tail(stderr_path)}"
                )
            time.sleep(_POLL_S)

    def stop(self) -> list[int | None]:
        """Stops every daemon: SIGTERM, up to stop_timeout_s, then SIGKILL. Idempotent.

        Returns (and keeps in exit_codes) each daemon's exit status; -9 means it was killed.
        """
        for proc in self._procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout_s
        for proc in self._procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait()
        if self._procs:
            self.exit_codes = [p.returncode for p in self._procs]
        self._procs = []
        if self._sock_dir is not None:
            shutil.rmtree(self._sock_dir, ignore_errors=True)
            self._sock_dir = None
        return self.exit_codes

    # -- what clients need --------------------------------------------------------------------

    def addresses(self, transport: str = "tcp") -> list[str]:
        """One address per daemon, of the given transport ("tcp" or "unix")."""
        return [d.address(transport) for d in self.daemons]

    def env(self, transport: str = "tcp") -> dict[str, str]:
        """Environment variables that make a program use these daemons via the interposer.

        Merge into the program's environment: env={**os.environ, **daemons.env()}.
        """
        preload = self._preload_library or paths.find("libiorelay_preload.so")
        return {
            "LD_PRELOAD": str(preload),
            "IORELAY_PREFIX": self.prefix,
            "IORELAY_SECRET_FILE": str(self.credential_file),
            "IORELAY_SERVERS": ",".join(self.addresses(transport)),
        }

    def logs(self) -> str:
        """The stderr of every daemon, for a failure message."""
        return "\n".join(
            f"--- iorelayd {d.index} stderr ---\n{_tail(d.stderr_path)}" for d in self.daemons
        )
