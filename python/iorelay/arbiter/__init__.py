"""The arbiter of a shared pool of I/O nodes (issue 52): which job gets how many I/O nodes.

Policy code only, pure functions of their inputs (no OS calls, no threads): the exact
multiple-choice knapsack (knapsack.py), the baselines it is compared with (baselines.py), the
decision records it logs (decision.py), and the table-driven evaluation over FORGE's measured
patterns (patterns.py, predictor.py, jobsets.py, replay.py, evaluation.py). docs/arbitration.md
describes the policies and the figures measured.
"""
