"""`iorelay simulate`: runs on a simulated machine (SimGrid), with the daemon's own schedulers,
dispatch core and placement policies.

`iorelay simulate run` is one run of an iorelay-bench pattern through the C++ tool iorelay-sim;
the result is its JSON (docs/simulator.md). `iorelay simulate replay TRACE` replays an iorelayd
request trace (`iorelayd --trace`) closed-loop through one simulated I/O node and reports which
of the daemon's dispatches the simulator made identically.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from iorelay import paths
from iorelay.tools import run_json_tool

TOOL = "iorelay-sim"
TOOL_TIMEOUT_S = 3600.0
PLATFORMS_DIR = paths.REPO_ROOT / "platforms"
# Pattern options passed to iorelay-sim only when given (the tool has the defaults).
PATTERN_FLAGS = (
    "layout",
    "spatiality",
    "operation",
    "request",
    "block",
    "segments",
    "total",
    "stonewall",
    "mdtest",
    "mdtest_bytes",
)


class SimulateError(RuntimeError):
    """iorelay-sim refused its input, failed, or printed something that is not its JSON."""


def platform_path(name_or_path: str, platforms_dir: Path = PLATFORMS_DIR) -> Path:
    """A platform file: an existing path as given, else platforms/NAME.json."""
    given = Path(name_or_path)
    if given.exists():
        return given
    named = platforms_dir / f"{name_or_path}.json"
    if named.exists():
        return named
    known = sorted(p.stem for p in platforms_dir.glob("*.json"))
    raise SimulateError(f"no platform '{name_or_path}' (known: {', '.join(known)}, or a path)")


def apply_settings(platform: dict[str, Any], settings: list[str]) -> dict[str, Any]:
    """A copy of a platform document with each SECTION.KEY=VALUE of `settings` set in it (the
    section made if missing). A value that reads as JSON (8, 0.1, true) is set as that, anything
    else as a string ("5GBps"); iorelay-sim checks the result."""
    out = json.loads(json.dumps(platform))
    for setting in settings:
        key, sep, value = setting.partition("=")
        section, dot, name = key.partition(".")
        if not sep or not dot or not section or not name:
            raise SimulateError(f"--set '{setting}': want SECTION.KEY=VALUE, e.g. ionode.slots=8")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out.setdefault(section, {})[name] = parsed
    return out


def tool_args(args: argparse.Namespace) -> list[str]:
    """The iorelay-sim command line for parsed `iorelay simulate run` arguments."""
    out = ["--platform", str(platform_path(args.platform))]
    for flag in PATTERN_FLAGS:
        value = getattr(args, flag)
        if value is not None:
            out += [f"--{flag.replace('_', '-')}", str(value)]
    for flag in ("odirect", "wearout", "mdtest_shared_dir"):
        if getattr(args, flag, False):
            out.append(f"--{flag.replace('_', '-')}")
    out += ["--ranks", str(args.ranks), "--nodes", str(args.nodes)]
    out += ["--ionodes", str(args.ionodes), "--scheduler", args.scheduler]
    out += ["--placement", args.placement, "--seed", str(args.seed), "--issuer", args.issuer]
    return out


def replay_args(args: argparse.Namespace) -> list[str]:
    """The iorelay-sim command line for parsed `iorelay simulate replay` arguments."""
    traces = args.trace if isinstance(args.trace, list) else [args.trace]
    out = ["--platform", str(platform_path(args.platform))]
    out += ["--replay", ",".join(str(t) for t in traces)]
    out += ["--scheduler", args.scheduler, "--seed", str(args.seed)]
    if args.list_dispatches:
        out.append("--list-dispatches")
    return out


def run_tool(argv: list[str], timeout_s: float = TOOL_TIMEOUT_S) -> dict[str, Any]:
    """Runs `iorelay-sim ARGV` and returns its JSON result."""
    return run_json_tool([str(paths.find(TOOL)), *argv], error=SimulateError, timeout_s=timeout_s)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "simulate",
        help="simulate runs on a machine described in a platform file (SimGrid)",
        description=(
            "Simulate iorelay on a machine you do not have: the daemon's schedulers, dispatch "
            "core and placement policies on SimGrid (docs/simulator.md)."
        ),
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser("run", help="one run of an iorelay-bench pattern; JSON on stdout")
    r.add_argument("--platform", required=True, help="platforms/NAME.json by NAME, or a path")
    r.add_argument("--layout", choices=("fpp", "shared"))
    r.add_argument("--spatiality", choices=("contiguous", "strided"))
    r.add_argument("--operation", choices=("write", "read"))
    r.add_argument("--request", help="bytes per request, e.g. 1M")
    r.add_argument("--block", help="contiguous bytes per rank")
    r.add_argument("--segments", type=int, help="strided segments")
    r.add_argument("--total", help="bytes of all ranks together")
    r.add_argument("--stonewall", type=float, help="simulated seconds after which ranks stop")
    r.add_argument(
        "--wearout",
        action="store_true",
        help="after the stonewall, every rank catches up with the one that did most requests",
    )
    r.add_argument("--odirect", action="store_true")
    r.add_argument(
        "--mdtest",
        type=int,
        metavar="N",
        help="instead of the pattern, mdtest's phases: each rank creates, stats, reads and "
        "removes N files (needs the platform's storage.metadata_service)",
    )
    r.add_argument("--mdtest-bytes", help="with --mdtest: bytes written and read per file")
    r.add_argument(
        "--mdtest-shared-dir",
        action="store_true",
        help="with --mdtest: every rank's files in one directory (default: one per rank)",
    )
    r.add_argument("--ranks", type=int, default=1)
    r.add_argument("--nodes", type=int, default=1)
    r.add_argument("--ionodes", type=int, default=0, help="0: direct access to the storage")
    r.add_argument("--scheduler", default="fifo", help="scheduler spec, e.g. aioli:quantum=64KiB")
    r.add_argument("--placement", default="block", help="compute node to I/O node policy")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument(
        "--issuer",
        choices=("rank", "node", "node-aggregate"),
        default="rank",
        help="an actor per rank, or per node (one request message at a time, or aggregated)",
    )
    r.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="change one platform value for this run, e.g. storage.channels=4 (repeatable)",
    )
    r.set_defaults(func=run)

    rp = actions.add_parser(
        "replay",
        help="replay iorelayd traces closed-loop, one simulated I/O node per trace; JSON on stdout",
        description=(
            "Replay the data requests of iorelayd --trace files (format version 2): each "
            "session is one client issuing its requests in recorded order, the next when the "
            "previous one completed, through the I/O node of its daemon's trace (one per "
            "TRACE, each running SCHEDULER; several traces must come from one host's clock). "
            "The result includes identical_dispatch_share, the fraction of the daemons' "
            "dispatches the simulator made with the same requests."
        ),
    )
    rp.add_argument("trace", nargs="+", help="the trace file(s), one per daemon")
    rp.add_argument("--scheduler", default="fifo", help="scheduler spec, e.g. to-agg")
    rp.add_argument(
        "--platform", default="local", help="platforms/NAME.json by NAME, or a path (local)"
    )
    rp.add_argument("--seed", type=int, default=1)
    rp.add_argument(
        "--list-dispatches",
        action="store_true",
        help="include the simulated dispatches as [session, index] pairs",
    )
    rp.set_defaults(func=replay)


def _failed(error: Exception) -> int:
    print(f"iorelay simulate: {error}", file=sys.stderr)
    return 2


def _print_result(argv: list[str], shown_platform: str | None = None) -> int:
    """Runs iorelay-sim with `argv` and prints its JSON; 2 with the tool's error. An error that
    names the platform file names `shown_platform` instead when given (a temporary copy)."""
    try:
        result = run_tool(argv)
    except SimulateError as e:
        message = str(e)
        if shown_platform is not None:
            message = message.replace(argv[argv.index("--platform") + 1], shown_platform)
        return _failed(SimulateError(message))
    print(json.dumps(result, indent=1))
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        argv = tool_args(args)
        if not args.set:
            return _print_result(argv)
        doc = json.loads(platform_path(args.platform).read_text())
        platform = apply_settings(doc, args.set)
    except (SimulateError, json.JSONDecodeError, OSError) as e:
        return _failed(e)
    with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="iorelay-platform-") as f:
        json.dump(platform, f)
        f.flush()
        shown = f"{args.platform} with --set {' '.join(args.set)}"
        argv[argv.index("--platform") + 1] = f.name
        return _print_result(argv, shown)


def replay(args: argparse.Namespace) -> int:
    try:
        argv = replay_args(args)
    except SimulateError as e:
        return _failed(e)
    return _print_result(argv)
