"""The internal, format-independent table of runs that every analysis step reads.

The reader maps FORGE files and iorelay's own results onto these column names; nothing after the
reader knows which format a run came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# Columns that together identify an access pattern, in display order. A column absent from the
# input is simply not part of the pattern.
PATTERN_COLUMNS: tuple[str, ...] = (
    "layout",  # "fpp" (file per process) or "shared"
    "spatiality",  # "contiguous" or "strided" (1D-strided)
    "nodes",  # compute nodes
    "processes",  # MPI processes in total
    "request_bytes",  # request size
    "operation",  # "write" or "read"
    "odirect",  # bool
    "stonewall_s",  # stonewall, seconds (0 = none)
    "api",  # "posix" or "mpiio" (iorelay's MPI-IO runs only)
    "collective",  # bool: collective MPI-IO calls
    "hints",  # MPI-IO hints beyond the aggregator count, "key=value,..."
)

# Columns that describe a configuration choice. The one being compared is the option; any other
# present in the input is held fixed, i.e. becomes part of the pattern.
# `settings` names a set of settings compared as a whole (an MPI's defaults against advised
# hints: bench/testbed_collective.py).
OPTION_COLUMNS: tuple[str, ...] = (
    "ionodes",
    "scheduler",
    "placement",
    "aggregators",
    "stripes",
    "settings",
)

DEFAULT_ALPHA = 0.05

# Other names accepted for an option column on the command line.
OPTION_ALIASES: dict[str, str] = {"forwarders": "ionodes"}

# Bookkeeping columns the reader keeps when present: `source` says whether a run was measured or
# simulated (part of the pattern only when the input has both), `file` which file it came from.
RUN_COLUMNS: tuple[str, ...] = ("repetition", "source", "file")
SOURCES: tuple[str, ...] = ("measured", "simulated")


class AnalysisError(ValueError):
    """Input that cannot be analysed: unknown format, missing columns, unknown option or metric."""


@dataclass(frozen=True)
class Metric:
    """A measured quantity: its column, whether more is better, and how to label it."""

    name: str
    column: str
    higher_is_better: bool
    label: str


METRICS: dict[str, Metric] = {
    "bandwidth": Metric("bandwidth", "bandwidth_mib_s", True, "bandwidth (MiB/s)"),
    "time": Metric("time", "time_s", False, "time (s)"),
}
MEASUREMENT_COLUMNS: tuple[str, ...] = tuple(m.column for m in METRICS.values())


def option_column(name: str) -> str:
    """The internal column for an option name given by the user (`forwarders` → `ionodes`)."""
    return OPTION_ALIASES.get(name, name)


def pattern_columns(columns: Iterable[str], option: str) -> list[str]:
    """Pattern columns present in `columns`: the pattern dimensions plus every other option."""
    present = set(columns)
    dims = [c for c in PATTERN_COLUMNS if c in present]
    dims += [c for c in OPTION_COLUMNS if c in present and c != option]
    return dims
