"""Markdown tables of result frames, for the results pages that benchmarks write."""

from __future__ import annotations

import pandas as pd


def frame_table(table: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (floats with 3 decimals)."""

    def cell(v: object) -> str:
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    head = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "---|" * len(table.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *body])
