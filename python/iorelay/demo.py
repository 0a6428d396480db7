"""`iorelay demo`: shows iorelay end to end on one machine, and checks that it worked.

Starts two local I/O-node daemons, runs fio through the interposer with crc32c verification,
checks that the data landed in the daemons' export root, and prints what each daemon carried in
one line (the full table is `iorelay stats`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from iorelay import paths
from iorelay.credential import create_credential
from iorelay.launch.local import DaemonError, LocalDaemons
from iorelay.stats import StatsError, query_stats

FIO_TIMEOUT_S = 300.0
FILE_SIZE_BYTES = 4 * 1024 * 1024
BLOCK_SIZE_BYTES = 64 * 1024


@dataclass(frozen=True)
class FioJob:
    name: str
    rw: str
    direct: bool


JOBS = (
    FioJob("seq-buffered", "write", direct=False),
    FioJob("seq-direct", "write", direct=True),
    FioJob("rand-buffered", "randwrite", direct=False),
)


class DemoError(RuntimeError):
    """A step of the demo failed; the message says which and why."""


def fio_job_file(directory: str) -> str:
    """The fio job: each job writes its own file, reads it back and checks every block."""
    lines = [
        "; iorelay demo: verified writes through the interposer",
        "[global]",
        "ioengine=psync",
        f"directory={directory}",
        f"size={FILE_SIZE_BYTES}",
        f"bs={BLOCK_SIZE_BYTES}",
        "verify=crc32c",
        "do_verify=1",
        "verify_fatal=1",
        "end_fsync=1",
    ]
    for job in JOBS:
        lines += ["", f"[{job.name}]", f"rw={job.rw}", f"direct={int(job.direct)}"]
    return "\n".join(lines) + "\n"


def _disk_backed_base(console: Console, base: Path) -> Path:
    """`base` unless it is a tmpfs (O_DIRECT would fail there); then /var/tmp."""
    fstype = ""
    best = ""
    target = str(base.resolve())
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            mnt = fields[1]
            if (target == mnt or target.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(
                best
            ):
                best, fstype = mnt, fields[2]
    if fstype in ("tmpfs", "ramfs"):
        console.print(f"{base} is a {fstype}; using /var/tmp so that O_DIRECT works")
        return Path("/var/tmp")
    return base


def _run_fio(fio: str, job_file: Path, output: Path, env: dict[str, str], cwd: Path) -> dict:
    cmd = [fio, "--output-format=json", f"--output={output}", str(job_file)]
    try:
        proc = subprocess.run(
            cmd,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=FIO_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        raise DemoError(f"fio did not finish within {FIO_TIMEOUT_S:g} s") from e
    if proc.returncode != 0:
        detail = (proc.stderr + proc.stdout).strip()
        if output.exists():
            detail += "\n" + output.read_text(errors="replace")[-3000:]
        raise DemoError(f"fio failed with status {proc.returncode}:\n{detail}")
    try:
        return json.loads(output.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise DemoError(f"fio's JSON report {output} is unreadable: {e}") from e


def _check_fio_report(report: dict) -> tuple[int, int]:
    """Total bytes written and read back; DemoError if any job reported an error."""
    written = read = 0
    for job in report.get("jobs", []):
        if job.get("error", 0) != 0:
            raise DemoError(f"fio job {job.get('jobname')} reported error {job['error']}")
        written += job.get("write", {}).get("io_bytes", 0)
        read += job.get("read", {}).get("io_bytes", 0)
    expected = FILE_SIZE_BYTES * len(JOBS)
    if written < expected or read < expected:
        raise DemoError(
            f"fio wrote {written} and verified {read} bytes; expected {expected} of each"
        )
    return written, read


def _check_files(root: Path, prefix: Path) -> None:
    """Nothing may have been written locally, and the data must be in the export root."""
    local = sorted(p for p in prefix.rglob("*") if p.is_file())
    if local:
        names = ", ".join(p.name for p in local)
        raise DemoError(f"fio's files were written locally in {prefix}, not forwarded: {names}")
    for job in JOBS:
        f = root / f"{job.name}.0.0"
        if not f.is_file() or f.stat().st_size != FILE_SIZE_BYTES:
            raise DemoError(f"{f} is missing or not {FILE_SIZE_BYTES} bytes")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n % (1 << 20) else f"{n >> 20} MiB"


def daemon_summary(address: str, stats: Mapping[str, Any]) -> str:
    """One line of what a daemon carried: requests, bytes, requests per dispatch (how many
    requests one backend call served), errors; connections it closed for protocol errors."""
    t = stats.get("total", {})
    dispatches = int(t.get("dispatches", 0))
    per_dispatch = (
        f"{float(t.get('mean_requests_per_dispatch', 0)):.2f} requests per dispatch"
        if dispatches
        else "no data dispatched"
    )
    line = (
        f"   {address}: {t.get('requests', 0)} requests, {_mib(int(t.get('bytes_written', 0)))} "
        f"written, {_mib(int(t.get('bytes_read', 0)))} read, {per_dispatch}, "
        f"{t.get('errors', 0)} errors, {t.get('existence_answers', 0)} existence answers"
    )
    refused = int(stats.get("connections_closed_protocol_error", 0))
    if refused:
        line += f"; {refused} connections closed for protocol errors (its log says why)"
    return line


def _moved_bytes(stats: Mapping[str, Any]) -> int:
    t = stats.get("total", {})
    return int(t.get("bytes_written", 0)) + int(t.get("bytes_read", 0))


def carried_story(daemons: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Per daemon (address, counters) one summary line, then why some carried nothing."""
    lines = [daemon_summary(address, stats) for address, stats in daemons]
    lines.append(
        "   Existence answers are ENOENT/EEXIST replies to fio's checks (stat and unlink of a "
        "file not there yet, mkdir of its directory): answers, not errors."
    )
    idle = [address for address, stats in daemons if not _moved_bytes(stats)]
    if idle and len(idle) < len(daemons):
        lines.append(
            f"   {', '.join(idle)} carried no data: placement is per node (block: node id = "
            "rank / ranks per node), and fio's jobs are one node here, so all its files go to "
            "one daemon; ranks on several nodes (iorelay run --ranks-per-node, or the testbed's "
            "hosts) spread over the daemons."
        )
    return "\n".join(lines)


