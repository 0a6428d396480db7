"""`iorelay run`: puts K I/O-node daemons between a command and the file system, for one run.

Starts the daemons (locally, or on the hosts of a host file / Slurm allocation that are this
machine), gives the command the interposer's environment, waits for it, prints the daemons'
counters and stops them. K = 0 runs the command unchanged (direct access). `--attach` uses
daemons that are already running. `start_relay` is the same machinery for `iorelay explore`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from iorelay import ionode, paths
from iorelay.advise import inputs as advise_inputs
from iorelay.app_guard import GuardedCommand
from iorelay.exec_cmd import PRELOAD_ENV
from iorelay.launch.local import DaemonError, LocalDaemons
from iorelay.launch.slurm import SlurmDaemons
from iorelay.launch.ssh import SshDaemons
from iorelay.run_file import RUN_FILE_ENV, RunFileError, write_run_file
from iorelay.slurm_nodelist import NodeListError, expand_nodelist
from iorelay.stats import StatsError, query_stats, render_stats

PLACEMENTS = ("block", "round-robin", "file-hash")


class RunError(RuntimeError):
    """The relay could not be set up as asked (bad host file, remote hosts, bad options)."""


@dataclass
class RelayConfig:
    """What `iorelay run` sets up. ionodes = 0 and no attach: direct access."""

    ionodes: int = 0
    scheduler: str = "fifo"
    placement: str = "block"
    ranks_per_node: int = 1
    root: Path | None = None  # exported root; default: WORKDIR/root
    prefix: str | None = None  # forwarded prefix; default: the root itself
    hosts: Sequence[str] = ()  # I/O-node hosts (from a host file or Slurm); empty: local
    attach: Sequence[str] = ()  # addresses of running daemons
    secret_file: Path | None = None  # with attach: their credential
    daemon_args: Sequence[str] = ()
    interface: str | None = None  # remote daemons: interface to bind (default: node_daemon's rule)
    compute_hosts: Sequence[str] = ()  # the ranks' hosts, in node-id order (Slurm: the rest)
    launcher: str = "auto"  # remote daemons: "slurm" steps (auto in an allocation) or "ssh"
    # One node-local relay (iorelayd --role relay) in front of the I/O nodes, merging the
    # node's requests before they cross the network; its scheduler.
    node_aggregation: bool = False
    # One request upstream at a time lets the relay's queue grow while it is out, and gather
    # holds the next one (up to 1 ms) for the ranks just answered, so that a node's ranks leave
    # together (docs/daemon.md, "Relay role": 15.9x fewer requests at the I/O node and 0.76x
    # the bandwidth here, against 8.7x and 0.69x with plain sjf).
    relay_scheduler: str = "sjf:gather=1ms"
    relay_workers: int = 1
    relay_args: Sequence[str] = ()  # more iorelayd options for the relay
    # How the ranks reach I/O-node daemons on this machine: "unix", a Unix socket that the
    # daemon moves to shared memory; or "tcp", loopback TCP (sealed), as if the I/O nodes were
    # other hosts. Daemons on other hosts are always reached over TCP, and so is the node
    # relay's upstream: it stands for the network between a compute node and its I/O node.
    local_transport: str = "unix"
    # The interposer's write-behind and read-ahead (IORELAY_WRITE_BEHIND, IORELAY_READ_AHEAD;
    # docs/interposer.md, "Write-behind and read-ahead"): off keeps write-through.
    write_behind: bool = False
    read_ahead: bool = False


@dataclass
class Relay:
    """A running relay (or direct access): what a command needs to use it."""

    config: RelayConfig
    workdir: Path
    root: Path
    prefix: str
    addresses: list[str] = field(default_factory=list)
    secret_file: Path | None = None
    preload: Path | None = None
    run_file: Path | None = None
    ionode_addresses: list[str] = field(default_factory=list)  # behind the relay, if any
    # Where the node relays' counters are read, when not at `addresses` (relays on other hosts
    # are reached by the ranks at one abstract Unix name, from here over TCP).
    relay_counter_addresses: list[str] = field(default_factory=list)
    daemon_exit_codes: list[int | None] = field(default_factory=list)  # set when they stopped

    @property
    def direct(self) -> bool:
        return not self.addresses

    def interposer_env(self) -> dict[str, str]:
        """IORELAY_* variables for the interposer (without LD_PRELOAD); {} for direct access."""
        if self.direct:
            return {}
        env = {
            "IORELAY_PREFIX": self.prefix,
            "IORELAY_SECRET_FILE": str(self.secret_file),
            "IORELAY_SERVERS": ",".join(self.addresses),
            "IORELAY_RANKS_PER_NODE": str(self.config.ranks_per_node),
            "IORELAY_PLACEMENT": self.config.placement,
        }
        if self.config.write_behind:
            env["IORELAY_WRITE_BEHIND"] = "on"
        if self.config.read_ahead:
            env["IORELAY_READ_AHEAD"] = "on"
        if self.preload is not None:
            env[PRELOAD_ENV] = str(self.preload)
        if self.run_file is not None:
            env[RUN_FILE_ENV] = str(self.run_file)
        return env

    def env(self, preload: bool = True) -> dict[str, str]:
        """Variables to merge into the command's environment; with `preload`, LD_PRELOAD too."""
        env = self.interposer_env()
        if env and preload and self.preload is not None:
            old = os.environ.get("LD_PRELOAD", "")
            env["LD_PRELOAD"] = f"{self.preload} {old}".strip()
        return env

    def stats(self) -> list[tuple[str, dict[str, Any] | str]]:
        """Each daemon's counters (or why they could not be fetched): relays, then I/O nodes."""
        out: list[tuple[str, dict[str, Any] | str]] = []
        relays = self.relay_counter_addresses or self.addresses
        for addr in [*relays, *self.ionode_addresses]:
            try:
                out.append((addr, query_stats(addr, self.secret_file)))
            except (StatsError, paths.NotBuiltError) as e:  # (the tool's reason, on one line)
                out.append((addr, " ".join(line.strip() for line in str(e).splitlines())))
        return out


