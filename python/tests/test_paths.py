"""Binary lookup: build dir from the environment, repo build tree, installed prefix, errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from iorelay import paths


def _make(path: Path, executable: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    if executable:
        path.chmod(0o755)
    return path


def test_missing_binary_error_says_where_and_how(tmp_path: Path) -> None:
    env = {"IORELAY_BUILD_DIR": str(tmp_path)}
    with pytest.raises(paths.NotBuiltError) as info:
        paths.find("iorelayd", environ=env)
    msg = str(info.value)
    assert "iorelayd not found" in msg
    assert str(tmp_path / "src/iorelayd/iorelayd") in msg
    assert "IORELAY_BUILD_DIR" in msg
    assert "make build" in msg


def test_missing_everywhere_mentions_repo_build_and_path(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path / "bin")}
    with pytest.raises(paths.NotBuiltError, match="Not on PATH") as info:
        paths.find("iorelayd", environ=env, repo_root=tmp_path)
    assert str(tmp_path / "build/src/iorelayd/iorelayd") in str(info.value)


def test_build_dir_from_environment(tmp_path: Path) -> None:
    daemon = _make(tmp_path / "src/iorelayd/iorelayd")
    preload = _make(tmp_path / "src/preload/libiorelay_preload.so", executable=False)
    env = {"IORELAY_BUILD_DIR": str(tmp_path)}
    assert paths.find("iorelayd", environ=env) == daemon
    assert paths.find("libiorelay_preload.so", environ=env) == preload
    assert paths.build_dir(env) == tmp_path


def test_repo_build_tree(tmp_path: Path) -> None:
    ctl = _make(tmp_path / "build/src/client/iorelay-ctl")
    assert paths.find("iorelay-ctl", environ={"PATH": ""}, repo_root=tmp_path) == ctl


def test_non_executable_program_is_not_found(tmp_path: Path) -> None:
    _make(tmp_path / "src/iorelayd/iorelayd", executable=False)
    with pytest.raises(paths.NotBuiltError):
        paths.find("iorelayd", environ={"IORELAY_BUILD_DIR": str(tmp_path)})


def test_test_programs_are_searched_in_the_build_tree(tmp_path: Path) -> None:
    prog = _make(tmp_path / "tests/fault_injection_test")
    _make(tmp_path / "CMakeFiles/x.dir/fault_injection_test")  # CMake internals are skipped
    env = {"IORELAY_BUILD_DIR": str(tmp_path)}
    assert paths.find("fault_injection_test", environ=env) == prog


def test_installed_prefix(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    daemon = _make(prefix / "bin/iorelayd")
    preload = _make(prefix / "lib/libiorelay_preload.so", executable=False)
    env = {"PATH": os.pathsep.join([str(prefix / "bin"), "/nonexistent"])}
    empty_repo = tmp_path / "repo"
    assert paths.find("iorelayd", environ=env, repo_root=empty_repo) == daemon
    assert paths.find("libiorelay_preload.so", environ=env, repo_root=empty_repo) == preload