def run_demo(console: Console, base: Path, count: int, transport: str, keep: bool) -> None:
    fio = shutil.which("fio")
    if fio is None:
        raise DemoError("fio is not installed (make deps installs it)")
    for name in ("iorelayd", "libiorelay_preload.so", "iorelay-ctl"):
        paths.find(name)
    work = Path(tempfile.mkdtemp(prefix="iorelay-demo-", dir=_disk_backed_base(console, base)))
    root, prefix, logs = work / "storage", work / "forwarded", work / "work"
    for d in (root, prefix, logs):
        d.mkdir()
    console.print(f"1. Working directory {work} (on disk; O_DIRECT needs a real file system).")
    console.print(f"   Storage the daemons export: {root}")
    console.print(f"   Path the application uses:  {prefix} (an empty local directory)")
    try:
        cred = create_credential(logs / "credential")
        console.print(
            f"2. Created a job credential {cred} (32 random bytes as 64 hex digits, mode 0600)."
        )
        with LocalDaemons(count, root, str(prefix), logs, credential_file=cred) as daemons:
            console.print(f"3. Started {count} I/O-node daemons (iorelayd) on this machine:")
            for d in daemons.daemons:
                console.print(f"   daemon {d.index} (pid {d.pid}): {', '.join(d.addresses)}")
            env = {**os.environ, **daemons.env(transport)}
            job_file = logs / "demo.fio"
            job_file.write_text(fio_job_file(str(prefix)))
            console.print(
                f"4. Running fio with LD_PRELOAD={env['LD_PRELOAD']}: {len(JOBS)} jobs "
                f"({', '.join(j.name for j in JOBS)}), {FILE_SIZE_BYTES >> 20} MiB each in "
                f"{BLOCK_SIZE_BYTES >> 10} KiB blocks, every block read back and crc32c-checked."
            )
            try:
                report = _run_fio(fio, job_file, logs / "fio.json", env, logs)
            except DemoError as e:
                raise DemoError(f"{e}\n{daemons.logs()}") from e
            written, read = _check_fio_report(report)
            console.print(
                f"5. fio succeeded: {written >> 20} MiB written and {read >> 20} MiB read back "
                "and verified, with no errors."
            )
            _check_files(root, prefix)
            console.print(f"6. The files are in {root}: the daemons did the I/O, not fio.")
            console.print(
                "7. What each daemon carried (all its counters: `iorelay stats ADDRESS` while it "
                "runs; with --keep, its last ones are in its log, work/dN.out):"
            )
            carried = [(a, query_stats(a, cred)) for a in daemons.addresses(transport)]
            console.print(carried_story(carried), highlight=False, soft_wrap=True)
        bad = [c for c in daemons.exit_codes if c not in (0, -signal.SIGTERM)]
        if bad:
            raise DemoError(f"daemons exited badly on SIGTERM: {daemons.exit_codes}")
        console.print("8. Stopped the daemons cleanly.")
    finally:
        if keep:
            console.print(f"Kept {work} (logs, fio report, data).")
        else:
            shutil.rmtree(work, ignore_errors=True)


