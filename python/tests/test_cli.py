"""The installed `iorelay` command: help, version, and clear errors instead of tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, require_built

import iorelay


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "iorelay", *args],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        env=env,
        check=False,
    )


def test_help_lists_subcommands() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0, proc.stderr
    assert "stats" in proc.stdout
    assert "demo" in proc.stdout


@pytest.mark.parametrize("sub", ["stats", "demo"])
def test_subcommand_help(sub: str) -> None:
    proc = run_cli(sub, "--help")
    assert proc.returncode == 0, proc.stderr
    assert f"usage: iorelay {sub}" in proc.stdout


def test_the_command_line_loads_no_numerical_library() -> None:
    """numpy, pandas and scipy take seconds to import on a loaded node; the commands that fit or
    analyse load them when they run, so `iorelay run`, `hints` or `--help` do not pay for them."""
    code = (
        "import sys; from iorelay import cli; "
        "print(sorted(m for m in ('numpy', 'pandas', 'scipy', 'sklearn') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_version() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"iorelay {iorelay.__version__}"
    assert iorelay.__version__ != "0+unknown"
    version_file = Path(__file__).resolve().parents[2] / "VERSION"
    assert iorelay.__version__ == version_file.read_text().strip()


@pytest.mark.parametrize(
    "tool",
    [
        "iorelayd",
        "iorelay-ctl",
        "iorelay-place",
        "iorelay-bench",
        "iorelay-sim",
        "iorelay-sim-joint",
    ],
)
def test_tools_print_the_one_version(tool: str) -> None:
    binary = require_built(tool)[tool]
    proc = subprocess.run(
        [str(binary), "--version"],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{tool} {iorelay.__version__}\n"


def test_no_subcommand_is_a_usage_error() -> None:
    proc = run_cli()
    assert proc.returncode == 2
    assert "usage:" in proc.stderr


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "iorelay"
    assert script.exists(), f"{script} missing: install the package (make deps)"
    proc = subprocess.run(
        [str(script), "--help"],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("args", [["stats", "tcp:127.0.0.1:1"], ["demo"]])
def test_missing_binaries_give_a_clear_error(tmp_path: Path, args: list[str]) -> None:
    env = {**os.environ, "IORELAY_BUILD_DIR": str(tmp_path)}
    proc = run_cli(*args, env=env)
    assert proc.returncode == 1
    assert "not found" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


# Per tool: non-default options, to check that --print-config carries them through --config.
PRINT_CONFIG_ARGS = {
    "iorelayd": ["--workers", "3", "--scheduler", "aioli:quantum=64K", "--listen", "unix:/tmp/x"],
    "iorelay-ctl": ["--timeout-ms", "1234", "--secret-file", "/tmp/s"],
    "iorelay-place": ["--nodes", "512", "--policies", "default,route-aware", "--cap", "8"],
    "iorelay-bench": ["--spatiality", "strided", "--request", "8K", "--total", "1M", "--odirect"],
    "iorelay-sim": ["--platform", "local.json", "--ionodes", "2", "--scheduler", "aioli:wait=0"],
}


def run_tool(binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMPI_MCA_plm": "isolated", "OMPI_MCA_btl": "self"}
    return subprocess.run(
        [str(binary), *args],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        env=env,
        check=False,
    )


@pytest.mark.parametrize("tool", sorted(PRINT_CONFIG_ARGS))
def test_tools_help_comes_from_the_option_table(tool: str) -> None:
    proc = run_tool(require_built(tool)[tool], "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: {tool}")
    for entry in ("--config FILE.json", "--print-config", "--version"):
        assert entry in proc.stdout
    for option in PRINT_CONFIG_ARGS[tool]:
        if option.startswith("--") and option != "--nodes":
            assert option in proc.stdout


@pytest.mark.parametrize("tool", sorted(PRINT_CONFIG_ARGS))
def test_tools_print_config_round_trips(tool: str, tmp_path: Path) -> None:
    binary = require_built(tool)[tool]
    first = run_tool(binary, *PRINT_CONFIG_ARGS[tool], "--print-config")
    assert first.returncode == 0, first.stderr
    config = tmp_path / "config.json"
    config.write_text(first.stdout)
    again = run_tool(binary, "--config", str(config), "--print-config")
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    unknown = run_tool(binary, "--no-such-option")
    assert unknown.returncode == 2
    assert "unknown option '--no-such-option'" in unknown.stderr