# -- hosts ------------------------------------------------------------------------------------


def read_hostfile(path: str | os.PathLike[str]) -> list[str]:
    """Host names of an MPI-style host file: one host per line, `# comments`, `slots=N` ignored."""
    hosts = []
    for line in Path(path).read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            hosts.append(words[0])
    if not hosts:
        raise RunError(f"host file {path} lists no host")
    return hosts


def _allocation_hosts(nodelist: str) -> list[str]:
    """SLURM_JOB_NODELIST's hosts (slurm_nodelist); RunError if it is not a node list."""
    try:
        return expand_nodelist(nodelist)
    except NodeListError as e:
        raise RunError(f"SLURM_JOB_NODELIST: {e}") from e


def is_local_host(host: str) -> bool:
    """True if `host` is this machine: its name, or a name resolving only to local addresses."""
    if host in ("localhost", socket.gethostname(), socket.getfqdn()):
        return True
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
        return False
    local = {"127.0.0.1", "::1"}
    with contextlib.suppress(OSError):
        local |= {i[4][0] for i in socket.getaddrinfo(socket.gethostname(), None)}
    addrs = {i[4][0] for i in infos}
    return bool(addrs) and all(a in local or a.startswith("127.") for a in addrs)


def ionode_hosts(
    hostfile: str | None,
    ionodes: int | None,
    environ: dict[str, str],
    named: Sequence[str] = (),
) -> list[str]:
    """The hosts that run daemons: `named` (--ionode-hosts) if given; else the first K entries
    of the host file (or of Slurm's node list, as Slurm sorts it, when there is no host file
    and SLURM_JOB_NODELIST is set); all of them when K is None.
    """
    if named:
        if ionodes is not None and ionodes != len(named):
            raise RunError(f"--ionodes {ionodes} but --ionode-hosts names {len(named)} hosts")
        return list(named)
    if hostfile:
        hosts = read_hostfile(hostfile)
    elif environ.get("SLURM_JOB_NODELIST") and ionodes:
        hosts = _allocation_hosts(environ["SLURM_JOB_NODELIST"])
    else:
        return []
    k = len(hosts) if ionodes is None else ionodes
    if k > len(hosts):
        raise RunError(f"{k} I/O nodes asked, but only {len(hosts)} hosts are available")
    return hosts[:k]


