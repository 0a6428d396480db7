"""Slurm node lists ("n[01-03,7],login", "n[1-2]-ib[3-4]") as host names, for `iorelay run` in
an allocation. `scontrol show hostnames` is the definition and is asked when Slurm is installed;
where it is not (or cannot run), `parse_hostlist` reads the same syntax as Slurm's hostlist.c.
"""

from __future__ import annotations

import re
import shutil
import subprocess

SEPARATORS = ", \t"  # between host expressions, outside brackets (as hostlist_create)
MAX_HOSTS = 1 << 20  # a list that expands to more is a typo, not an allocation
SCONTROL_TIMEOUT_S = 30.0
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")


class NodeListError(ValueError):
    """Not a Slurm node list; the message quotes the part at fault."""


def expand_nodelist(text: str, scontrol: str | None = "scontrol") -> list[str]:
    """Host names of a Slurm node list, in Slurm's order: from `scontrol show hostnames` when
    `scontrol` (a command name or path; None: never) runs here, else from `parse_hostlist`."""
    exe = shutil.which(scontrol) if scontrol else None
    if exe and text.strip(" \t,"):
        try:
            return scontrol_hostnames(text, exe)
        except NodeListError:
            pass  # e.g. installed without a slurm.conf: the parser gives Slurm's answer too
    return parse_hostlist(text)


def scontrol_hostnames(text: str, scontrol: str = "scontrol") -> list[str]:
    """`scontrol show hostnames TEXT`, one host per line; NodeListError if it fails."""
    try:
        proc = subprocess.run(
            [scontrol, "show", "hostnames", text],
            capture_output=True,
            text=True,
            timeout=SCONTROL_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NodeListError(f"{scontrol} show hostnames {text!r}: {e}") from e
    hosts = proc.stdout.split()
    # An invalid list gives status 0, nothing on stdout and "Invalid hostlist: ..." on stderr.
    if proc.returncode != 0 or (not hosts and proc.stderr.strip()):
        why = proc.stderr.strip() or f"status {proc.returncode}"
        raise NodeListError(f"{scontrol} show hostnames {text!r}: {why}")
    return hosts


def parse_hostlist(text: str) -> list[str]:
    """The host names of a Slurm host list, without Slurm: expressions separated by commas,
    spaces or tabs outside brackets; in each, bracket groups of numbers and ranges ("[01-03,7]",
    zero-padded to the width of the range's first number), any number of groups, the last one at
    the end. Groups expand in hostlist.c's order: the last group fastest, then the others from
    the first to the last but one (two groups: "n[1-2]-ib[3-4]" gives n1-ib3 n1-ib4 n2-ib3
    n2-ib4). NodeListError for what Slurm refuses (an unclosed bracket, text after the last
    group, a range running backwards)."""
    hosts: list[str] = []
    for expression in _expressions(text):
        hosts += _expand(expression)
        if len(hosts) > MAX_HOSTS:
            raise NodeListError(f"node list {text!r} expands to more than {MAX_HOSTS} hosts")
    return hosts


def _expressions(text: str) -> list[str]:
    """`text` split at separators outside brackets, empty pieces dropped."""
    pieces, current, depth = [], "", 0
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch in SEPARATORS and depth <= 0:
            pieces.append(current)
            current = ""
        else:
            current += ch
    return [p for p in [*pieces, current] if p]


def _expand(expression: str) -> list[str]:
    """One host expression: its last bracket group must end it (hostlist.c refuses a suffix)."""
    open_at = expression.rfind("[")
    if open_at < 0:
        return [_plain(expression, expression)]
    if not expression.endswith("]") or expression.find("]", open_at) != len(expression) - 1:
        raise NodeListError(f"host expression {expression!r}: must end with its last bracket group")
    numbers = _group(expression[open_at + 1 : -1], expression)
    return _with_prefix(expression[:open_at], numbers, expression)


def _with_prefix(prefix: str, numbers: list[str], expression: str) -> list[str]:
    """Every `prefix` (whose bracket groups expand, the last one outermost) followed by each of
    `numbers`, in hostlist.c's order (_push_range_list)."""
    open_at = prefix.rfind("[")
    if open_at < 0:
        return [_plain(prefix, expression) + n for n in numbers]
    close_at = prefix.find("]", open_at)
    if close_at < 0:
        raise NodeListError(f"host expression {expression!r}: '[' without ']'")
    head, tail = prefix[:open_at], prefix[close_at + 1 :]
    hosts: list[str] = []
    for value in _group(prefix[open_at + 1 : close_at], expression):
        hosts += _with_prefix(head + value + tail, numbers, expression)
        if len(hosts) > MAX_HOSTS:  # (groups multiply: stop before a typo fills the memory)
            raise NodeListError(f"host expression {expression!r}: more than {MAX_HOSTS} hosts")
    return hosts


def _group(body: str, expression: str) -> list[str]:
    """The numbers of one bracket group ("01-03,7" → 01 02 03 7)."""
    numbers: list[str] = []
    for item in body.split(","):
        m = _RANGE.fullmatch(item)
        if m is None:
            raise NodeListError(f"host expression {expression!r}: {item!r} is not N or N-M")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if lo > hi or hi - lo >= MAX_HOSTS:
            raise NodeListError(f"host expression {expression!r}: range {item!r}")
        width = len(m.group(1))
        numbers += [f"{i:0{width}d}" for i in range(lo, hi + 1)]
    return numbers


def _plain(text: str, expression: str) -> str:
    if "]" in text or "[" in text:
        raise NodeListError(f"host expression {expression!r}: unbalanced brackets")
    return text
