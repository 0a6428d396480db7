"""iorelayd with clients that stop reading (issue 12): nobody else stalls, the daemon closes them
within the slow-reader window, idle connections add no threads, and SIGTERM keeps its deadline.

The stalled clients speak the wire protocol from here (they only need hello, auth, open and
pread) so that they can stop reading at a chosen point, as a SIGSTOPped process would.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import resource
import secrets
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, DaemonFactory

from iorelay import paths
from iorelay.launch.local import LocalDaemons

_HEADER = struct.Struct("<IHHQIi")  # magic, version, op, id, length, status (src/proto/wire.h)
_MAGIC = 0x4C524F49
_HELLO, _AUTH, _FINISHED, _OPEN, _PREAD = 1, 2, 27, 10, 12
_BIG = 64 << 20


class RawClient:
    """A client that sends requests and reads replies only when asked to."""

    def __init__(self, address: str, secret_file: Path) -> None:
        # The protocol version this iorelayd speaks, so that this client follows it.
        self.version = int(_stats(address, secret_file)["protocol_version"])
        if address.startswith("unix:"):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(address.removeprefix("unix:"))
        else:
            host, port = address.removeprefix("tcp:").rsplit(":", 1)
            self.sock = socket.create_connection((host, int(port)))
        self.sock.settimeout(10)
        self.next_id = 1
        secret = bytes.fromhex(secret_file.read_text().strip())
        frames = []  # (header, payload) of the handshake, as sent and received
        hello = self.call(_HELLO, b"", frames)
        client_nonce = secrets.token_bytes(32)
        proof = hmac.new(secret, b"iorelay-auth-v1" + hello[:32] + client_nonce, hashlib.sha256)
        host = b"test"
        # The key id names the credential (common/key_id.h).
        key_id = hmac.new(secret, b"iorelay-key-id-v1", hashlib.sha256).digest()
        auth = client_nonce + proof.digest() + key_id + struct.pack("<II", os.getpid(), 0)
        # No session to join; seal_wanted 0 (the daemon runs with --seal off).
        auth += struct.pack("<I", len(host)) + host + struct.pack("<QQI", 0, 0, 0)
        reply = self.call(_AUTH, auth, frames)
        # kFinished: the MAC of the handshake's transcript (common/handshake_transcript.h); the
        # auth reply's payload counts up to the daemon's proof, its last 32 bytes.
        transcript = hashlib.sha256(b"iorelay-handshake-v2" + struct.pack("<H", self.version))
        frames[-1] = (frames[-1][0], reply[:-32])
        for header, body in frames:
            transcript.update(header + struct.pack("<I", len(body)) + body)
        transcript.update(reply[-32:])
        label = b"iorelay-client-finished-v2"
        self.send(_FINISHED, hmac.new(secret, label + transcript.digest(), hashlib.sha256).digest())

    def send(self, op: int, payload: bytes, frames: list | None = None) -> None:
        header = _HEADER.pack(_MAGIC, self.version, op, self.next_id, len(payload), 0)
        self.next_id += 1
        self.sock.sendall(header + payload)
        if frames is not None:
            frames.append((header, payload))

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed by the daemon")
            data += chunk
        return data

    def reply(self, frames: list | None = None) -> tuple[int, bytes]:
        """The next reply's status and body (heartbeats, sent while a request waits, skipped)."""
        while True:
            header = self._exact(_HEADER.size)
            _, _, rop, _, length, status = _HEADER.unpack(header)
            body = self._exact(length)
            if rop != 3:  # heartbeat
                if frames is not None:
                    frames.append((header, body))
                return status, body

    def call(self, op: int, payload: bytes, frames: list | None = None) -> bytes:
        """Sends a request and returns its reply's body; `frames` collects both frames."""
        self.send(op, payload, frames)
        status, body = self.reply(frames)
        assert status == 0, f"op {op} failed with errno {status}"
        return body

    def open(self, path: str) -> int:
        p = path.encode()
        reply = self.call(_OPEN, struct.pack("<I", len(p)) + p + struct.pack("<iI", os.O_RDONLY, 0))
        return int(struct.unpack_from("<Q", reply)[0])

    def pread(self, handle: int, length: int) -> None:
        """Asks for `length` bytes and does not read the reply."""
        self.send(_PREAD, struct.pack("<QQI", handle, 0, length))

    def close(self) -> None:
        self.sock.close()


def _stats(address: str, secret: Path) -> dict:
    import json

    env = dict(os.environ, IORELAY_SECRET_FILE=str(secret), IORELAY_TIMEOUT_MS="2000")
    r = subprocess.run(
        [str(paths.find("iorelay-ctl")), "stats", address],
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=True,
    )
    return json.loads(r.stdout)


def _sigterm_seconds(proc: subprocess.Popen) -> float:
    """Sends SIGTERM and returns how long the process took to exit (at most 10 s)."""
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    return time.monotonic() - start


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


