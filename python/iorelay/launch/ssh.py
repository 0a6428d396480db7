"""Starts iorelayd on other hosts over ssh, outside Slurm (`iorelay run --launcher ssh`).

Per host one `ssh HOST sh -c SCRIPT`: the script makes a private directory (mode 0700) under the
host's /tmp, reads the job credential from its standard input into a 0600 file there (the secret
never appears on a command line), starts `python -m iorelay.launch.node_daemon iorelayd ...` (same
address rule and binary check as with Slurm), waits for its ready file and prints "pid P" and
"ready ADDRESS" on its standard output. All daemons must be ready within READY_TIMEOUT_S, else
every daemon started is stopped and DaemonError names the host and says why. Stopping is `ssh
HOST kill -TERM PID`; the script then removes its directory and exits with the daemon's status.
The ssh session's standard input stays open while the daemon should run: when it closes (iorelay
stopped or died), the remote script sends the daemon SIGTERM, so nothing outlives the run.
The ssh command is IORELAY_SSH (default `ssh -o BatchMode=yes -o ConnectTimeout=5`); a shared
install prefix is assumed (the same python and iorelayd paths on every host).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from iorelay import paths
from iorelay.launch.local import DaemonError, RemoteDaemons

READY_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
SSH_ENV = "IORELAY_SSH"
DEFAULT_SSH = "ssh -o BatchMode=yes -o ConnectTimeout=5"

# $1: python, $2: the node_daemon arguments (shell-quoted). stdin: the credential's line, then
# held open by iorelay: its end (iorelay stops, or dies) sends the daemon SIGTERM.
REMOTE_SCRIPT = r"""
umask 077
d=$(mktemp -d /tmp/iorelayd.XXXXXX) || exit 3
IFS= read -r secret
printf '%s\n' "$secret" > "$d/credential"
unset secret
exec 3<&0  # the session's stdin, for the watcher (a background job's own stdin is /dev/null)
py=$1
eval "set -- $2"
"$py" -m iorelay.launch.node_daemon "$@" --credential "app0=$d/credential" \
    --ready-file "$d/ready" > "$d/log" 2>&1 < /dev/null 3<&- &
pid=$!
( cat <&3 > /dev/null; kill -TERM $pid 2>/dev/null ) > /dev/null 2>&1 &
echo "pid $pid"
while [ ! -s "$d/ready" ]; do
  if ! kill -0 $pid 2>/dev/null; then
    wait $pid; st=$?; cat "$d/log" >&2; rm -rf "$d"; exit $st
  fi
  sleep 0.1
done
echo "ready $(grep ^tcp: "$d/ready" | head -1)"
wait $pid; st=$?
rm -rf "$d"
exit $st
"""


def ssh_command(environ: dict[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return shlex.split(env.get(SSH_ENV) or DEFAULT_SSH)


class _Remote:
    """One daemon's ssh session: its output lines, read by a thread."""

    def __init__(self, host: str, proc: subprocess.Popen[str]) -> None:
        self.host = host
        self.proc = proc
        self.pid: str | None = None
        self.address: str | None = None
        self.stderr = ""
        self._out = threading.Thread(target=self._read_stdout, daemon=True)
        self._err = threading.Thread(target=self._read_stderr, daemon=True)
        self._out.start()
        self._err.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            word, _, rest = line.strip().partition(" ")
            if word == "pid":
                self.pid = rest
            elif word == "ready" and rest.startswith("tcp:"):
                self.address = rest

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr = (self.stderr + line)[-2000:]

    def join(self) -> None:
        """Waits for the readers (the session has ended) and closes the pipes."""
        self._out.join(timeout=2)
        self._err.join(timeout=2)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None and not self._out.is_alive() and not self._err.is_alive():
                pipe.close()


class SshDaemons(RemoteDaemons):
    """Context manager: one iorelayd per host of `hosts`, started over ssh. Same interface as
    LocalDaemons and SlurmDaemons."""

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
        ready_timeout_s: float = READY_TIMEOUT_S,
        environ: dict[str, str] | None = None,
        credential_file: str | os.PathLike[str] | None = None,
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
        self.ssh = ssh_command(environ)
        self._remotes: list[_Remote] = []

    def start(self) -> None:
        binary = paths.find("iorelayd")
        self.workdir.mkdir(parents=True, exist_ok=True)
        secret = self._credential().read_bytes()  # 0600, local
        deadline = time.monotonic() + self.ready_timeout_s
        try:
            for host in self.hosts:
                self._remotes.append(self._spawn(host, binary, secret))
            for remote in self._remotes:
                self._wait_ready(remote, deadline)
        except BaseException:
            self.stop()
            raise

    def _spawn(self, host: str, binary: Path, secret: bytes) -> _Remote:
        node_args = [f"--interface={self.interface}"] if self.interface else []
        node_args += [str(binary), "--export", f"{self.prefix}={self.root_dir}",
                      "--scheduler", self.scheduler, *self.extra_args]  # fmt: skip
        remote_cmd = shlex.join(
            ["sh", "-c", REMOTE_SCRIPT, "sh", sys.executable, shlex.join(node_args)]
        )
        proc = subprocess.Popen(
            [*self.ssh, host, remote_cmd],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(secret.decode("ascii"))  # one line; the pipe stays open
            proc.stdin.flush()
        return _Remote(host, proc)

    def _wait_ready(self, remote: _Remote, deadline: float) -> None:
        while remote.address is None:
            code = remote.proc.poll()
            if code is not None:
                remote.join()
                raise DaemonError(
                    f"iorelayd on {remote.host} exited with status {code} before it was ready "
                    f"({shlex.join(self.ssh)} {remote.host}).\noutput:\n{remote.stderr.strip()}"
                )
            if time.monotonic() > deadline:
                raise DaemonError(
                    f"iorelayd on {remote.host} was not ready within {self.ready_timeout_s:g} s "
                    f"({shlex.join(self.ssh)} {remote.host}); every daemon started was stopped."
                    f"\noutput:\n{remote.stderr.strip()}"
                )
            time.sleep(0.05)

    def _kill_remote(self, remote: _Remote, sig: str) -> None:
        if remote.pid is None or not remote.pid.isdigit():
            return
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                [*self.ssh, remote.host, f"kill -{sig} {int(remote.pid)}"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=STOP_TIMEOUT_S,
                check=False,
            )

    def stop(self) -> list[int | None]:
        """SIGTERM to each remote daemon (the end of its session's stdin, and `kill -TERM` over
        ssh), then SIGKILL; the ssh sessions end."""
        running = [r for r in self._remotes if r.proc.poll() is None]
        for remote in self._remotes:
            with contextlib.suppress(OSError):
                assert remote.proc.stdin is not None
                remote.proc.stdin.close()
        for remote in running:
            self._kill_remote(remote, "TERM")
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for remote in running:
            try:
                remote.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._kill_remote(remote, "KILL")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(remote.proc.pid, 9)
                remote.proc.wait()
        for remote in self._remotes:
            remote.join()
        if self._remotes:
            self.exit_codes = [r.proc.returncode for r in self._remotes]
        self._remotes = []
        return self.exit_codes

    def addresses(self, transport: str = "tcp") -> list[str]:
        if transport != "tcp":
            raise KeyError(f"remote daemons announce only tcp addresses, not {transport}")
        return [r.address or "" for r in self._remotes]
