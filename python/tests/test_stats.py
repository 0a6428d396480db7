"""`iorelay stats`: parsing the daemon's JSON and showing it, with a stand-in iorelay-ctl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S
from rich.console import Console

from iorelay import stats

SAMPLE = {
    "schema": "iorelay.stats/1",
    "uptime_s": 12.5,
    "applications": [
        {
            "name": "app0",
            "requests": 1536,
            "bytes_written": 12582912,
            "bytes_read": 12582912,
            "errors": 0,
            "queue_time_us": 812,
            "service_time_us": 40211,
        },
        {"name": "app1", "requests": 3, "errors": 1, "queue_time_us": 5, "service_time_us": 9},
    ],
}


def _fake_ctl(build_dir: Path, body: str) -> None:
    ctl = build_dir / "src/client/iorelay-ctl"
    ctl.parent.mkdir(parents=True)
    ctl.write_text(f"#!{sys.executable}\nimport json, os, sys\n{body}\n")
    ctl.chmod(0o755)


def test_application_rows_from_list_and_mapping() -> None:
    rows = stats.application_rows(SAMPLE)
    assert [r["application"] for r in rows] == ["app0", "app1"]
    assert rows[0]["requests"] == 1536
    as_map = {"applications": {"a": {"requests": 2}, "b": {"requests": 5}}}
    assert stats.application_rows(as_map) == [
        {"application": "a", "requests": 2},
        {"application": "b", "requests": 5},
    ]


def test_render_shows_every_counter() -> None:
    console = Console(record=True, width=200)
    stats.render_stats(SAMPLE, console, title="d0")
    out = console.export_text()
    for word in ("app0", "app1", "1,536", "12,582,912", "queue_time_us", "service_time_us"):
        assert word in out
    assert "uptime_s" in out


def test_query_passes_address_and_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ctl(
        tmp_path,
        "assert sys.argv[1:] == ['stats', 'unix:/tmp/x.sock'], sys.argv\n"
        f"assert os.environ['IORELAY_SECRET_FILE'] == '/s/cred'\n"
        f"print(json.dumps({SAMPLE!r}))",
    )
    monkeypatch.setenv("IORELAY_BUILD_DIR", str(tmp_path))
    assert stats.query_stats("unix:/tmp/x.sock", "/s/cred") == SAMPLE


def test_query_reports_ctl_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ctl(tmp_path, "print('authentication failed', file=sys.stderr); sys.exit(3)")
    monkeypatch.setenv("IORELAY_BUILD_DIR", str(tmp_path))
    with pytest.raises(stats.StatsError, match="status 3:\nauthentication failed"):
        stats.query_stats("tcp:127.0.0.1:1")


def test_query_rejects_non_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ctl(tmp_path, "print('hello')")
    monkeypatch.setenv("IORELAY_BUILD_DIR", str(tmp_path))
    with pytest.raises(stats.StatsError, match="invalid JSON"):
        stats.query_stats("tcp:127.0.0.1:1")


def test_query_times_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ctl(tmp_path, "import time; time.sleep(30)")
    monkeypatch.setenv("IORELAY_BUILD_DIR", str(tmp_path))
    with pytest.raises(stats.StatsError, match="no answer within"):
        stats.query_stats("tcp:127.0.0.1:1", timeout_s=0.5)


def test_cli_stats_json(tmp_path: Path) -> None:
    _fake_ctl(tmp_path, f"print(json.dumps({SAMPLE!r}))")
    env = {**os.environ, "IORELAY_BUILD_DIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "iorelay", "stats", "tcp:127.0.0.1:1", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == SAMPLE
