"""ssh on the testbed: one sshd per compute and I/O-node host, in the namespaces of that host's
slurmd (its network, host name and shared mount), so that `iorelay run --launcher ssh` can be
tried outside Slurm. `up` makes a root key and a host key per host under RUN_DIR/ssh (removed by
`down` with RUN_DIR), an ssh_config naming every host with its address, and a known_hosts
holding the host keys (no trust on first use). Only that key may log in, as root, from the
testbed's subnet; no passwords.
"""

from __future__ import annotations

import ipaddress
import shutil
import time
from pathlib import Path

from iorelay.testbed.plan import RUN_DIR, Host, TestbedConfig
from iorelay.testbed.state import State
from iorelay.testbed.system import TestbedError, exited, sh, spawn, start_time

SSH_DIR = RUN_DIR / "ssh"
CLIENT_KEY = SSH_DIR / "id_ed25519"
SSH_CONFIG = SSH_DIR / "ssh_config"
KNOWN_HOSTS = SSH_DIR / "known_hosts"
SSH_PORT = 22
PRIVSEP_DIR = Path("/run/sshd")  # sshd refuses to start without it


def available() -> bool:
    return shutil.which("sshd", path="/usr/sbin:/sbin") is not None


def ssh_env() -> dict[str, str]:
    """IORELAY_SSH for `iorelay run --launcher ssh` on the testbed."""
    return {"IORELAY_SSH": f"ssh -F {SSH_CONFIG}"}


def setup(state: State, config: TestbedConfig, hosts: list[Host]) -> None:
    """Keys, client configuration and known_hosts (no process yet)."""
    SSH_DIR.mkdir(parents=True, exist_ok=True)
    SSH_DIR.chmod(0o700)
    sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "iorelay-testbed", "-f",
        str(CLIENT_KEY)])  # fmt: skip
    subnet = str(ipaddress.ip_network(config.subnet))
    pub = CLIENT_KEY.with_suffix(".pub").read_text().strip()
    (SSH_DIR / "authorized_keys").write_text(f'from="{subnet}" {pub}\n')
    known, conf = [], []
    for h in hosts:
        d = SSH_DIR / h.name
        d.mkdir(exist_ok=True)
        sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_key")])
        host_pub = (d / "host_key.pub").read_text().split()[:2]
        known.append(f"{h.name},{h.address} {' '.join(host_pub)}")
        conf += [f"Host {h.name} {h.address}", f"  HostName {h.address}"]
        (d / "sshd_config").write_text(
            "\n".join([
                f"ListenAddress {h.address}:{SSH_PORT}",
                f"HostKey {d / 'host_key'}",
                f"AuthorizedKeysFile {SSH_DIR / 'authorized_keys'}",
                f"PidFile {d / 'sshd.pid'}",
                "PermitRootLogin prohibit-password",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "X11Forwarding no",
                "PrintMotd no",
                "",
            ])
        )  # fmt: skip
    KNOWN_HOSTS.write_text("\n".join(known) + "\n")
    conf += ["Host *", "  User root", f"  IdentityFile {CLIENT_KEY}", "  IdentitiesOnly yes",
             f"  UserKnownHostsFile {KNOWN_HOSTS}", "  StrictHostKeyChecking yes",
             "  BatchMode yes", "  ConnectTimeout 5", "  LogLevel ERROR"]  # fmt: skip
    SSH_CONFIG.write_text("\n".join(conf) + "\n")
    if not PRIVSEP_DIR.exists():
        state.record("tree", path=str(PRIVSEP_DIR))
        PRIVSEP_DIR.mkdir(mode=0o755)


def start_sshd(state: State, host: Host, slurmd_pid: int) -> None:
    """sshd in the namespaces of the host's slurmd, so a session sees what a job step sees."""
    d = SSH_DIR / host.name
    pid = spawn(
        ["nsenter", f"--target={slurmd_pid}", "--net", "--uts", "--mount", "/usr/sbin/sshd",
         "-D", "-e", "-f", str(d / "sshd_config")],
        RUN_DIR / "log" / host.name / "sshd.out",
    )  # fmt: skip
    state.record("process", name=f"sshd@{host.name}", pid=pid, started=start_time(pid))
    code = exited(pid)
    if code is not None:
        raise TestbedError(f"sshd on {host.name} exited with status {code}")


def wait_ready(hosts: list[Host]) -> None:
    """Each sshd answers (an ssh `true` with the testbed's key succeeds)."""
    for h in hosts:
        deadline = time.monotonic() + 10.0
        while sh(["ssh", "-F", str(SSH_CONFIG), h.name, "echo ok"], check=False).strip() != "ok":
            if time.monotonic() > deadline:
                sh(["ssh", "-F", str(SSH_CONFIG), h.name, "true"])  # raises with ssh's error
                raise TestbedError(f"sshd on {h.name} does not answer within 10 s")
            time.sleep(0.2)
