"""The short soak: a daemon holding 500 idle connections while 4 threads do I/O for 15 s keeps
its memory and descriptors flat (bench/soak.py runs the long one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import require_built

from iorelay import soak

pytestmark = pytest.mark.needs_build()


def test_short_soak_keeps_memory_and_descriptors_flat(disk_tmp: Path) -> None:
    require_built("iorelayd", "soak_client")
    samples = soak.soak(idle=500, active=4, seconds=15, workdir=disk_tmp)
    assert samples[0]["idle_connected"] == 500
    assert all(s["errors"] == 0 for s in samples)
    assert min(s["ops"] for s in samples[1:]) > 0, "the busy threads made progress every second"
    assert soak.growth(samples, "rss_kib") < 1.2, samples
    assert soak.growth(samples, "fds") < 1.02, samples
    assert samples[-2]["fds"] >= 500  # the idle connections were held to the end
    assert max(s["threads"] for s in samples) < 64  # threads do not grow with connections
