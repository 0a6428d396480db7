"""A daemon with an admin channel and jobs admitted through `iorelay ionode`, for the shared-daemon
tests (test_shared_daemon*.py): admissions, probes run under the interposer as one job, and the
admin's view of the counters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import SUBPROCESS_TIMEOUT_S, DaemonFactory

from iorelay import ionode, paths
from iorelay.credential import create_credential
from iorelay.launch.local import LocalDaemons

# Run under the interposer as one job: tries each path given as argv and prints, per path, the
# bytes read or the errno name. "fd:SOCKET" receives a descriptor over a Unix socket and reads it.
PROBE = r"""
import errno, json, os, socket, sys
out = {}
for what in sys.argv[1:]:
    try:
        if what.startswith("fd:"):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(what[3:])
            _, fds, _, _ = socket.recv_fds(s, 16, 1)
            out[what] = os.read(fds[0], 4096).decode()
        elif what.startswith("at:"):  # at:DIR:REL, openat from a directory descriptor
            _, d, rel = what.split(":", 2)
            dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            fd = os.open(rel, os.O_RDONLY, dir_fd=dfd)
            out[what] = os.read(fd, 4096).decode()
        elif what.startswith("write:"):  # write:PATH:TEXT, then read back
            _, p, text = what.split(":", 2)
            with open(p, "w") as f:
                f.write(text)
            with open(p) as f:
                out[what] = f.read()
        elif what.startswith("api:"):  # the client library, which sends the path as it is
            import ctypes
            lib = ctypes.CDLL(os.environ["IORELAY_TEST_LIB"])
            lib.iorelay_client_from_env.restype = ctypes.c_void_p
            err = ctypes.c_int(0)
            c = lib.iorelay_client_from_env(ctypes.byref(err))
            f = ctypes.c_void_p()
            rc = lib.iorelay_open(ctypes.c_void_p(c), what[4:].encode(), os.O_RDONLY, 0,
                                  ctypes.byref(f))
            if rc < 0:
                raise OSError(-rc, os.strerror(-rc))
            buf = ctypes.create_string_buffer(4096)
            n = lib.iorelay_pread(f, buf, 4096, ctypes.c_long(0))
            out[what] = buf.raw[:max(n, 0)].decode()
        elif what.startswith("create:"):
            fd = os.open(what[7:], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            out[what] = "created"
        else:
            with open(what) as f:
                out[what] = f.read()
    except OSError as e:
        out[what] = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps(out))
"""

# Writes records to PREFIX0..PREFIX7, a file (and so a description) per thread, so that their
# writes wait in the daemon's queue together, until writes fail; prints "ready" once its files are
# open, then as JSON the monotonic time of the first failure and the writes each thread made.
WRITER = r"""
import json, os, sys, threading, time
fds = [os.open(f"{sys.argv[1]}{t}", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
       for t in range(8)]
print("ready", flush=True)
failed = []
written = [0] * 8
def loop(t):
    while not failed and written[t] < 100000:
        try:
            os.write(fds[t], f"{t}:{written[t]}\n".encode())
        except OSError as e:
            failed.append(time.monotonic())
            return
        written[t] += 1
threads = [threading.Thread(target=loop, args=(t,)) for t in range(8)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print(json.dumps({"first_failure": min(failed, default=None), "written": written}), flush=True)
"""


class SharedDaemon:
    """One daemon with an admin credential, jobs admitted through `iorelay ionode`."""

    def __init__(self, d: LocalDaemons, tmp: Path, admin: Path) -> None:
        self.d = d
        self.tmp = tmp
        self.admin = admin
        self.address = d.addresses("unix")[0]

    def admit(self, name: str, **kwargs: object) -> tuple[Path, Path, str]:
        """Admits job `name` with root TMP/NAME at prefix /fwd-NAME: (root, credential, prefix)."""
        root = self.tmp / name
        root.mkdir()
        key = create_credential(self.tmp / f"{name}.key")
        prefix = f"{self.tmp}/fwd-{name}"
        ionode.admit(
            self.address, name, key, [f"{prefix}={root}"], admin_secret_file=self.admin, **kwargs
        )
        return root, key, prefix

    def env(self, key: Path, prefixes: list[str]) -> dict[str, str]:
        return {
            **os.environ,
            "LD_PRELOAD": str(paths.find("libiorelay_preload.so")),
            "IORELAY_PREFIX": ":".join(prefixes),
            "IORELAY_SECRET_FILE": str(key),
            "IORELAY_SERVERS": self.address,
            "IORELAY_TIMEOUT_MS": "3000",
        }

    def probe(
        self, key: Path, prefixes: list[str], *attempts: str, preload: bool = True
    ) -> dict[str, str]:
        env = self.env(key, prefixes)
        if not preload:
            del env["LD_PRELOAD"]
            env["IORELAY_TEST_LIB"] = str(paths.find("libiorelay.so"))
        r = subprocess.run(
            [sys.executable, "-c", PROBE, *attempts],
            env=env,
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT_S,
        )
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    def ctl(self, key: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                str(paths.find("iorelay-ctl")),
                "--secret-file",
                str(key),
                "--timeout-ms",
                "3000",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT_S,
        )

    def stats(self) -> dict:
        r = self.ctl(self.admin, "stats", self.address)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)


def start_shared(daemon_factory: DaemonFactory, tmp: Path, *extra_args: str) -> SharedDaemon:
    """One daemon with an admin credential (and `extra_args`), no job admitted yet but app0."""
    admin = create_credential(tmp / "admin.key")
    d = daemon_factory(1, extra_args=["--admin-credential", str(admin), *extra_args])
    return SharedDaemon(d, tmp, admin)