def uses_remote_hosts(config: RelayConfig) -> bool:
    """True when daemons go to hosts that are not this machine (Slurm steps)."""
    return (
        config.ionodes > 0 and not config.attach and any(not is_local_host(h) for h in config.hosts)
    )


# -- the relay --------------------------------------------------------------------------------


def _write_run_file(relay: Relay) -> Path:
    """The run file `iorelay exec` reads on every rank: the interposer's variables and, when the
    compute hosts are known, each host's node id (its index among them) for placement."""
    path = relay.workdir / "run.json"
    env = relay.interposer_env()
    node_ids = {h: i for i, h in enumerate(relay.config.compute_hosts)}
    if node_ids:
        env["IORELAY_NODES"] = str(len(node_ids))
    try:
        write_run_file(path, env, node_ids)
    except (RunFileError, OSError) as e:
        raise RunError(str(e)) from e
    relay.run_file = path
    return path


@contextlib.contextmanager
def start_relay(config: RelayConfig, workdir: str | os.PathLike[str]) -> Iterator[Relay]:
    """Starts what `config` asks for, yields the Relay, and stops the daemons on exit."""
    work = Path(workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    root = Path(config.root).resolve() if config.root else work / "root"
    prefix = config.prefix or str(root)
    relay = Relay(config, work, root, prefix)
    if config.placement not in PLACEMENTS and not config.placement.startswith("map:"):
        raise RunError(f"unknown placement {config.placement!r}: {', '.join(PLACEMENTS)}, map:F")
    if config.attach:
        if config.node_aggregation:
            raise RunError("--node-aggregation starts its own daemons; it does not --attach")
        if config.secret_file is None:
            raise RunError("--attach needs --secret-file (the daemons' job credential)")
        if config.prefix is None:
            raise RunError("--attach needs --prefix (the path prefix the daemons export)")
        relay.addresses = list(config.attach)
        relay.secret_file = Path(config.secret_file).resolve()
        relay.preload = paths.find("libiorelay_preload.so")
        # A shared daemon may hold the job on a lease: renewed from here until the command ends.
        with ionode.LeaseKeeper(relay.addresses, relay.secret_file):
            for addr, answer in relay.stats():  # each answers, with this credential, or no run
                if isinstance(answer, str):
                    raise RunError(f"--attach {addr}: {answer}")
            _write_run_file(relay)
            yield relay
        return
    root.mkdir(parents=True, exist_ok=True)
    if config.ionodes < 0:
        raise RunError("--ionodes must be >= 0")
    if config.ionodes == 0:
        if config.node_aggregation:
            raise RunError("--node-aggregation needs I/O nodes (--ionodes K > 0)")
        yield relay
        return
    daemons: LocalDaemons | SlurmDaemons | SshDaemons
    if uses_remote_hosts(config) and config.node_aggregation and not config.compute_hosts:
        raise RunError(
            "--node-aggregation with I/O nodes on other hosts starts one relay per compute host, "
            "and there is none: the allocation's hosts that are not I/O nodes are the compute hosts"
        )
    if uses_remote_hosts(config):
        if config.launcher != "ssh" and not os.environ.get("SLURM_JOB_ID"):
            remote = sorted({h for h in config.hosts if not is_local_host(h)})
            raise RunError(
                f"hosts {', '.join(remote)} are not this machine and this is not a Slurm "
                "allocation: start the daemons over ssh with --launcher ssh"
            )
        launcher = SshDaemons if config.launcher == "ssh" else SlurmDaemons
        daemons = launcher(
            config.hosts,
            root,
            prefix,
            work / "daemons",
            scheduler=config.scheduler,
            extra_args=config.daemon_args,
            interface=config.interface,
        )
    else:
        if config.launcher != "auto":
            raise RunError(
                f"--launcher {config.launcher}: every I/O-node host is this machine (none from "
                "--hostfile, --ionode-hosts or a Slurm allocation), so the daemons would start "
                "here; leave --launcher out for that"
            )
        daemons = LocalDaemons(
            config.ionodes,
            root,
            prefix,
            work / "daemons",
            scheduler=config.scheduler,
            extra_args=config.daemon_args,
        )
    with daemons:
        local = isinstance(daemons, LocalDaemons)
        relay.addresses = daemons.addresses(config.local_transport if local else "tcp")
        relay.secret_file = daemons.credential_file
        relay.preload = paths.find("libiorelay_preload.so")
        if config.node_aggregation:
            name = _relay_name()
            node_relay = (
                _node_relay(config, relay, daemons)
                if local
                else _remote_node_relays(config, relay, daemons, name)
            )
            with node_relay:
                relay.ionode_addresses = daemons.addresses("tcp")
                if local:
                    relay.addresses = node_relay.addresses("unix")
                else:
                    relay.addresses = [name]
                    relay.relay_counter_addresses = node_relay.addresses("tcp")
                _write_run_file(relay)
                yield relay
            relay.daemon_exit_codes = list(node_relay.exit_codes)
        else:
            _write_run_file(relay)
            yield relay
    relay.daemon_exit_codes += daemons.exit_codes


def _relay_args(
    config: RelayConfig, daemons: LocalDaemons | SlurmDaemons | SshDaemons
) -> list[str]:
    """A node relay's options: its role, upstream requests at once, the I/O nodes over TCP."""
    upstream = [a for addr in daemons.addresses("tcp") for a in ("--upstream", addr)]
    return ["--role", "relay", "--workers", str(config.relay_workers), *upstream]


def _node_relay(
    config: RelayConfig, relay: Relay, daemons: LocalDaemons | SlurmDaemons | SshDaemons
) -> LocalDaemons:
    """One relay on this node in front of the I/O-node daemons (not started): the ranks talk to
    it over a Unix socket, it talks to them over TCP as their client, with the same credential.
    """
    return LocalDaemons(
        1,
        relay.prefix,  # a relay exports the prefix as the upstream path of the same name
        relay.prefix,
        relay.workdir / "relay",
        scheduler=config.relay_scheduler,
        extra_args=[*_relay_args(config, daemons), *config.relay_args],
        credential_file=daemons.credential_file,
    )


def _relay_name() -> str:
    """The abstract Unix socket every compute host's relay listens on: one name, and each host
    (network namespace) has its own, so a rank reaches the relay of the host it runs on."""
    job = os.environ.get("SLURM_JOB_ID", "nojob")
    return f"unix:@iorelay-relay-{job}-{secrets.token_hex(6)}"


def _remote_node_relays(
    config: RelayConfig,
    relay: Relay,
    daemons: LocalDaemons | SlurmDaemons | SshDaemons,
    name: str,
) -> SlurmDaemons | SshDaemons:
    """One relay per compute host (not started), launched as the I/O nodes' daemons were; the
    ranks reach theirs at `name` (and move to shared memory, as on one machine), the relays
    reach the I/O nodes over TCP with the job's credential and announce a TCP address, where
    the counters are read from here."""
    extra = [*_relay_args(config, daemons), "--listen", name, *config.relay_args]
    args = (config.compute_hosts, relay.prefix, relay.prefix, relay.workdir / "relays")
    kw = {"interface": config.interface, "credential_file": daemons.credential_file}
    if isinstance(daemons, SshDaemons):
        return SshDaemons(*args, config.relay_scheduler, extra, **kw)
    return SlurmDaemons(*args, config.relay_scheduler, extra, step_name="iorelay-relay", **kw)


# -- the command ------------------------------------------------------------------------------


def run_command(command: Sequence[str], env: dict[str, str], timeout_s: float | None = None) -> int:
    """Runs the command under app_guard, in its own session: Ctrl-C, SIGTERM or a timeout stop
    its whole tree, and so does the end of this process in any way, SIGKILL included."""
    with GuardedCommand(command, {**os.environ, **env}) as app:
        try:
            return app.wait(timeout_s)
        except (KeyboardInterrupt, subprocess.TimeoutExpired):
            app.stop(grace_s=5)
            raise


def print_stats(relay: Relay, console: Console) -> None:
    for addr, stats in relay.stats():
        if isinstance(stats, str):
            console.print(f"[yellow]{addr}: no statistics ({stats})[/yellow]")
        else:
            console.print(f"[bold]iorelayd {addr}[/bold]")
            render_stats(stats, console)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help="run a command through K I/O-node daemons",
        description="Start K iorelayd daemons, run COMMAND through the interposer, print the "
        "daemons' counters, stop them. K = 0: the command runs unchanged (direct access).",
    )
    p.add_argument(
        "--ionodes",
        type=ionodes_arg,
        default=None,
        help="I/O nodes (default 0, or all hosts); auto: as `iorelay advise` advises for the "
        "pattern given by --pattern, --trace or --darshan, from the results of --measured",
    )
    p.add_argument(
        "--measured",
        nargs="+",
        default=[],
        metavar="RESULTS",
        help="with --ionodes auto: the measured results advice is drawn from (explore results "
        "or FORGE CSV files or directories)",
    )
    advise_inputs.add_arguments(p, pattern_required=False)
    p.add_argument("--scheduler", default="fifo", help="scheduler at the I/O nodes (fifo)")
    p.add_argument(
        "--placement", default="block", help="client → I/O node placement: " + ", ".join(PLACEMENTS)
    )
    p.add_argument("--ranks-per-node", type=int, default=1, help="ranks per virtual node (1)")
    p.add_argument(
        "--node-aggregation",
        action="store_true",
        help="the ranks forward through a node-local relay that merges their requests",
    )
    p.add_argument(
        "--relay-scheduler",
        default=RelayConfig.relay_scheduler,
        help=f"the relay's scheduler ({RelayConfig.relay_scheduler})",
    )
    p.add_argument(
        "--relay-workers", type=int, default=1, help="the relay's requests to I/O nodes at once (1)"
    )
    p.add_argument(
        "--write-behind",
        action="store_true",
        help="buffered writes are coalesced in the client and sent later; errors show at the "
        "file's next call, fsync or close (docs/interposer.md, Write-behind and read-ahead)",
    )
    p.add_argument(
        "--read-ahead",
        action="store_true",
        help="sequential small reads of read-only files are answered from larger reads",
    )
    p.add_argument(
        "--transport",
        choices=("unix", "tcp"),
        default="unix",
        help="how the ranks reach daemons on this machine: a Unix socket, moved to shared memory "
        "(unix), or loopback TCP, as if the I/O nodes were other hosts (tcp)",
    )
    p.add_argument("--root", type=Path, help="directory the daemons export (default WORKDIR/root)")
    p.add_argument("--prefix", help="path prefix that is forwarded (default: the root itself)")
    p.add_argument("--hostfile", help="daemons on the first K hosts of this MPI host file")
    p.add_argument(
        "--ionode-hosts",
        type=lambda s: [h for h in s.split(",") if h],
        default=[],
        metavar="H1,H2",
        help="the I/O-node hosts (default: the first K of the host file or Slurm node list)",
    )
    p.add_argument(
        "--ionode-interface",
        metavar="IF",
        help="remote daemons bind and advertise this interface's IPv4 address (default: the "
        "default route's interface, else the first global address)",
    )
    p.add_argument(
        "--shared-dir",
        type=Path,
        default=os.environ.get("IORELAY_SHARED_DIR"),
        help="remote daemons: a directory every node sees, for the work directory "
        "(credential, ready files); default $IORELAY_SHARED_DIR",
    )
    p.add_argument(
        "--launcher",
        choices=("auto", "slurm", "ssh"),
        default="auto",
        help="how daemons start on other hosts: Slurm steps (auto: inside an allocation) or ssh "
        "(command: $IORELAY_SSH, default ssh -o BatchMode=yes -o ConnectTimeout=5)",
    )
    p.add_argument("--attach", nargs="+", default=[], metavar="ADDRESS", help="running daemons")
    p.add_argument(
        "--pool", type=Path, metavar="DIR", help="join the live pool at DIR (iorelay pool)"
    )
    p.add_argument("--job", help="--pool: the job's name (default $SLURM_JOB_ID, else job-PID)")
    p.add_argument(
        "--job-root",
        action="append",
        default=[],
        metavar="[PREFIX=]DIR",
        help="--pool: the job's files (repeatable); DIR alone is served at its own path",
    )
    p.add_argument("--values", help="--pool: predicted MiB/s per I/O-node count: 0=V0,1=V1,...")
    p.add_argument("--compute-nodes", type=int, default=1, help="--pool: the job's nodes (1)")
    p.add_argument("--secret-file", type=Path, help="credential of the --attach daemons")
    p.add_argument("--workdir", type=Path, help="logs, credential, run file (default: new in /tmp)")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    p.add_argument(
        "--no-preload",
        action="store_true",
        help="set only IORELAY_* (for `mpirun ... iorelay exec -- APP`), not LD_PRELOAD",
    )
    p.add_argument("--timeout", type=float, help="seconds before the command is stopped")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    p.set_defaults(func=run)


