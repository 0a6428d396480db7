"""Starts iorelayd on other nodes of a Slurm allocation, one background step per node.

Each daemon is `srun --overlap --nodes=1 --ntasks=1 --nodelist=HOST python -m
iorelay.launch.node_daemon iorelayd ...`; it binds the node's address (node_daemon's rule),
reads the job credential from a 0600 file in the shared work directory (never from a command
line), and announces its address in a ready file there. All daemons must be ready within
READY_TIMEOUT_S, else every step started is stopped (scancel --signal=TERM, then scancel) and
DaemonError says which host failed and why. Same interface as LocalDaemons.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from iorelay import paths
from iorelay.launch.local import DaemonError, RemoteDaemons, _tail
from iorelay.prctl import die_with_parent

READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
_POLL_S = 0.1


class SlurmDaemons(RemoteDaemons):
    """Context manager: one iorelayd per host of `hosts`, as steps of the current allocation.

    workdir must be on a file system every host sees (credential, ready files); root_dir is
    the exported directory, as the hosts see it.
    """

    def __init__(
        self,
        hosts: Sequence[str],
        root_dir: str | os.PathLike[str],
        prefix: str,
        workdir: str | os.PathLike[str],
        scheduler: str = "fifo",
        extra_args: Sequence[str] = (),
        *,
        interface: str | None = None,
        app_name: str = "app0",
        ready_timeout_s: float = READY_TIMEOUT_S,
        environ: dict[str, str] | None = None,
        credential_file: str | os.PathLike[str] | None = None,
        step_name: str = "iorelayd",
    ) -> None:
        super().__init__(
            hosts,
            root_dir,
            prefix,
            workdir,
            scheduler,
            extra_args,
            interface,
            ready_timeout_s,
            credential_file,
        )
        self.app_name = app_name
        self.step_name = step_name  # steps are STEP_NAME-0, -1, ...: stop finds them by it
        self.environ = dict(os.environ if environ is None else environ)
        self._addresses: list[str] = []
        self._procs: list[subprocess.Popen[bytes]] = []
        self._ready: set[int] = set()  # indexes of the daemons that announced their address

    @property
    def job_id(self) -> str:
        job = self.environ.get("SLURM_JOB_ID")
        if not job:
            raise DaemonError("not inside a Slurm allocation (SLURM_JOB_ID is not set)")
        return job

    def start(self) -> None:
        binary = paths.find("iorelayd")
        _ = self.job_id  # fails outside an allocation
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._credential()
        deadline = time.monotonic() + self.ready_timeout_s
        try:
            ready = [self._spawn(binary, i, host) for i, host in enumerate(self.hosts)]
            self._addresses = [self._wait_ready(i, r, deadline) for i, r in enumerate(ready)]
        except BaseException:
            self.stop(graceful=False)
            raise

    def _spawn(self, binary: Path, index: int, host: str) -> Path:
        ready = self.workdir / f"d{index}.ready"
        ready.unlink(missing_ok=True)
        node_args = [f"--interface={self.interface}"] if self.interface else []
        argv = [
            "srun", "--overlap", "--nodes=1", "--ntasks=1", f"--nodelist={host}",
            f"--job-name={self.step_name}-{index}", "--kill-on-bad-exit=1", "--quiet",
            sys.executable, "-m", "iorelay.launch.node_daemon", *node_args, str(binary),
            "--export", f"{self.prefix}={self.root_dir}",
            "--credential", f"{self.app_name}={self.credential_file}",
            "--ready-file", str(ready),
            "--scheduler", self.scheduler,
            *self.extra_args,
        ]  # fmt: skip
        log = self.workdir / f"d{index}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.environ,
                start_new_session=True,
                preexec_fn=die_with_parent,  # `iorelay run` gone: SIGTERM cancels the step
            )
        self._procs.append(proc)
        return ready

    def _wait_ready(self, index: int, ready: Path, deadline: float) -> str:
        proc, host = self._procs[index], self.hosts[index]
        log = self.workdir / f"d{index}.log"
        while True:
            with contextlib.suppress(OSError):
                for line in ready.read_text().splitlines():
                    if line.startswith("tcp:"):
                        self._ready.add(index)
                        return line.strip()
            code = proc.poll()
            if code is not None:
                raise DaemonError(
                    f"iorelayd on {host} exited with status {code} before it was ready.\n"
                    f"output:\n{_tail(log)}"
                )
            if time.monotonic() > deadline:
                raise DaemonError(
                    f"iorelayd on {host} was not ready within {self.ready_timeout_s:g} s "
                    f"(no {ready}); the steps were cancelled.\noutput:\n{_tail(log)}"
                )
            time.sleep(_POLL_S)

    def stop(self, graceful: bool = True) -> list[int | None]:
        """SIGTERM to each ready daemon (`scancel --signal=TERM` of its step: a SIGTERM to srun
        cancels the step, which kills the daemon) and to the srun of each daemon not ready yet;
        then scancel of steps still running. Not `graceful` (start failed): SIGTERM to every srun,
        since `scancel --signal` waits for every node of the job, also one that does not answer."""
        running = [i for i, p in enumerate(self._procs) if p.poll() is None]
        names = {f"{self.step_name}-{i}" for i in running if i in self._ready and graceful}
        signalled = names if names and self._scancel_steps("TERM", names) else set()
        for i in running:  # not ready yet (or no step found): srun cancels its step
            if f"{self.step_name}-{i}" not in signalled:
                with contextlib.suppress(ProcessLookupError):
                    self._procs[i].send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        stuck = []
        for proc in self._procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                stuck.append(proc)
        if stuck:
            self._scancel_steps()
            for proc in stuck:
                try:
                    proc.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self._procs:
            self.exit_codes = [p.returncode for p in self._procs]
        self._procs = []
        self._ready = set()
        return self.exit_codes

    def _scancel_steps(self, signal_name: str | None = None, names: set[str] | None = None) -> bool:
        """scancel (with `signal_name`: only that signal) of the job's STEP_NAME-N steps (those
        of `names` if given); False if none was found."""
        try:
            out = subprocess.run(
                ["squeue", "-h", "-s", "-j", self.job_id, "-o", "%i %j"],
                capture_output=True,
                text=True,
                timeout=10,
                env=self.environ,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return False
        words = [line.split() for line in out.splitlines()]
        steps = [
            w[0]
            for w in words
            if len(w) == 2
            and w[1].startswith(f"{self.step_name}-")
            and (names is None or w[1] in names)
        ]
        if steps:
            sig = [f"--signal={signal_name}"] if signal_name else []
            try:
                done = subprocess.run(["scancel", *sig, *steps], capture_output=True, text=True,
                                      timeout=5, env=self.environ, check=False)  # fmt: skip
            except subprocess.TimeoutExpired:
                return False
            # A daemon ends on SIGTERM before slurmctld answers scancel, which then says the
            # step is gone ("Invalid job id specified"): what was asked for, not an error.
            for line in done.stderr.splitlines():
                if "Invalid job id specified" not in line:
                    print(line, file=sys.stderr)
        return bool(steps)

    def addresses(self, transport: str = "tcp") -> list[str]:
        if transport != "tcp":
            raise KeyError(f"remote daemons announce only tcp addresses, not {transport}")
        return list(self._addresses)
