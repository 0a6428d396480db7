"""The `iorelay` command: one subcommand per module, listed here explicitly."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from iorelay import (
    __version__,
    calibrate_cmd,
    credential,
    demo,
    exec_cmd,
    explore,
    hints_cmd,
    ionode,
    paths,
    place,
    simulate,
    stats,
)
from iorelay import run as run_cmd
from iorelay.advise import cli as advise
from iorelay.analysis import cli as analyze
from iorelay.launch.local import DaemonError
from iorelay.pool import cli as pool
from iorelay.testbed import cluster as testbed

# Each module contributes add_parser(subparsers) and a run(args) -> exit status.
SUBCOMMANDS = (
    run_cmd,
    exec_cmd,
    explore,
    analyze,
    place,
    simulate,
    calibrate_cmd,
    advise,
    hints_cmd,
    stats,
    ionode,
    pool,
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


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a batch system's cancel or time limit, a closed terminal), raised where
    the command is, so that it cleans up as after Ctrl-C: the application's process group
    stopped, the daemons stopped, temporary directories removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_terminated(signum: int, _frame: object) -> None:
    for s in (signal.SIGTERM, signal.SIGHUP):  # a second one ends the process at once
        signal.signal(s, signal.SIG_DFL)
    raise Terminated(signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    previous = {s: signal.signal(s, _raise_terminated) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return args.func(args)
    except (paths.NotBuiltError, stats.StatsError, DaemonError) as e:
        print(f"iorelay {args.command}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        return 128 + getattr(e, "signum", signal.SIGINT)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


if __name__ == "__main__":
    sys.exit(main())
