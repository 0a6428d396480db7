"""Everyday tools in a forwarded working directory against the same in a local one: each step is
a shell command (coreutils, git, a compiler, Python's data libraries, sqlite, scripts and
programs kept in the directory), run first in a local directory, then in a directory of one
iorelayd's export through the interposer, and the two answers compared (exit status and
output, with the directory's own path taken out).

    .venv/bin/python bench/tool_battery.py

Writes the table of steps whose answers differ, and the count that agree, to
bench/results/tool-battery.md. Each step runs in the same directory after the ones before it,
so a step sees their files. The daemon's requests by op show the run went through it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_table import counts, publish

from iorelay.launch.local import LocalDaemons
from iorelay.stats import query_stats

REPO = Path(__file__).resolve().parents[1]

PY = sys.executable
STEPS = {
    "seq and wc": "seq 1 100000 > s.txt && wc -l s.txt",
    "sed -i": "sed -i s/1/X/ s.txt && head -2 s.txt",
    "sort -o": "sort -o s2.txt s.txt && tail -1 s2.txt",
    "cp and cmp": "cp s.txt c.txt && cmp s.txt c.txt && echo same",
    "cp --sparse": "truncate -s 10M sp && echo x >> sp && cp --sparse=always sp sp2 && cmp sp sp2",
    "cp -a tree": "mkdir -p d/e && echo 1 > d/e/f && cp -a d d2 && find d2 | sort",
    "mv": "mv c.txt m.txt && ls m.txt",
    "gzip": "gzip -k s.txt && gunzip -c s.txt.gz | wc -l",
    "tar czf, tzf": "tar czf a.tgz d && tar tzf a.tgz | sort",
    "dd conv=fsync": "dd if=/dev/zero of=z bs=64k count=16 conv=fsync status=none && stat -c %s z",
    "ln -s, readlink": "ln -sf s.txt L && readlink L && wc -l < L",
    "install -m": "install -m 600 s.txt i.txt && stat -c %a i.txt",
    "split": "split -l 30000 s.txt part. && ls part.* | wc -l",
    "make": "printf 'all: o\\no: s.txt\\n\\tcp s.txt o\\n' > Makefile && "
    "make -s && make -s && echo made",
    "test -nt": "touch -d 2001-01-01 old && [ s.txt -nt old ] && echo newer",
    "fallocate": "fallocate -l 1M fa && stat -c %s fa",
    "chmod -R": "chmod -R g+w d && stat -c %a d/e/f",
    "find -exec": "find . -name '*.txt' -exec wc -c {} + | tail -1",
    "tee, append": "echo hi | tee t1 t2 > /dev/null && echo more >> t1 && cat t1 t2",
    "diff": "diff s.txt s2.txt > /dev/null; echo $?",
    "gcc, run": "printf '#include <stdio.h>\\nint main(){puts(\"hi\");}\\n' > h.c && "
    "gcc -o h h.c && ./h",
    "script by $0": 'printf \'#!/bin/sh\\ncat "$(dirname "$0")/t2"\\n\' > s.sh && '
    "chmod +x s.sh && ./s.sh",
    "make runs the script": "printf 'all:\\n\\t./s.sh\\n' > M2 && make -s -f M2",
    "python venv": f"{PY} -m venv --without-pip v && v/bin/python -c 'print(1)'",
    "cp -r with links out, diff -r": "cp -r /etc/ssl/certs c && tar cf x.tar c && mkdir xx && "
    "tar xf x.tar -C xx && diff -r c xx/c && echo same",
    "git": "git init -q r && cd r && seq 1 500 > a && git add a && "
    "git -c user.email=t@example.org -c user.name=t commit -qm one && git gc -q && "
    "git fsck --strict && git log --format=%s",
    "numpy save, load": f'{PY} -c \'import numpy as np; np.save("a.npy", np.arange(10**6)); '
    'print(np.load("a.npy").sum(), np.load("a.npy", mmap_mode="c")[-1])\'',
    "numpy mmap_mode=r": f"{PY} -c 'import numpy as np; "
    'print(np.load("a.npy", mmap_mode="r")[-1])\'',
    "pandas parquet": f'{PY} -c \'import pandas as pd; pd.DataFrame({{"x": range(5)}})'
    '.to_parquet("d.parquet"); print(pd.read_parquet("d.parquet").x.sum())\'',
    "sqlite": "sqlite3 db.sqlite 'create table t(x); insert into t values(1),(2); "
    "select count(*) from t;'",
    "sqlite WAL": "sqlite3 w.sqlite 'pragma journal_mode=wal; create table t(x); "
    "select count(*) from t;'",
    "mkfifo": "mkfifo ff && echo made",
    "system() and popen() from C": "printf '#include <stdio.h>\\n#include <stdlib.h>\\nint main(){"
    'FILE*p=popen("cat t2","r");char b[9]={0};fgets(b,8,p);pclose(p);'
    'return system("test -f t1")|(b[0]!=104);}\\n\' > sp.c && gcc -o sp sp.c && ./sp && echo ok',
    "rm -rf": "rm -rf d d2 xx c r v part.* && ls | wc -l",
}


def run_steps(directory: str, env: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Each step's exit status and output digest, in `directory` (its path taken out)."""
    answers = {}
    for name, command in STEPS.items():
        done = subprocess.run(["bash", "-c", f"cd {directory} && {command}"], env=env,
                              capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        out = (done.stdout + done.stderr).replace(directory, "DIR")
        answers[name] = (done.returncode, out)
    return answers


def main() -> int:
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": tempfile.gettempdir()}
    with tempfile.TemporaryDirectory(prefix="iorelay-tools-", dir="/var/tmp") as tmp:
        local = Path(tmp) / "local"
        local.mkdir()
        direct = run_steps(str(local), env)
        root = Path(tmp) / "root"
        root.mkdir()
        with LocalDaemons(1, root, "/iorelay-tools", Path(tmp) / "w") as d:
            forwarded = run_steps(d.prefix, {**env, **d.env("unix")})
            by_op = query_stats(d.addresses("unix")[0], d.credential_file)["total"]["by_op"]
    differ = [n for n in STEPS if direct[n] != forwarded[n]]
    lines = [f"## Everyday tools in a forwarded directory, {time.strftime('%Y-%m-%d')}", "",
             "Command: `python bench/tool_battery.py` (one iorelayd, posix backend, shared memory)",
             "", f"{len(STEPS) - len(differ)} of {len(STEPS)} steps answer as in a local "
             "directory (exit status and output). Those that differ:", "",
             "| step | local | forwarded |", "|---|---|---|"]  # fmt: skip
    for name in differ:
        cells = []
        for rc, out in (direct[name], forwarded[name]):
            text = " ".join(out.split())[-160:].replace("|", "/")
            cells.append(f"{rc}: {text}" if text else f"{rc}")
        lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    lines += ["", "Daemon requests by op: "
              + counts(by_op)]  # fmt: skip
    publish("tool-battery.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
