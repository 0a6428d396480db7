"""`iorelay exec -- PROGRAM...`: the launcher-side half of `iorelay run`, for each MPI rank.

mpirun starts `iorelay exec -- ./app` on every node; this sets the interposer's variables from
the IORELAY_* variables mpirun carried (-x) or from the run file that `iorelay run` wrote
(IORELAY_RUN_FILE; only the keys it owns, python/iorelay/run_file.py), puts this installation's
interposer in LD_PRELOAD, then replaces itself with the program. With neither (direct access),
the program runs unchanged. Light on imports: it runs once per rank.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

from iorelay.run_file import RUN_FILE_ENV, RunFileError, read_run_file

PRELOAD_ENV = "IORELAY_PRELOAD"
PRELOAD_NAME = "libiorelay_preload.so"


class ExecError(RuntimeError):
    """The run file is unreadable, or the interposer cannot be found."""


def exec_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The program's environment: `environ`, completed from the run file, with LD_PRELOAD.

    Variables already set (carried by mpirun -x) win over the run file's. The interposer is
    IORELAY_PRELOAD of `environ` (set by `iorelay run` or carried by the launcher), else this
    installation's: never a path from the run file.
    """
    env = dict(environ)
    run_file_path = env.get(RUN_FILE_ENV)
    if run_file_path:
        try:
            run_file = read_run_file(run_file_path)
        except RunFileError as e:
            raise ExecError(f"{RUN_FILE_ENV}={run_file_path}: {e}") from e
        if run_file.ignored_keys:
            print(
                f"iorelay exec: {run_file_path}: ignoring variables the run file may not set: "
                + ", ".join(run_file.ignored_keys),
                file=sys.stderr,
            )
        for key, value in run_file.env.items():
            env.setdefault(key, value)
        node_id = _node_id(run_file.node_ids, env)
        if node_id is not None:
            env.setdefault("IORELAY_NODE_ID", str(node_id))
    if not env.get("IORELAY_SERVERS"):
        return env  # direct access
    preload = environ.get(PRELOAD_ENV)
    if not preload:
        from iorelay import paths  # only when needed: the import searches the build tree

        try:
            preload = str(paths.find(PRELOAD_NAME))
        except paths.NotBuiltError as e:
            raise ExecError(str(e)) from e
    loaded = env.get("LD_PRELOAD", "").split()
    if preload not in loaded:
        env["LD_PRELOAD"] = " ".join([preload, *loaded])
    return env


def _node_id(node_ids: Mapping[str, int], env: Mapping[str, str]) -> int | None:
    """This host's index among the run's compute hosts (the run file's node_ids), by Slurm's
    node name, else the host name, else its first label; None if it is not listed."""
    if not node_ids:
        return None
    import socket  # only here: this module keeps its imports light

    host = socket.gethostname()
    for name in (env.get("SLURMD_NODENAME"), host, host.split(".")[0]):
        if name and name in node_ids:
            return node_ids[name]
    return None


def exec_program(program: Sequence[str], environ: Mapping[str, str] | None = None) -> int:
    """Replaces this process with `program`; returns only on failure (127 or 126)."""
    env = exec_env(os.environ if environ is None else environ)
    try:
        os.execvpe(program[0], list(program), env)
    except FileNotFoundError:
        print(f"iorelay exec: {program[0]}: not found", file=sys.stderr)
        return 127
    except OSError as e:
        print(f"iorelay exec: {program[0]}: {e}", file=sys.stderr)
        return 126
    return 126  # not reached


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "exec",
        help="run PROGRAM with the interposer (under mpirun)",
        description="Set LD_PRELOAD and the interposer variables from IORELAY_* or "
        "IORELAY_RUN_FILE, then exec PROGRAM: `mpirun ... iorelay exec -- ./app`.",
        epilog="The interposer's variables, their values and defaults: `iorelay-ctl env` "
        '(docs/interposer.md, "Environment").',
    )
    p.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS...")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    program = list(args.program)
    if program[:1] == ["--"]:
        program = program[1:]
    if not program:
        print("iorelay exec: no program given (iorelay exec -- PROGRAM...)", file=sys.stderr)
        return 2
    try:
        return exec_program(program)
    except ExecError as e:
        print(f"iorelay exec: {e}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m iorelay.exec_cmd -- PROGRAM...`: the same without loading the whole CLI."""
    parser = argparse.ArgumentParser(prog="iorelay exec")
    parser.add_argument("program", nargs=argparse.REMAINDER)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