@pytest.mark.needs_build("iorelayd", "iorelay-ctl")
@pytest.mark.parametrize("transport", ["unix", "tcp"])
def test_stalled_readers_stall_nobody_and_are_closed(
    daemon_factory: DaemonFactory, transport: str
) -> None:
    # The raw client here does not tag its frames: unsealed, so that TCP still shows the
    # stall behaviour (sealed queues are tested in src/client/sealed_tcp_test.cc).
    args = ["--workers", "2", "--send-window-ms", "1000", "--seal", "off"]
    d = daemon_factory(1, extra_args=args)
    address = d.addresses(transport)[0]
    assert d.credential_file is not None
    with open(d.root_dir / "big", "wb") as f:
        f.truncate(_BIG)
    clients = []  # closed whatever happens
    try:
        for _ in range(2):  # as many as --workers
            clients.append(RawClient(address, d.credential_file))
            clients[-1].pread(clients[-1].open(f"{d.prefix}/big"), _BIG)
        start = time.monotonic()
        # Another client, and new connections, are served at once.
        other = RawClient(address, d.credential_file)
        clients.append(other)
        handle = other.open(f"{d.prefix}/big")
        for _ in range(10):
            t0 = time.monotonic()
            other.send(_PREAD, struct.pack("<QQI", handle, 0, 4096))
            status, body = other.reply()
            assert status == 0 and len(body) == 4096
            assert time.monotonic() - t0 < 3.0
        # Closed within two windows and a tick (2.05 s; more on a loaded machine, with the 64 MiB
        # reads and a stats process per poll); the counter says why.
        while (closed := _stats(address, d.credential_file)["connections_closed_slow_reader"]) < 2:
            assert time.monotonic() - start < 8, "the stalled clients were never closed"
            time.sleep(0.1)
        assert closed == 2
        assert time.monotonic() - start < 6.0
        assert "slow reader" in d.daemons[0].stderr_path.read_text()
    finally:
        for c in clients:
            c.close()


@pytest.mark.needs_build("iorelayd", "iorelay-ctl")
def test_idle_connections_add_no_threads(daemon_factory: DaemonFactory) -> None:
    count = int(os.environ.get("IORELAY_IDLE_CONNECTIONS", "2000"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < count + 200:
        pytest.skip(f"RLIMIT_NOFILE hard limit {hard} is below {count} connections")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        args = [
            "--handshake-timeout-ms",
            "120000",
            "--max-connections",
            str(count + 10),
            "--max-handshakes",
            str(count + 10),
        ]
        d = daemon_factory(1, extra_args=args)
        pid = d.daemons[0].pid
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (count + 200, count + 200))
        address = d.addresses("unix")[0]
        assert d.credential_file is not None
        before = _threads(pid)
        idle = []
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(address.removeprefix("unix:"))
            idle.append(s)
        deadline = time.monotonic() + 30
        while _stats(address, d.credential_file)["connections_open"] < count:
            assert time.monotonic() < deadline, "the daemon did not accept every connection"
            time.sleep(0.2)
        assert _threads(pid) == before, f"{count} idle connections"
        for s in idle:
            s.close()
        # (iorelay-ctl's own connection is open while it asks)
        while _stats(address, d.credential_file)["connections_open"] > 1:
            assert time.monotonic() < deadline + 30, "closed connections were not reaped"
            time.sleep(0.2)
        assert _threads(pid) == before
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.needs_build("iorelayd", "iorelay-ctl")
def test_sigterm_with_a_stopped_client_keeps_the_deadline(daemon_factory: DaemonFactory) -> None:
    d = daemon_factory(1, extra_args=["--shutdown-timeout-ms", "1000", "--min-send-rate", "1B/s"])
    address = d.addresses("unix")[0]
    assert d.credential_file is not None
    with open(d.root_dir / "big", "wb") as f:
        f.truncate(_BIG)
    stalled = RawClient(address, d.credential_file)
    stalled.pread(stalled.open(f"{d.prefix}/big"), _BIG)
    # Stopping stops reading at once: wait until the daemon has read the pread.
    deadline = time.monotonic() + 5
    while "pread" not in _stats(address, d.credential_file)["total"]["by_op"]:
        assert time.monotonic() < deadline, "the daemon never read the pread"
        time.sleep(0.05)
    proc = d._procs[0]
    elapsed = _sigterm_seconds(proc)
    assert proc.returncode == 0
    assert elapsed < 2.5, f"SIGTERM took {elapsed:.1f} s with a 1 s deadline"
    assert "daemon stopping with" in d.daemons[0].stderr_path.read_text()
    stalled.close()


@pytest.mark.needs_build("iorelayd", "iorelay-ctl")
def test_sigterm_with_a_backend_call_that_never_returns_exits(disk_tmp: Path) -> None:
    # Not the daemon_factory fixture: it insists on exit status 0.
    (disk_tmp / "root").mkdir()
    # Every backend call sleeps 60 s, as on a hung network file system: the open below is
    # still inside the backend when SIGTERM comes.
    args = ["--shutdown-timeout-ms", "300", "--delay-us", "60000000"]
    with LocalDaemons(1, disk_tmp / "root", str(disk_tmp / "fwd"), disk_tmp / "work",
                      extra_args=args) as d:  # fmt: skip
        assert d.credential_file is not None
        client = RawClient(d.addresses("unix")[0], d.credential_file)
        p = f"{d.prefix}/f".encode()
        client.send(_OPEN, struct.pack("<I", len(p)) + p + struct.pack("<iI", os.O_RDONLY, 0))
        time.sleep(0.3)
        proc = d._procs[0]
        elapsed = _sigterm_seconds(proc)
        client.close()
        log = d.daemons[0].stderr_path.read_text()
    assert proc.returncode == 1
    assert elapsed < 3, f"SIGTERM took {elapsed:.1f} s with a 0.3 s deadline"
    assert "a backend call has not returned" in log
