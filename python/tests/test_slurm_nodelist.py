"""Slurm node lists as host names: the parser against the answers `scontrol show hostnames` gives
(and scontrol itself, where Slurm is installed), and expand_nodelist's choice between them."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

import pytest

from iorelay.slurm_nodelist import (
    NodeListError,
    expand_nodelist,
    parse_hostlist,
    scontrol_hostnames,
)

# (node list, what `scontrol show hostnames` of Slurm 22.05 prints). Several bracket groups
# expand as Slurm's hostlist.c does: the last group fastest, then the first, ... (for three groups
# the middle one is outermost).
SCONTROL_ANSWERS = [
    ("n[01-03,7],login,x[9]", ["n01", "n02", "n03", "n7", "login", "x9"]),
    ("n[1-2]-ib[3-4]", ["n1-ib3", "n1-ib4", "n2-ib3", "n2-ib4"]),  # the old parser's bug
    ("gpu[1,3]-[0-1]", ["gpu1-0", "gpu1-1", "gpu3-0", "gpu3-1"]),
    ("r[1-2]n[1-2]s[1-2]",
     ["r1n1s1", "r1n1s2", "r2n1s1", "r2n1s2", "r1n2s1", "r1n2s2", "r2n2s1", "r2n2s2"]),
    ("c[8-10],d[08-10],e[098-100]",
     ["c8", "c9", "c10", "d08", "d09", "d10", "e098", "e099", "e100"]),
    ("io-node-1 io-node-2\tcn[5]", ["io-node-1", "io-node-2", "cn5"]),
    ("a[3,1-2],a1", ["a3", "a1", "a2", "a1"]),  # Slurm's order, duplicates kept
    ("", []),
]  # fmt: skip
REFUSED = ["n[1-2]x", "n[1-", "n[2-1]", "n[]", "n[a-b]", "n]1[", "n[1-2]]"]


@pytest.mark.parametrize(("nodelist", "hosts"), SCONTROL_ANSWERS)
def test_parser_gives_what_scontrol_gives(nodelist: str, hosts: list[str]) -> None:
    assert parse_hostlist(nodelist) == hosts


@pytest.mark.parametrize("nodelist", REFUSED)
def test_parser_refuses_what_slurm_refuses(nodelist: str) -> None:
    with pytest.raises(NodeListError, match="host expression"):
        parse_hostlist(nodelist)


def test_parser_refuses_a_list_of_millions() -> None:
    with pytest.raises(NodeListError, match="more than"):
        parse_hostlist("n[0-999999],m[0-999999]")
    with pytest.raises(NodeListError, match="more than"):
        parse_hostlist("a[0-999]b[0-999]c[0-999]")  # a billion, refused after a million


@functools.cache
def _scontrol_here() -> tuple[str | None, str]:
    """scontrol's path if it can expand a list here, else None and why (asked once)."""
    exe = shutil.which("scontrol")
    if exe is None:
        return None, "scontrol is not installed (no Slurm): the parser stands in for it"
    try:
        probe = subprocess.run([exe, "show", "hostnames", "n[1-2]"], capture_output=True,
                               text=True, timeout=10, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:  # e.g. a SLURM_CONF naming a file that is gone
        return None, "scontrol did not answer within 10 s here"
    if probe.returncode != 0:
        return None, f"scontrol cannot expand a node list here: {probe.stderr.strip()}"
    return exe, ""


def _working_scontrol() -> str:
    """scontrol's path, or skip: absent, or present but unable to expand a list here."""
    exe, why = _scontrol_here()
    if exe is None:
        pytest.skip(why)
    return exe


@pytest.mark.parametrize(("nodelist", "hosts"), [c for c in SCONTROL_ANSWERS if c[0]])
def test_scontrol_gives_these_answers(nodelist: str, hosts: list[str]) -> None:
    assert scontrol_hostnames(nodelist, _working_scontrol()) == hosts


def _fake_scontrol(tmp_path: Path, script: str) -> str:
    path = tmp_path / "scontrol"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)
    return str(path)


def test_expand_asks_scontrol_when_it_runs(tmp_path: Path) -> None:
    fake = _fake_scontrol(tmp_path, 'echo "$1 $2"; echo "$3"')  # not the parser's answer
    assert expand_nodelist("n[1-2]", scontrol=fake) == ["show", "hostnames", "n[1-2]"]


def test_an_invalid_list_is_an_error_though_scontrol_exits_0(tmp_path: Path) -> None:
    fake = _fake_scontrol(tmp_path, 'echo "Invalid hostlist: $3" >&2')  # what scontrol does
    with pytest.raises(NodeListError, match="Invalid hostlist: n"):
        scontrol_hostnames("n[1-2]x", fake)


def test_expand_falls_back_to_the_parser_when_scontrol_fails_or_is_absent(tmp_path: Path) -> None:
    broken = _fake_scontrol(tmp_path, "echo 'no slurm.conf' >&2; exit 1")
    assert expand_nodelist("n[1-2]-ib[3]", scontrol=broken) == ["n1-ib3", "n2-ib3"]
    assert expand_nodelist("n[1-2]", scontrol=str(tmp_path / "absent")) == ["n1", "n2"]
    assert expand_nodelist("n[1-2]", scontrol=None) == ["n1", "n2"]
    with pytest.raises(NodeListError, match=r"scontrol show hostnames 'n1': no slurm\.conf"):
        scontrol_hostnames("n1", broken)
