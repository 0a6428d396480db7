"""GlusterFS on the testbed: one glusterd per storage host (in its namespace, with its own
working, run and log directories), a distributed volume of one brick per storage host, and a
FUSE mount of it for every compute and I/O-node host, made in the root mount namespace with
that host's network (`nsenter --net`), so the traffic crosses the host's capped link.
"""

from __future__ import annotations

import time
from pathlib import Path

from iorelay.testbed.plan import DATA_DIR, RUN_DIR, VOLUME, Host
from iorelay.testbed.state import State
from iorelay.testbed.system import (
    TestbedError,
    exited,
    in_netns,
    new_entries,
    sh,
    spawn,
    start_time,
)

# O_DIRECT is honoured end to end: the FUSE client's write-behind does not acknowledge an
# O_DIRECT write before the brick has it (strict-o-direct), and the brick opens files with
# O_DIRECT when the application did (remote-dio off: the flag is not filtered out). A file
# written on one host reads at once at its new end on another, as on a parallel file system:
# the clients' metadata cache (stat-prefetch, the md-cache translator) is off, since with it a
# mount kept a file's old size for up to a second (an O_DIRECT read of a block just appended
# through another mount returned 0 bytes in 197 of 200 tries; with it off, in none).
VOLUME_OPTIONS = {
    "performance.strict-o-direct": "on",
    "network.remote-dio": "off",
    "performance.stat-prefetch": "off",
}
GLUSTERD_PORT = 24007
READY_TIMEOUT_S = 30.0
# Paths glusterd writes outside its own directories (sockets, snapshot and mount helpers,
# default state): only the entries that appear during `up` are removed by `down`.
OUTSIDE_DIRS = (
    Path("/run/gluster"),
    Path("/var/lib/glusterd"),
    Path("/run/mount"),
    Path("/var/log/glusterfs"),
)


def _dirs(host: Host) -> dict[str, Path]:
    return {
        "work": DATA_DIR / host.name / "glusterd",
        "brick": DATA_DIR / host.name / "brick",
        "run": RUN_DIR / "gluster" / host.name,
        "log": RUN_DIR / "log" / host.name,
    }


def cli(host: Host, *args: str, timeout_s: float = 60.0) -> str:
    """The gluster command line, talking to the glusterd of a storage host over its Unix
    socket (over TCP glusterd accepts only read-only commands)."""
    sock = _dirs(host)["run"] / "glusterd.socket"
    return sh(
        [*in_netns(host.netns), "gluster", f"--glusterd-sock={sock}", "--mode=script", *args],
        timeout_s=timeout_s,
    )


def _volfile(host: Host, d: dict[str, Path]) -> str:
    return f"""volume management
    type mgmt/glusterd
    option working-directory {d["work"]}
    option run-directory {d["run"]}
    option logging-directory {d["log"]}
    option glusterd-sockfile {d["run"]}/glusterd.socket
    option transport-type socket
    option transport.socket.bind-address {host.address}
    option transport.socket.listen-port {GLUSTERD_PORT}
    option transport.socket.keepalive-time 10
    option transport.socket.keepalive-interval 2
    option ping-timeout 0
    option event-threads 1
    option base-port 49152
    option max-port 60999
end-volume
"""


def start_glusterd(state: State, host: Host) -> None:
    d = _dirs(host)
    for path in d.values():
        path.mkdir(parents=True, exist_ok=True)
    volfile = d["run"] / "glusterd.vol"
    volfile.write_text(_volfile(host, d))
    pid = spawn(
        [*in_netns(host.netns), "glusterd", "-N", f"--volfile={volfile}",
         f"--pid-file={d['run']}/glusterd.pid", f"--log-file={d['log']}/glusterd.log"],
        d["log"] / "glusterd.out",
    )  # fmt: skip
    state.record("process", name=f"glusterd@{host.name}", pid=pid, started=start_time(pid))
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        code = exited(pid)
        if code is not None:
            raise TestbedError(
                f"glusterd on {host.name} exited with status {code}; see {d['log']}/glusterd.log"
            )
        try:
            cli(host, "volume", "list", timeout_s=10)
            return
        except TestbedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def record_outside_dirs(state: State) -> None:
    for directory in OUTSIDE_DIRS:
        state.record("new_entries", **new_entries(directory))


def create_volume(state: State, storage: list[Host]) -> dict[str, str]:
    """Peers, the volume (one brick per storage host), its O_DIRECT options; started."""
    first = storage[0]
    for other in storage[1:]:
        cli(first, "peer", "probe", other.address)
    bricks = [f"{h.address}:{_dirs(h)['brick']}" for h in storage]
    cli(first, "volume", "create", VOLUME, *bricks, "force")
    for key, value in VOLUME_OPTIONS.items():
        cli(first, "volume", "set", VOLUME, key, value)
    cli(first, "volume", "start", VOLUME)
    return dict(VOLUME_OPTIONS)


def mount(state: State, host: Host | None, server: Host, path: Path) -> None:
    """Mounts the volume at path with host's network (None: the root namespace's, the login
    node's, through the bridge without a cap)."""
    path.mkdir(parents=True, exist_ok=True)
    state.record("mount", path=str(path))
    log = RUN_DIR / "log" / (host.name if host else "login") / "glusterfs-mount.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    prefix = in_netns(host.netns) if host else []
    sh([*prefix, "mount", "-t", "glusterfs",
        "-o", f"log-file={log}", f"{server.address}:/{VOLUME}", str(path)])  # fmt: skip
