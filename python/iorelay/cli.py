"""The `iorelay` command: one subcommand per module, listed here explicitly."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from iorelay import (
    __version__,
    calibrate,
    credential,
    demo,
    exec_cmd,
    explore,
    paths,
    place,
    simulate,
    stats,
    testbed,
)
from iorelay import run as run_cmd
from iorelay.analysis import cli as analyze
from iorelay.daemons import DaemonError

# Each module contributes add_parser(subparsers) and a run(args) -> exit status.
SUBCOMMANDS = (
    run_cmd,
    exec_cmd,
    explore,
    analyze,
    place,
    simulate,
    calibrate,
    stats,
    credential,
    demo,
    testbed,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="iorelay",
        description="User-space I/O forwarding for HPC: run, inspect and demonstrate iorelay.",
    )
    parser.add_argument("--version", action="version", version=f"iorelay {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (paths.NotBuiltError, stats.StatsError, DaemonError) as e:
        print(f"iorelay {args.command}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
