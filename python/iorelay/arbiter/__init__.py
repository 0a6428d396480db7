"""The arbiter of a shared pool of I/O nodes: which job gets how many I/O nodes.

Policy code only, pure functions of their inputs (no OS calls, no threads): the exact
multiple-choice knapsack (knapsack.py), the guard against prediction error (guard.py), the
baselines it is compared with (baselines.py), the decision records it logs (decision.py), the
predictions it is fed (predictor.py; advise's learned model through advised.py), the
table-driven evaluation over FORGE's measured patterns (patterns.py, jobsets.py, replay.py,
evaluation.py) and the evaluation on jobs simulated together (simulated.py).
docs/arbitration.md describes the policies and the figures measured.
"""
