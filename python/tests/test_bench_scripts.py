"""bench/ holds experiment scripts that import the installed package: none edits sys.path, and
every name a script imports resolves (a renamed function fails here, not on the day someone
reruns a months-old benchmark). The check imports the modules the scripts name, in a child
Python started in bench/ as the scripts are. Beyond that, only a few scripts' pure helpers and
refusals are run here, never a measurement."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iorelay import proc_tree

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


IOR_CHECK = """
import json, sys
sys.path.insert(0, ".")
import vendor_tools as v
print(json.dumps({"hints": v.ior_hints_text({"cb_nodes": "3", "romio_cb_write": "automatic"}),
                  "parsed": v.parse_ior(sys.stdin.read())}))
"""

# The tail of an IOR 4 run (-a MPIIO -c --mpiio.showHints), as it prints it.
IOR_OUTPUT = """
hints returned from opened file {
\tcb_nodes = 3
\tcb_buffer_size = 4194304
}
write     191.06     1002.25    0.001764    256.00     256.00     0.002613   0.007982   0.000799
Summary of all tests:
Operation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev   Max(OPs)   Min(OPs)  Mean(OPs)     StdDev    Mean(s) Stonewall(s) Stonewall(MiB) Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt   blksiz    xsize aggs(MiB)   API RefNum
write         191.06     191.06     191.06       0.00     764.23     764.23     764.23       0.00    0.01047         NA            NA     0      2   2    1   0     0        1         0    0      4   262144   262144       2.0 MPIIO      0
"""  # noqa: E501


def test_ior_hints_file_and_summary() -> None:
    """bench/vendor_tools.py (bench/testbed_ior_mpiio.py's IOR runs): the hints file in IOR's
    syntax (IOR_HINT__MPI__KEY=VALUE, read by --mpiio.hintsFileName), IOR's summary parsed."""
    out = subprocess.run([sys.executable, "-c", IOR_CHECK], input=IOR_OUTPUT, cwd=BENCH,
                         capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    got = json.loads(out.stdout)
    assert got["hints"] == "IOR_HINT__MPI__cb_nodes=3\nIOR_HINT__MPI__romio_cb_write=automatic\n"
    hints = {"cb_nodes": "3", "cb_buffer_size": "4194304"}
    assert got["parsed"] == {"bandwidth_mib_s": 191.06, "time_s": 0.01047, "file_hints": hints}


@pytest.mark.parametrize(
    "bench",
    [
        ["collective_saturation.py"],
        ["collective_spread.py", "--component", "ompio"],
        ["ompio_overlap.py"],
    ],
)
def test_collective_benches_refuse_a_busy_machine(bench: list[str]) -> None:
    """bench/collective_saturation.py measures k, bench/collective_spread.py a spread point,
    bench/ompio_overlap.py OMPIO's overlap, only on a quiet machine: a load above --max-load
    for --wait-minutes is refused by name, before any run."""
    out = subprocess.run([sys.executable, *bench, "--max-load", "-1", "--wait-minutes", "0"],
                         cwd=BENCH, capture_output=True, text=True, timeout=120,
                         check=False)  # fmt: skip
    assert out.returncode == 2 and out.stdout == ""
    assert "load average stayed above --max-load -1.0" in out.stderr


OVERLAP_CHECK = """
import argparse, json, ompio_overlap as o
args = argparse.Namespace(aggregators=1, request=1 << 20, calls=2, cycle=4 << 20)
print(json.dumps({n: o.simulate(args, sim) for n, (_, sim) in o.SETTINGS.items()}))
"""


def test_overlap_bench_simulates_each_setting() -> None:
    """bench/ompio_overlap.py sets each measured fcoll setting beside the simulator's
    --ompio-async: with 3 cycles per call, vulcan's default (auto) overlaps as async does, and
    sync is slower."""
    out = subprocess.run([sys.executable, "-c", OVERLAP_CHECK], cwd=BENCH, capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    sim = json.loads(out.stdout)
    assert [sim[n]["ompio_async"] for n in ("sync", "async", "default")] == ["off", "on", "auto"]
    assert sim["default"]["overlapped_calls"] == sim["async"]["overlapped_calls"] == 2
    assert sim["sync"]["overlapped_calls"] == 0
    assert sim["sync"]["bandwidth_MiBps"] < sim["async"]["bandwidth_MiBps"]


SPINNING_CHECK = """
import json, collective_saturation as c
with c.spinning(2) as spinners:
    during = [s.poll() for s in spinners]
print(json.dumps({"during": during, "after": [s.poll() is not None for s in spinners]}))
"""


def test_saturation_bench_background_load_spins_and_stops() -> None:
    """--background-load N: N processes spinning on the CPU while the block runs, none after."""
    out = subprocess.run([sys.executable, "-c", SPINNING_CHECK], cwd=BENCH, capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    assert json.loads(out.stdout) == {"during": [None, None], "after": [True, True]}


def test_saturation_bench_spinners_die_with_a_killed_bench() -> None:
    """A bench killed outright (SIGKILL, no finally) leaves no spinner behind."""
    code = "import collective_saturation as c, time\nwith c.spinning(1) as s:\n" \
           "    print(s[0].pid, flush=True)\n    time.sleep(60)"  # fmt: skip
    with subprocess.Popen([sys.executable, "-c", code], cwd=BENCH, stdout=subprocess.PIPE,
                          text=True) as bench:  # fmt: skip
        assert bench.stdout is not None
        spinner = int(bench.stdout.readline())
        bench.kill()
    deadline = time.monotonic() + 30
    while spinner in proc_tree.live_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert spinner not in proc_tree.live_processes()


SETTING_CHECK = """
import json, testbed_collective as t
good = t.named_setting("bpa1m=mca:io_ompio_num_aggregators=1,mca:io_ompio_bytes_per_agg=1M")
mixed = t.named_setting("ind=independent,ionodes=1,hint:cb_config_list=*:1")
bad = []
for text in ("nothing", "x=hint:novalue", "x=independent,sieve", "advised=independent",
             "x=ionodes=2"):
    try:
        t.named_setting(text)
    except Exception as e:
        bad.append(str(e))
print(json.dumps({"good": good, "mixed": mixed, "bad": bad}))
"""


def test_named_setting_for_design_runs() -> None:
    """bench/testbed_collective.py --setting NAME=ITEM,...: a configuration from each MPI's
    defaults with the MCA parameters, hints, calls and I/O nodes named; sizes as 1M become bytes;
    a malformed item, or one of the bench's own names, is refused by name."""
    out = subprocess.run([sys.executable, "-c", SETTING_CHECK], cwd=BENCH, capture_output=True,
                         text=True, timeout=60, check=True)  # fmt: skip
    got = json.loads(out.stdout)
    assert got["good"] == [
        "bpa1m",
        {
            "ionodes": 0,
            "collective": True,
            "hints": {},
            "mca": {
                "OMPI_MCA_io_ompio_num_aggregators": "1",
                "OMPI_MCA_io_ompio_bytes_per_agg": "1048576",
            },
        },
    ]
    assert got["mixed"] == ["ind", {"ionodes": 1, "collective": False,
                                    "hints": {"cb_config_list": "*:1"}, "mca": {}}]  # fmt: skip
    items = "is none of hint:KEY=VALUE, mca:KEY=VALUE, independent, ionodes=0|1"
    assert got["bad"] == [
        "'nothing': NAME=ITEM,...",
        f"'x=hint:novalue': 'hint:novalue' {items}",
        f"'x=independent,sieve': 'sieve' {items}",
        "'advised=independent': advised is one of the bench's own names",
        f"'x=ionodes=2': 'ionodes=2' {items}",
    ]
