"""One iorelayd holding many connections, some of them busy, sampled every second: the load's
operations and latency, the daemon's RSS, threads and descriptors (/proc). bench/soak.py runs
the long soak; python/tests/test_soak.py a short one."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import threading
import time
from pathlib import Path

from iorelay import paths
from iorelay.launch.local import LocalDaemons


def raise_descriptor_limit(want: int) -> None:
    """Soft limit up to min(want, hard) for this process and what it starts."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(want, hard) if hard != resource.RLIM_INFINITY else want
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def daemon_sample(pid: int) -> dict:
    """RSS (KiB), threads and open descriptors of a process."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {
        "rss_kib": int(fields["VmRSS"].split()[0]),
        "threads": int(fields["Threads"]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
    }


def soak(idle: int, active: int, seconds: float, workdir: Path) -> list[dict]:
    """Runs the load against a fresh daemon; one merged sample per second."""
    raise_descriptor_limit(idle + 4096)
    root = workdir / "root"
    root.mkdir()
    with LocalDaemons(1, root, "/iorelay-soak", workdir / "d") as d:
        pid = d.daemons[0].pid
        env = {**os.environ, **d.env("unix"), "IORELAY_MAX_CONNECTIONS": str(active + 4)}
        cmd = [str(paths.find("soak_client")), str(idle), str(active), str(seconds), d.prefix]
        samples: list[dict] = []
        with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) as p:
            lines: list[dict] = []
            reader = threading.Thread(target=lambda: lines.extend(map(json.loads, p.stdout)))
            reader.start()
            while p.poll() is None:
                time.sleep(1.0)
                loads = [x for x in lines if "t" in x]
                if loads:
                    samples.append({**loads[-1], **daemon_sample(pid)})
            reader.join()
        done = next((x for x in lines if x.get("done")), {})
        if p.returncode != 0 or not done:
            raise RuntimeError(f"soak_client failed ({p.returncode}): {lines[-3:]}\n{d.logs()}")
        for s in samples:
            s["idle_connected"] = done["idle_connected"]
        return samples


def growth(samples: list[dict], key: str) -> float:
    """Median of the last fifth over the median of the first fifth (after the first sample)."""
    body = samples[1:] or samples
    n = max(1, len(body) // 5)
    first = statistics.median(s[key] for s in body[:n])
    last = statistics.median(s[key] for s in body[-n:])
    return last / first if first else float("inf")
