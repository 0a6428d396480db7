"""Runs in a child process only (`python -m iorelay.advise.darshan_child LOG`): reads one Darshan
log with pydarshan and prints what the advisor needs from it as one JSON object, so that a log
that hangs or aborts the parser costs the child, not `iorelay advise` (darshan_input.py).

Exit 0 with the JSON on standard output; exit 3 with one line on standard error when pydarshan
refuses the log."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# The counters kept per record, by module ("{P}" is the module's counter prefix).
COUNTERS = (
    "{P}_BYTES_READ", "{P}_BYTES_WRITTEN", "{P}_MODE",
    *(f"{{P}}_ACCESS{i}_ACCESS" for i in range(1, 5)),
    *(f"{{P}}_ACCESS{i}_COUNT" for i in range(1, 5)),
)  # fmt: skip
POSIX_COUNTERS = (
    "POSIX_READS", "POSIX_WRITES", "POSIX_CONSEC_READS", "POSIX_CONSEC_WRITES",
    "POSIX_SEQ_READS", "POSIX_SEQ_WRITES",
)  # fmt: skip
MPIIO_COUNTERS = (
    "MPIIO_INDEP_READS", "MPIIO_INDEP_WRITES", "MPIIO_COLL_READS", "MPIIO_COLL_WRITES",
)  # fmt: skip
FCOUNTERS = (
    "{P}_F_READ_TIME", "{P}_F_WRITE_TIME", "{P}_F_META_TIME",
    "{P}_F_READ_START_TIMESTAMP", "{P}_F_READ_END_TIMESTAMP",
    "{P}_F_WRITE_START_TIMESTAMP", "{P}_F_WRITE_END_TIMESTAMP",
)  # fmt: skip
MODULES = {"POSIX": "POSIX", "MPI-IO": "MPIIO"}


def module_rows(report: Any, module: str) -> list[dict[str, Any]]:
    """One dict per record of `module`: rank, file name, and the kept counters."""
    prefix = MODULES[module]
    if len(report.records[module]) == 0:  # a damaged module region reads as no records
        return []
    frames = report.records[module].to_df()
    counters, fcounters = frames["counters"], frames["fcounters"]
    names = [c.format(P=prefix) for c in COUNTERS]
    names += list(POSIX_COUNTERS if module == "POSIX" else MPIIO_COUNTERS)
    names += [c for c in counters.columns if c.startswith(f"{prefix}_SIZE_")]
    fnames = [c.format(P=prefix) for c in FCOUNTERS]
    rows = []
    for (_, c), (_, f) in zip(counters.iterrows(), fcounters.iterrows(), strict=True):
        row: dict[str, Any] = {"rank": int(c["rank"]), "name": report.name_records.get(c["id"], "")}
        row.update({n: int(c[n]) for n in names if n in c})
        row.update({n: float(f[n]) for n in fnames if n in f})
        rows.append(row)
    return rows


def summary(path: str) -> dict[str, Any]:
    import darshan

    # Opened with `with`: a report left to the garbage collector while another is opened can
    # hang pydarshan.
    with darshan.DarshanReport(path, read_all=False) as report:
        job = report.metadata["job"]
        modules = report.modules
        out: dict[str, Any] = {
            "size_bytes": Path(path).stat().st_size,
            "log_version": job.get("log_ver"),
            "nprocs": int(job["nprocs"]),
            "run_time_s": float(job.get("run_time") or 0.0),
            "modules": {
                name: {"len": int(m["len"]), "partial": bool(m.get("partial_flag"))}
                for name, m in modules.items()
            },
            "mounts": [list(m) for m in report.data.get("mounts", [])],
            "records": {},
        }
        for module in MODULES:
            if module in modules:
                report.mod_read_all_records(module)
                out["records"][module] = module_rows(report, module)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m iorelay.advise.darshan_child LOG", file=sys.stderr)
        return 2
    try:
        result = summary(argv[0])
    except Exception as e:  # pydarshan raises many kinds on a damaged log; one line back
        print(f"{type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        return 3
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
