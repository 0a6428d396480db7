"""iorelay-aggregators, the command line over src/collective: a worked example of
docs/collective.md end to end, and a job shape the rules reject is named, not defaulted."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import SUBPROCESS_TIMEOUT_S

from iorelay import paths

pytestmark = pytest.mark.needs_build("iorelay-aggregators")


def tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(paths.find("iorelay-aggregators")), *args], capture_output=True,
                          text=True, timeout=SUBPROCESS_TIMEOUT_S, check=False)  # fmt: skip


def test_saturation_point_on_a_striped_file_through_io_nodes() -> None:
    # 16 ranks on 4 nodes, up to 4 aggregators per node; 640 MiB per call with k = 32 MiB asks
    # for 20, capped at the 16 ranks, then aligned to the 8 stripes: 16 (a multiple of 8).
    proc = tool("--ranks", "16", "--ranks-per-node", "4", "--max-per-node", "4",
                "--bytes-per-call", "640M", "--saturation-point", "32M",
                "--stripe-count", "8", "--stripe-size", "1M", "--ionodes", "2")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["aggregators"] == 16 and out["ranks"] == list(range(16))
    assert out["reasons"][:2] == [
        "saturation point: ceil(671088640 / 33554432) = 20",
        "capped at 16 (4 per node, 16 ranks)",
    ]
    assert out["romio_hints"] == {"cb_nodes": "16", "cb_config_list": "*:4"}
    # *:M is what the count needs per node, not --max-per-node: ROMIO's wildcard takes up to M
    # ranks of each host in rank order, so *:4 with cb_nodes 4 would put all 4 on node 0.
    for cb_nodes, config_list in (("4", "*:1"), ("6", "*:2")):
        proc = tool("--ranks", "16", "--ranks-per-node", "4", "--max-per-node", "4",
                    "--cb-nodes", cb_nodes)  # fmt: skip
        hints = json.loads(proc.stdout)["romio_hints"]
        assert hints == {"cb_nodes": cb_nodes, "cb_config_list": config_list}
    proc = tool("--ranks", "16", "--ranks-per-node", "4", "--cb-nodes", "3", "--stripe-count",
                "4", "--stripe-size", "1M")  # fmt: skip
    out = json.loads(proc.stdout)
    assert out["ranks"] == [0, 8]  # 3 does not divide 4 stripes: 2, on nodes 0 and 2
    assert out["reasons"][-1] == "aligned to 4 stripes: 2"


def test_a_rejected_shape_is_named() -> None:
    proc = tool("--ranks", "8", "--stripe-count", "4")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "needs stripe_size_bytes" in proc.stderr
    proc = tool("--ranks", "8", "--saturation-point", "32M")
    assert proc.returncode == 2 and "bytes_per_collective" in proc.stderr