def ionodes_arg(text: str) -> int | str:
    """--ionodes: a count, or "auto"."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number or auto") from None


def advised_ionodes(args: argparse.Namespace, console: Console) -> int:
    """--ionodes auto: the advised count, after printing why; AdviceError when there is no
    advice (the results vary the scheduler: the runs with --scheduler's are used)."""
    from iorelay.advise.service import AdviceError, VariedOptionError, advice

    if not args.measured:
        raise AdviceError("--ionodes auto needs --measured RESULTS to draw the advice from")
    given = advise_inputs.asked(args)
    try:
        answer = advice(args.measured, given.pattern_text, None, args.choices)
    except VariedOptionError:
        answer = advice(args.measured, given.pattern_text, args.scheduler, args.choices)
    k = int(answer["recommended"]["ionodes"])
    gain = answer["recommended"]["gain_over_direct"]
    console.print(
        f"iorelay run: --ionodes auto: {k} I/O nodes for {answer['pattern']} (from the "
        f"{given.source}): the fewest of the options not worse than the predicted best "
        f"{answer['not_worse']}, predicted {answer['recommended']['predicted_mib_s']:.1f} MiB/s"
        + (f", {gain:.2f}x direct access" if gain is not None else "")
        + f"; source {answer['source']}, regret ratio {answer['source_regret']:.3f} by "
        f"cross-validation (always direct {answer['always_direct_regret'] or float('nan'):.3f}, "
        f"always {answer['largest_option']} {answer['always_largest_regret']:.3f})",
        highlight=False,
        soft_wrap=True,
    )
    for line in given.observed.evidence if given.observed else []:
        console.print(f"iorelay run:   {line}", highlight=False, soft_wrap=True)
    return k


def _config_from_args(args: argparse.Namespace) -> RelayConfig:
    hosts = ionode_hosts(args.hostfile, args.ionodes, dict(os.environ), args.ionode_hosts)
    nodelist = os.environ.get("SLURM_JOB_NODELIST", "")
    compute = [h for h in _allocation_hosts(nodelist) if h not in hosts] if nodelist else []
    ionodes = len(hosts) if args.ionodes is None else args.ionodes
    return RelayConfig(
        ionodes=ionodes,
        scheduler=args.scheduler,
        placement=args.placement,
        ranks_per_node=args.ranks_per_node,
        root=args.root,
        prefix=args.prefix,
        hosts=hosts,
        attach=args.attach,
        secret_file=args.secret_file,
        interface=args.ionode_interface,
        compute_hosts=compute if hosts else [],
        launcher=args.launcher,
        node_aggregation=args.node_aggregation,
        relay_scheduler=args.relay_scheduler,
        relay_workers=args.relay_workers,
        local_transport=args.transport,
        write_behind=args.write_behind,
        read_ahead=args.read_ahead,
    )


def _buffering_env(args: argparse.Namespace, env: dict[str, str]) -> dict[str, str]:
    """--write-behind and --read-ahead for a forwarded pool job ({} when it runs direct)."""
    if not env:
        return {}
    out = {}
    if args.write_behind:
        out["IORELAY_WRITE_BEHIND"] = "on"
    if args.read_ahead:
        out["IORELAY_READ_AHEAD"] = "on"
    return out


def _run_in_pool(args: argparse.Namespace, command: list[str], console: Console) -> int:
    from iorelay.pool import join, wire

    if args.secret_file is None or not args.job_root or args.values is None:
        print("iorelay run: --pool needs --secret-file, --job-root and --values", file=sys.stderr)
        return 2
    roots = [r if "=" in r else f"{Path(r).resolve()}={Path(r).resolve()}" for r in args.job_root]
    try:
        return join.run_in_pool(
            args.pool,
            args.job or join.default_job_name(),
            args.secret_file,
            roots,
            join.parse_values(args.values),
            args.compute_nodes,
            lambda env: run_command(command, {**env, **_buffering_env(args, env)}, args.timeout),
            lambda line: console.print(f"iorelay run: {line}", highlight=False, soft_wrap=True),
        )
    except (wire.PoolError, ValueError, OSError) as e:
        print(f"iorelay run: {e}", file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired:
        print(f"iorelay run: command stopped after {args.timeout:g} s", file=sys.stderr)
        return 124


def run(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print(
            "iorelay run: no command given (iorelay run [options] -- COMMAND...)", file=sys.stderr
        )
        return 2
    console = Console(stderr=True)
    if args.pool is not None:
        return _run_in_pool(args, command, console)
    from iorelay.advise.service import AdviceError

    try:
        if args.ionodes == "auto":
            args.ionodes = advised_ionodes(args, console)
        elif args.pattern or args.trace or args.darshan or args.measured or args.choices:
            raise AdviceError(
                "--pattern, --trace, --darshan, --measured and --choices go with --ionodes auto"
            )
    except AdviceError as e:
        print(f"iorelay run: {e}", file=sys.stderr)
        return 2
    try:
        config = _config_from_args(args)
        made_workdir = args.workdir is None
        remote = uses_remote_hosts(config)
        shared = remote and config.launcher != "ssh"  # ssh copies the credential to each host
        if shared and made_workdir and args.shared_dir is None:
            raise RunError(
                "daemons on other hosts need a directory every host sees for the credential "
                "and ready files: --shared-dir DIR (or IORELAY_SHARED_DIR), or --workdir there"
            )
        if args.workdir is not None and (args.workdir / "daemons").exists():
            raise RunError(
                f"--workdir {args.workdir} holds an earlier run's daemons/ (its credential and "
                "logs): give a new or empty directory"
            )
        tmp_parent = args.shared_dir if shared else "/tmp"
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix="iorelay-run-", dir=tmp_parent))
        try:
            with start_relay(config, workdir) as relay:
                where = "direct" if relay.direct else ", ".join(relay.addresses)
                served = "the attached daemons' export" if config.attach else relay.root
                console.print(f"iorelay run: {where}; prefix {relay.prefix} → {served}")
                env = relay.env(not args.no_preload)
                if remote:  # so the command can keep its ranks off them (srun --exclude=...)
                    env["IORELAY_IONODE_HOSTS"] = ",".join(config.hosts)
                status = run_command(command, env, args.timeout)
                print_stats(relay, console)
        finally:
            # Without --root the command's files are in WORKDIR/root: kept unless there are none.
            default_root = workdir / "root"
            keep = args.keep or (
                args.root is None and default_root.is_dir() and any(default_root.iterdir())
            )
            if made_workdir and not keep:
                shutil.rmtree(workdir, ignore_errors=True)
            elif made_workdir:
                console.print(f"iorelay run: work directory kept: {workdir}")
    except (RunError, DaemonError, OSError) as e:  # NotBuiltError is an OSError
        print(f"iorelay run: {e}", file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired:
        print(f"iorelay run: command stopped after {args.timeout:g} s", file=sys.stderr)
        return 124
    return status
