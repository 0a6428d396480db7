"""Finds iorelay's built programs and libraries, in a build tree or in an installed prefix.

Search order for a name: $IORELAY_BUILD_DIR (only there, when set), then <repo>/build next to
this package's source, then an installed prefix (executables on PATH, libraries in ../lib*).
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from collections.abc import Mapping
from pathlib import Path

# Repository root when running from a source checkout (python/iorelay/paths.py -> repo).
REPO_ROOT = Path(__file__).resolve().parents[2]

BUILD_DIR_ENV = "IORELAY_BUILD_DIR"

# Where CMake puts each artifact, relative to the build directory.
BUILD_LAYOUT: dict[str, str] = {
    "iorelayd": "src/iorelayd/iorelayd",
    "iorelay-ctl": "src/client/iorelay-ctl",
    "iorelay-place": "src/placement/iorelay-place",
    "iorelay-aggregators": "src/collective/iorelay-aggregators",
    "iorelay-bench": "tools/iorelay-bench/iorelay-bench",
    "iorelay-bench-mpich": "tools/iorelay-bench/iorelay-bench-mpich",
    "iorelay-sim": "src/sim/iorelay-sim",
    "iorelay-sim-joint": "src/sim/iorelay-sim-joint",
    "libiorelay.so": "src/client/libiorelay.so",
    "libiorelay_preload.so": "src/preload/libiorelay_preload.so",
}


class NotBuiltError(FileNotFoundError):
    """A program or library iorelay needs was not found; the message says where we looked."""


def _is_library(name: str) -> bool:
    return name.endswith(".so") or ".so." in name


def build_dir(environ: Mapping[str, str] | None = None, repo_root: Path = REPO_ROOT) -> Path:
    """The build directory in use: $IORELAY_BUILD_DIR if set, else <repo>/build."""
    env = os.environ if environ is None else environ
    explicit = env.get(BUILD_DIR_ENV)
    return Path(explicit) if explicit else repo_root / "build"


def _usable(path: Path, name: str) -> bool:
    if not path.is_file():
        return False
    return _is_library(name) or os.access(path, os.X_OK)


def _in_build_dir(name: str, root: Path) -> list[Path]:
    """Candidates inside one build directory: the known layout, else a search (test programs)."""
    if name in BUILD_LAYOUT:
        return [root / BUILD_LAYOUT[name]]
    if not root.is_dir():
        return [root / name]
    found = sorted(p for p in root.rglob(name) if "CMakeFiles" not in p.parts and _usable(p, name))
    return found or [root / "**" / name]


def _in_prefix(name: str, search_path: str | None) -> list[Path]:
    """Candidates in an installed prefix: the program on PATH, or a library beside it."""
    if not _is_library(name):
        hit = shutil.which(name, path=search_path)
        return [Path(hit)] if hit else []
    daemon = shutil.which("iorelayd", path=search_path)
    if not daemon:
        return []
    prefix = Path(daemon).resolve().parent.parent
    libdirs = ["lib", "lib64"]
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        libdirs.append(f"lib/{multiarch}")
    return [prefix / d / name for d in libdirs]


def find(
    name: str, *, environ: Mapping[str, str] | None = None, repo_root: Path = REPO_ROOT
) -> Path:
    """Absolute path of a built program or library, e.g. find("iorelayd").

    Raises NotBuiltError, naming every place searched and how to build, if it is nowhere.
    """
    env = os.environ if environ is None else environ
    looked: list[Path] = []
    explicit = env.get(BUILD_DIR_ENV)
    if explicit:
        looked += _in_build_dir(name, Path(explicit))
    else:
        looked += _in_build_dir(name, repo_root / "build")
        looked += _in_prefix(name, env.get("PATH"))
    for path in looked:
        if _usable(path, name):
            return path.resolve()
    where = "\n".join(f"  {p}" for p in looked)
    if explicit:
        hint = f"{BUILD_DIR_ENV}={explicit} is set, so only that build directory was searched."
    else:
        hint = f"Not on PATH either. Set {BUILD_DIR_ENV} to use another CMake build directory."
    raise NotBuiltError(
        f"{name} not found; looked in:\n{where or '  (nowhere: empty PATH)'}\n"
        f"{hint}\nBuild it with `make build` (or cmake --build) in the repository root."
    )
