"""The client's attribute cache (IORELAY_ATTR_CACHE_MS, IORELAY_STAT_PREFETCH): a program that
stats a directory's entries one by one gets them from one listing, with the attributes the
file system has, and a lifetime of 0 asks the daemon every time."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import SUBPROCESS_TIMEOUT_S

from iorelay.stats import query_stats

pytestmark = pytest.mark.needs_build()

# Stats every file of the directory (names given by the test, not listed by the program) and
# prints name, size and mtime (ns) of each.
STATS = """
import os, sys
for name in sys.argv[2:]:
    st = os.stat(sys.argv[1] + "/tree/" + name)
    print(name, st.st_size, st.st_mtime_ns)
"""


def stat_run(d, names: list[str], extra: dict[str, str]) -> tuple[str, dict[str, int]]:
    before = query_stats(d.addresses()[0], d.credential_file)["total"]["by_op"]
    env = {**os.environ, **d.env("unix"), **extra}
    p = subprocess.run([sys.executable, "-c", STATS, d.prefix, *names], env=env, text=True,
                       capture_output=True, timeout=SUBPROCESS_TIMEOUT_S)  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    after = query_stats(d.addresses()[0], d.credential_file)["total"]["by_op"]
    return p.stdout, {op: n - before.get(op, 0) for op, n in after.items()}


@pytest.mark.parametrize(
    ("extra", "most_stats"),
    [
        ({"IORELAY_STAT_PREFETCH": "on"}, 8),  # 8 misses, then the listing answers the rest
        ({"IORELAY_STAT_PREFETCH": "on", "IORELAY_ATTR_CACHE_MS": "0"}, 10**6),  # never cached
    ],
)
def test_stat_prefetch_lists_the_directory_once(daemon_factory, extra, most_stats):
    d = daemon_factory(1)
    (d.root_dir / "tree").mkdir()
    names = [f"f{i:03d}" for i in range(200)]
    for i, name in enumerate(names):
        (d.root_dir / "tree" / name).write_bytes(b"x" * i)
    out, ops = stat_run(d, names, extra)
    want = "".join(
        f"{n} {(st := os.stat(d.root_dir / 'tree' / n)).st_size} {st.st_mtime_ns}\n" for n in names
    )
    assert out == want
    assert ops.get("stat", 0) <= most_stats, ops
    if most_stats == 8:
        assert ops.get("readdir", 0) >= 1, ops
    else:
        assert ops.get("stat", 0) >= len(names), ops
