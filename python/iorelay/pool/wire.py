"""How jobs and the `iorelay pool` commands talk to a running pool controller: one JSON object
per line over the pool's Unix socket, one request and its reply per connection."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

TIMEOUT_S = 60.0  # a join may wait for other jobs' releases (each drains its requests)
SOCKET_NAME = "pool.sock"


class PoolError(RuntimeError):
    """The pool refused a request (its reason) or could not be reached."""


def socket_path(pool: str | Path) -> Path:
    """A pool is named by its directory or its socket."""
    p = Path(pool)
    return p / SOCKET_NAME if p.is_dir() else p


def request(pool: str | Path, message: dict[str, Any], timeout_s: float = TIMEOUT_S) -> dict:
    """Sends message, returns the reply; PoolError when the pool answers {"error": ...}."""
    path = socket_path(pool)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout_s)
            s.connect(str(path))
            s.sendall(json.dumps(message).encode() + b"\n")
            with s.makefile("rb") as f:
                line = f.readline()
    except OSError as e:
        raise PoolError(f"pool {path}: {e}") from e
    if not line:
        raise PoolError(f"pool {path}: no reply to {message.get('op')}")
    reply = json.loads(line)
    if "error" in reply:
        raise PoolError(reply["error"])
    return reply


def read_request(conn: socket.socket, timeout_s: float = 5.0) -> dict[str, Any]:
    """The one request a connection carries (the controller's side)."""
    conn.settimeout(timeout_s)
    with conn.makefile("rb") as f:
        line = f.readline()
    message = json.loads(line)
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise ValueError("a request is a JSON object with an op")
    return message


def send_reply(conn: socket.socket, reply: dict[str, Any]) -> None:
    conn.sendall(json.dumps(reply).encode() + b"\n")
