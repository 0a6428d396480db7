"""bench/ holds experiment scripts that import the installed package: none edits sys.path, and
every name a script imports resolves (a renamed function fails here, not on the day someone
reruns a months-old benchmark). The check imports the modules the scripts name, in a child
Python started in bench/ as the scripts are; it runs no script."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"

CHECK = """
import importlib, json, sys
sys.path.insert(0, ".")  # what `python bench/x.py` gives a script: its own folder first
missing = []
for script, module, names in json.loads(sys.stdin.read()):
    try:
        m = importlib.import_module(module)
    except ImportError as e:
        missing.append(f"{script}: {module}: {e}")
        continue
    for n in names:
        if not hasattr(m, n):
            try:
                importlib.import_module(f"{module}.{n}")  # a submodule: from iorelay import paths
            except ImportError:
                missing.append(f"{script}: {module}.{n}")
print(json.dumps(missing))
"""


def imports(path: Path) -> list[tuple[str, str, list[str]]]:
    found = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found += [(path.name, a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module not in (None, "__future__"):
            found.append((path.name, node.module, [a.name for a in node.names]))
    return found


def test_no_script_edits_sys_path() -> None:
    scripts = sorted(BENCH.glob("*.py"))
    assert len(scripts) > 20
    assert [p.name for p in scripts if "sys.path" in p.read_text()] == []


def test_every_name_a_script_imports_resolves() -> None:
    wanted = [i for p in sorted(BENCH.glob("*.py")) for i in imports(p)]
    out = subprocess.run(
        [sys.executable, "-c", CHECK],
        input=json.dumps(wanted),
        cwd=BENCH,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout) == []
