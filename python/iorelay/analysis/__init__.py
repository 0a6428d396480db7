"""`iorelay analyze`: which options (I/O node counts, schedulers) matter, pattern by pattern.

Modules, one job each: schema (column names and metrics), reader (files to one DataFrame), stats
(tests and effect sizes), compute (per-pattern results as DataFrames), plots (DataFrames to
Figures), report (self-contained HTML), summary (terminal tables), cli (the subcommand).
"""