OUT_DEFAULT = Path("results/demo-testbed")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "demo",
        help="run a verified fio workload through two local daemons",
        description="Start local iorelayd daemons, run fio through the interposer with "
        "verification, and show the daemons' counters. Exits non-zero on any failure.",
    )
    p.add_argument(
        "--daemons", type=_daemon_count, default=2, help="number of daemons, 1 to 64 (default 2)"
    )
    p.add_argument("--transport", choices=("tcp", "unix"), default="tcp")
    p.add_argument("--base-dir", type=Path, default=Path("/tmp"), help="where to make the temp dir")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (logs, data)")
    p.add_argument(
        "--testbed",
        action="store_true",
        help="instead: the exploration on the testbed (root; brings one up and down unless one "
        "is up), its report, and where forwarding wins (docs/testbed.md)",
    )
    p.add_argument("--out", type=Path, default=OUT_DEFAULT, help="with --testbed: results")
    p.set_defaults(func=run)


def _daemon_count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= 64:
        raise argparse.ArgumentTypeError(f"wants 1 to 64 daemons, got '{text}'")
    return n


def run(args: argparse.Namespace) -> int:
    console = Console()
    if not getattr(args, "testbed", False) and args.out != OUT_DEFAULT:
        console.print("[bold red]demo:[/] --out is for --testbed's results", markup=True)
        return 2
    if getattr(args, "testbed", False):
        from iorelay.testbed import demo as testbed_demo

        try:
            return testbed_demo.run_demo(args.out, console)
        except testbed_demo.DemoTestbedError as e:
            console.print(f"[bold red]demo failed:[/] {e}", markup=True, highlight=False)
            return 1
    if not args.base_dir.is_dir():
        message = f"--base-dir {args.base_dir}: no such directory"
        console.print(f"[bold red]demo:[/] {message}", markup=True, highlight=False)
        return 2
    try:
        run_demo(console, args.base_dir, args.daemons, args.transport, args.keep)
    except (DemoError, DaemonError, StatsError, paths.NotBuiltError) as e:
        console.print(f"[bold red]demo failed:[/] {e}", markup=True, highlight=False)
        return 1
    console.print("[bold green]demo passed.[/]")
    console.print(testbed_hint())
    return 0


def testbed_hint() -> str:
    """Where to see forwarding win: the testbed, if this machine can build one, else why not."""
    from iorelay.testbed.cluster import unmet_requirements

    why = unmet_requirements()
    lead = (
        "On one machine direct access usually wins: nothing stands between the processes and "
        "the storage. "
    )
    if not why:
        return lead + (
            "This machine can build the testbed, so `make demo` explores there (`make "
            "demo-testbed` alone): where forwarding wins across capped links to GlusterFS "
            "(docs/testbed.md)."
        )
    if os.geteuid() == 0 and Path("/dev/fuse").exists():
        return lead + (
            "This machine can build the testbed once its packages are installed, which `make "
            "demo` does (as `make testbed-deps`), then explores there: where forwarding wins "
            "across capped links to GlusterFS (docs/testbed.md)."
        )
    return lead + (
        "`make demo-testbed` runs the exploration on a cluster of network namespaces with "
        "capped links and GlusterFS, but not here: " + "; ".join(why) + "."
    )
