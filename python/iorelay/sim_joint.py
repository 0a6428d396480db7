"""Runs iorelay-sim-joint (several jobs in one simulation, src/sim/joint_run.h): its input
document on standard input, its JSON output back as a dict."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from iorelay import paths


class JointSimError(RuntimeError):
    """iorelay-sim-joint refused its input or failed; the message is its own."""


def run(doc: dict[str, Any], tool: Path | None = None) -> dict[str, Any]:
    """One joint simulation of doc (see iorelay-sim-joint --help)."""
    program = tool or paths.find("iorelay-sim-joint")
    out = subprocess.run(
        [str(program), "-"], input=json.dumps(doc), capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise JointSimError(f"iorelay-sim-joint: {out.stderr.strip() or out.returncode}")
    return json.loads(out.stdout)
