"""`iorelay run` and `iorelay exec`: direct and forwarded runs, host files, attaching to running
daemons, and the environment `iorelay exec` builds for each MPI rank."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SUBPROCESS_TIMEOUT_S, DaemonFactory

from iorelay import exec_cmd, run
from iorelay.exec_cmd import ExecError, exec_env
from iorelay.launch import node_daemon

TIMEOUT = str(SUBPROCESS_TIMEOUT_S)


def iorelay_run(*argv: str) -> int:
    """`iorelay run ARGV` in this process (the subcommand's parser, as cli.py registers it)."""
    parser = argparse.ArgumentParser(prog="iorelay")
    sub = parser.add_subparsers(dest="command", required=True)
    run.add_parser(sub)
    args = parser.parse_args(["run", *argv])
    return args.func(args)


def dump_env(path: Path) -> list[str]:
    """A command that writes its IORELAY_*/LD_PRELOAD environment to `path` as JSON."""
    code = (
        "import json, os, sys; json.dump({k: v for k, v in os.environ.items() "
        "if k.startswith(('IORELAY_', 'LD_PRELOAD'))}, open(sys.argv[1], 'w'))"
    )
    return [sys.executable, "-c", code, str(path)]


# -- host lists -------------------------------------------------------------------------------


def test_hostfile_lines_comments_and_slots(tmp_path: Path) -> None:
    hostfile = tmp_path / "hosts"
    hostfile.write_text("# I/O nodes first\nlocalhost slots=2\n\n  node7 slots=4 # x\nnode8\n")
    assert run.read_hostfile(hostfile) == ["localhost", "node7", "node8"]
    assert run.ionode_hosts(str(hostfile), 2, {}) == ["localhost", "node7"]
    assert run.ionode_hosts(str(hostfile), None, {}) == ["localhost", "node7", "node8"]
    with pytest.raises(run.RunError, match="only 3 hosts"):
        run.ionode_hosts(str(hostfile), 4, {})


def test_slurm_nodelist_gives_the_ionode_hosts() -> None:
    env = {"SLURM_JOB_NODELIST": "c[1-4]"}
    assert run.ionode_hosts(None, 2, env) == ["c1", "c2"]
    assert run.ionode_hosts(None, 0, env) == []
    with pytest.raises(run.RunError, match=r"SLURM_JOB_NODELIST: .*'c\[4-1\]'"):
        run.ionode_hosts(None, 2, {"SLURM_JOB_NODELIST": "c[4-1]"})


def test_named_ionode_hosts_win_and_must_match_the_count() -> None:
    env = {"SLURM_JOB_NODELIST": "c[1-4]"}
    assert run.ionode_hosts(None, None, env, ["c3", "c4"]) == ["c3", "c4"]
    assert run.ionode_hosts(None, 2, env, ["c3", "c4"]) == ["c3", "c4"]
    with pytest.raises(run.RunError, match="names 2 hosts"):
        run.ionode_hosts(None, 1, env, ["c3", "c4"])


def test_node_daemon_binds_the_named_interface_or_a_global_address() -> None:
    assert node_daemon.node_address("lo") == "127.0.0.1"
    with pytest.raises(node_daemon.AddressError, match="no interface nosuch0"):
        node_daemon.node_address("nosuch0")
    assert not node_daemon.node_address(None).startswith("127.")


def test_node_daemon_names_the_path_it_tried_when_iorelayd_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "prefix/bin/iorelayd"
    assert node_daemon.main([str(missing), "--export", "/f=/r"]) == 127
    assert f"tried {missing}" in capsys.readouterr().err


def test_remote_hosts_outside_slurm_need_an_allocation(
    disk_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    status = iorelay_run(
        "--ionode-hosts", "no-such-host.invalid", "--workdir", str(disk_tmp / "w"), "--", "true"
    )
    assert status == 1
    assert "not a Slurm allocation" in capsys.readouterr().err


def test_local_hosts_are_recognised() -> None:
    assert run.is_local_host("localhost")
    assert run.is_local_host(os.uname().nodename)
    assert not run.is_local_host("no-such-host.invalid")


def test_remote_hosts_are_refused_with_a_pointer_to_the_docs(disk_tmp: Path) -> None:
    hostfile = disk_tmp / "hosts"
    hostfile.write_text("localhost\nno-such-host.invalid\n")
    status = iorelay_run(
        "--hostfile", str(hostfile), "--workdir", str(disk_tmp / "w"), "--", "true"
    )
    assert status == 1


# -- iorelay exec -----------------------------------------------------------------------------


def test_exec_env_is_unchanged_for_direct_access() -> None:
    env = {"PATH": "/bin", "LD_PRELOAD": "/x.so"}
    assert exec_env(env) == env


def test_exec_env_from_the_run_file_and_carried_variables_win(tmp_path: Path) -> None:
    run_file = tmp_path / "run.json"
    carried = {
        "IORELAY_SERVERS": "tcp:127.0.0.1:1",
        "IORELAY_PREFIX": "/fwd",
        "IORELAY_RANKS_PER_NODE": "4",
    }
    run_file.write_text(json.dumps({"version": 1, "env": carried}))
    env = exec_env(
        {
            "IORELAY_RUN_FILE": str(run_file),
            "IORELAY_PREFIX": "/other",
            "IORELAY_PRELOAD": "/lib/pre.so",
            "LD_PRELOAD": "/a.so",
        }
    )
    assert env["IORELAY_SERVERS"] == "tcp:127.0.0.1:1"
    assert env["IORELAY_PREFIX"] == "/other"  # carried with mpirun -x: wins
    assert env["IORELAY_RANKS_PER_NODE"] == "4"
    assert env["LD_PRELOAD"] == "/lib/pre.so /a.so"
    assert exec_env(env)["LD_PRELOAD"] == "/lib/pre.so /a.so"  # not added twice


def test_exec_env_gives_each_host_its_node_id_from_the_run_file(tmp_path: Path) -> None:
    run_file = tmp_path / "run.json"
    doc = {
        "version": 1,
        "env": {
            "IORELAY_SERVERS": "tcp:10.0.0.1:1",
            "IORELAY_NODES": "2",
        },
        "node_ids": {"node1": 0, "node2": 1},
    }
    run_file.write_text(json.dumps(doc))
    base = {"IORELAY_RUN_FILE": str(run_file), "IORELAY_PRELOAD": "/p.so"}
    assert exec_env({**base, "SLURMD_NODENAME": "node2"})["IORELAY_NODE_ID"] == "1"
    assert exec_env({**base, "SLURMD_NODENAME": "node2"})["IORELAY_NODES"] == "2"
    assert (
        exec_env({**base, "SLURMD_NODENAME": "node2", "IORELAY_NODE_ID": "7"})["IORELAY_NODE_ID"]
        == "7"
    )  # set by the launcher: wins
    assert "IORELAY_NODE_ID" not in exec_env({**base, "SLURMD_NODENAME": "ion1"})


def test_exec_env_rejects_an_unreadable_run_file(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ExecError, match="run file"):
        exec_env({"IORELAY_RUN_FILE": str(tmp_path / "bad.json")})


def test_exec_replaces_itself_with_the_program(tmp_path: Path) -> None:
    out = tmp_path / "env.json"
    env = {**os.environ, "IORELAY_SERVERS": "tcp:127.0.0.1:1", "IORELAY_PRELOAD": "/nonexistent.so"}
    env.pop("LD_PRELOAD", None)
    proc = subprocess.run(
        [sys.executable, "-m", "iorelay.exec_cmd", "--", *dump_env(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["LD_PRELOAD"] == "/nonexistent.so"
    assert exec_cmd.main(["--", str(tmp_path / "no-such-program")]) == 127


# -- iorelay run ------------------------------------------------------------------------------


def test_run_with_zero_ionodes_runs_the_command_unchanged(disk_tmp: Path) -> None:
    out = disk_tmp / "env.json"
    status = iorelay_run(
        "--ionodes", "0", "--root", str(disk_tmp / "root"), "--timeout", TIMEOUT, "--",
        *dump_env(out),
    )  # fmt: skip
    assert status == 0
    env = json.loads(out.read_text())
    assert "IORELAY_SERVERS" not in env
    assert env.get("LD_PRELOAD", "") == os.environ.get("LD_PRELOAD", "")


def test_run_returns_the_commands_exit_status(disk_tmp: Path) -> None:
    status = iorelay_run("--root", str(disk_tmp), "--timeout", TIMEOUT, "--", "sh", "-c", "exit 3")
    assert status == 3
    assert iorelay_run("--root", str(disk_tmp)) == 2  # no command


def test_sigterm_stops_the_command_and_the_daemons_and_removes_the_work_directory(
    fake_build: Path, disk_tmp: Path
) -> None:
    """A batch system's cancel (SIGTERM to `iorelay run`) ends the run as Ctrl-C does: the
    command's process group stopped, the daemons stopped, the work directory removed."""
    pid_file, env_file = disk_tmp / "app.pid", disk_tmp / "env.json"
    script = f"echo $$ > {pid_file}; {shlex.join(dump_env(env_file))}; exec sleep 60"
    argv = ["run", "--ionodes", "1", "--root", str(disk_tmp / "root"), "--no-preload"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "iorelay", *argv, "--", "sh", "-c", script],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + SUBPROCESS_TIMEOUT_S
    while not (pid_file.exists() and env_file.exists() and env_file.stat().st_size > 0):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=SUBPROCESS_TIMEOUT_S)
    assert proc.returncode == 128 + signal.SIGTERM, err
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
    workdir = Path(json.loads(env_file.read_text())["IORELAY_SECRET_FILE"]).parents[1]
    assert workdir.name.startswith("iorelay-run-") and not workdir.exists()


def test_impossible_local_daemon_counts_and_launchers_are_refused(
    fake_build: Path, disk_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(disk_tmp / "root")
    assert iorelay_run("--ionodes", "65", "--root", root, "--no-preload", "--", "true") == 1
    assert "65 daemons on this machine: 1 to 64" in capsys.readouterr().err
    argv = ["--launcher", "ssh", "--ionodes", "1", "--root", root, "--no-preload", "--", "true"]
    assert iorelay_run(*argv) == 1
    assert "--launcher ssh: every I/O-node host is this machine" in capsys.readouterr().err
    (disk_tmp / "work" / "daemons").mkdir(parents=True)
    argv = ["--workdir", str(disk_tmp / "work"), "--root", root, "--no-preload", "--", "true"]
    assert iorelay_run(*argv) == 1
    assert "holds an earlier run's daemons/" in capsys.readouterr().err


def test_run_starts_daemons_and_gives_their_environment(fake_build: Path, disk_tmp: Path) -> None:
    out, work = disk_tmp / "env.json", disk_tmp / "work"
    status = iorelay_run(
        "--ionodes", "3", "--ranks-per-node", "4", "--placement", "round-robin",
        "--root", str(disk_tmp / "root"), "--workdir", str(work), "--no-preload",
        "--timeout", TIMEOUT, "--", *dump_env(out),
    )  # fmt: skip
    assert status == 0
    env = json.loads(out.read_text())
    assert "LD_PRELOAD" not in env or str(fake_build) not in env["LD_PRELOAD"]
    assert len(env["IORELAY_SERVERS"].split(",")) == 3
    assert env["IORELAY_PREFIX"] == str(disk_tmp / "root")  # the prefix defaults to the root
    assert env["IORELAY_RANKS_PER_NODE"] == "4" and env["IORELAY_PLACEMENT"] == "round-robin"
    assert env["IORELAY_PRELOAD"] == str(fake_build / "src/preload/libiorelay_preload.so")
    assert Path(env["IORELAY_SECRET_FILE"]).stat().st_mode & 0o777 == 0o600
    run_file = json.loads((work / "run.json").read_text())
    assert run_file["version"] == 1
    assert run_file["env"] == {k: env[k] for k in run_file["env"]}
    assert {"IORELAY_SERVERS", "IORELAY_PREFIX", "IORELAY_SECRET_FILE"} <= set(run_file["env"])
    assert sorted(p.name for p in (work / "daemons").glob("d*.ready")) == [
        "d0.ready", "d1.ready", "d2.ready",
    ]  # fmt: skip


def test_hostfile_lines_that_are_this_machine_start_local_daemons(
    fake_build: Path, disk_tmp: Path
) -> None:
    hostfile = disk_tmp / "hosts"
    hostfile.write_text(f"localhost\nlocalhost slots=2\n{os.uname().nodename}\nlocalhost\n")
    out = disk_tmp / "env.json"
    status = iorelay_run(
        "--hostfile", str(hostfile), "--ionodes", "3", "--root", str(disk_tmp / "root"),
        "--no-preload", "--timeout", TIMEOUT, "--", *dump_env(out),
    )  # fmt: skip
    assert status == 0
    assert len(json.loads(out.read_text())["IORELAY_SERVERS"].split(",")) == 3


def test_a_daemon_that_fails_to_start_fails_the_run(
    fake_build: Path, disk_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_IORELAYD_MODE", "crash")
    marker = disk_tmp / "ran"
    status = iorelay_run(
        "--ionodes", "1", "--root", str(disk_tmp / "root"), "--no-preload", "--",
        "touch", str(marker),
    )  # fmt: skip
    assert status == 1
    assert not marker.exists()


def forwarded_write(prefix: str) -> list[str]:
    """Writes PREFIX/hello through the interposer and reads it back."""
    return ["sh", "-c", f'echo hello > "{prefix}/hello" && cat "{prefix}/hello"']


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_run_with_two_ionodes_forwards_the_commands_files(disk_tmp: Path) -> None:
    root, prefix = disk_tmp / "root", str(disk_tmp / "fwd")  # PREFIX does not exist locally
    out = disk_tmp / "env.json"
    status = iorelay_run(
        "--ionodes", "2", "--ranks-per-node", "2", "--root", str(root), "--prefix", prefix,
        "--workdir", str(disk_tmp / "work"), "--timeout", TIMEOUT, "--",
        "sh", "-c", f"{forwarded_write(prefix)[2]} && {shlex.join(dump_env(out))}",
    )  # fmt: skip
    assert status == 0
    assert (root / "hello").read_text() == "hello\n"
    env = json.loads(out.read_text())
    assert len(env["IORELAY_SERVERS"].split(",")) == 2
    assert env["IORELAY_RANKS_PER_NODE"] == "2" and env["IORELAY_PREFIX"] == prefix
    run_file = json.loads(Path(env["IORELAY_RUN_FILE"]).read_text())
    assert run_file["env"]["IORELAY_SERVERS"] == env["IORELAY_SERVERS"]


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_node_aggregation_puts_one_relay_in_front_of_the_ionodes(disk_tmp: Path) -> None:
    root, prefix = disk_tmp / "root", str(disk_tmp / "fwd")
    config = run.RelayConfig(ionodes=2, root=root, prefix=prefix, node_aggregation=True)
    with run.start_relay(config, disk_tmp / "work") as relay:
        assert len(relay.addresses) == 1 and relay.addresses[0].startswith("unix:")
        assert len(relay.ionode_addresses) == 2
        status = run.run_command(forwarded_write(prefix), relay.env(), SUBPROCESS_TIMEOUT_S)
        stats = dict(relay.stats())
    assert status == 0
    assert (root / "hello").read_text() == "hello\n"
    relay_stats = stats[relay.addresses[0]]
    assert isinstance(relay_stats, dict) and relay_stats["role"] == "relay"
    assert relay_stats["total"]["by_op"]["open"] >= 1
    # What the relay sent out arrived at the I/O nodes as requests.
    ionode_opens = sum(stats[a]["total"]["by_op"].get("open", 0) for a in relay.ionode_addresses)
    assert ionode_opens == relay_stats["backend_calls"]["open"]
    assert relay.daemon_exit_codes == [0, 0, 0]


def test_node_aggregation_needs_ionodes(disk_tmp: Path) -> None:
    assert iorelay_run("--node-aggregation", "--", "true") == 1


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_hostfile_of_local_hosts_starts_one_daemon_per_line(disk_tmp: Path) -> None:
    hostfile = disk_tmp / "hosts"
    hostfile.write_text(f"localhost\nlocalhost slots=2\n{os.uname().nodename}\n")
    root, prefix = disk_tmp / "root", str(disk_tmp / "fwd")
    out = disk_tmp / "env.json"
    status = iorelay_run(
        "--hostfile", str(hostfile), "--root", str(root), "--prefix", prefix,
        "--timeout", TIMEOUT, "--",
        "sh", "-c", f"{forwarded_write(prefix)[2]} && {shlex.join(dump_env(out))}",
    )  # fmt: skip
    assert status == 0
    assert (root / "hello").read_text() == "hello\n"
    assert len(json.loads(out.read_text())["IORELAY_SERVERS"].split(",")) == 3


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_run_attaches_to_running_daemons(daemon_factory: DaemonFactory, disk_tmp: Path) -> None:
    daemons = daemon_factory(2)
    status = iorelay_run(
        "--attach", *daemons.addresses(), "--secret-file", str(daemons.credential_file),
        "--prefix", daemons.prefix, "--workdir", str(disk_tmp / "work"), "--timeout", TIMEOUT,
        "--", *forwarded_write(daemons.prefix),
    )  # fmt: skip
    assert status == 0
    assert (daemons.root_dir / "hello").read_text() == "hello\n"


@pytest.mark.needs_build("iorelayd", "libiorelay_preload.so", "iorelay-ctl")
def test_attach_checks_the_daemons_before_the_command_runs(
    daemon_factory: DaemonFactory, disk_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong credential, a daemon that is not there and a missing --prefix are errors before
    the command starts (which would otherwise meet EACCES or EIO in its I/O)."""
    daemons = daemon_factory(1)
    marker = disk_tmp / "ran"
    wrong = disk_tmp / "wrong.key"
    wrong.write_text("0" * 64 + "\n")
    wrong.chmod(0o600)
    for addresses, secret, extra, why in [
        (daemons.addresses(), wrong, ["--prefix", daemons.prefix], "auth"),
        (["unix:/nonexistent/d.sock"], daemons.credential_file, ["--prefix", "/p"], "unix:/"),
        (daemons.addresses(), daemons.credential_file, [], "--attach needs --prefix"),
    ]:
        status = iorelay_run(
            "--attach", *addresses, "--secret-file", str(secret), *extra,
            "--timeout", TIMEOUT, "--", "touch", str(marker),
        )  # fmt: skip
        assert status == 1 and why in capsys.readouterr().err, why
        assert not marker.exists()
