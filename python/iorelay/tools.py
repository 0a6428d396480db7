"""Running iorelay's C++ command-line tools that answer with one JSON object on stdout."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any


def run_json_tool(
    cmd: Sequence[str],
    *,
    error: type[Exception],
    timeout_s: float,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Runs cmd and returns the JSON object it printed; raises `error` with the reason when it
    hangs past timeout_s, fails, or prints anything but a JSON object."""
    name = cmd[0]
    try:
        proc = subprocess.run(
            list(cmd),
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        raise error(f"{' '.join(cmd)}: no answer within {timeout_s:g} s") from e
    if proc.returncode != 0:
        raise error(f"{name} failed with status {proc.returncode}:\n{proc.stderr.strip()}")
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise error(f"{name} printed invalid JSON: {e}") from e
    if not isinstance(doc, dict):
        raise error(f"{name}: expected a JSON object, got {type(doc).__name__}")
    return doc
