"""Where the long benchmarks leave a table: printed, and written to bench/results/NAME."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def counts(by_name: dict[str, int]) -> str:
    """A daemon's counts by name (its requests by op, say) as "name n, name n", sorted."""
    return ", ".join(f"{k} {v}" for k, v in sorted(by_name.items()))


def publish(name: str, lines: list[str]) -> None:
    """Prints `lines` as one table and writes it to bench/results/`name`."""
    table = "\n".join(lines) + "\n"
    print(table)
    (RESULTS / name).write_text(table)
