"""Where the long benchmarks leave a table: printed, and written to bench/results/NAME."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def publish(name: str, lines: list[str]) -> None:
    """Prints `lines` as one table and writes it to bench/results/`name`."""
    table = "\n".join(lines) + "\n"
    print(table)
    (RESULTS / name).write_text(table)
