"""The report's answer: runs counted as runs, and one sentence per pattern."""

from __future__ import annotations

import re

import pandas as pd

from iorelay.analysis import answer, compute, labels


def runs_with_two_phases() -> pd.DataFrame:
    """3 options x 5 repetitions, each run measured a write and a read phase: 15 runs."""
    rows = []
    for ionodes, bw in ((0, 100.0), (1, 180.0), (2, 150.0)):
        for rep in range(5):
            for op, scale in (("write", 1.0), ("read", 2.0)):
                rows.append(
                    {
                        "layout": "shared",
                        "spatiality": "strided",
                        "nodes": 4,
                        "processes": 16,
                        "request_bytes": 8192,
                        "operation": op,
                        "odirect": True,
                        "ionodes": ionodes,
                        "repetition": rep,
                        "bandwidth_mib_s": scale * bw + rep,
                    }
                )
    return pd.DataFrame(rows)


def test_a_run_with_a_write_and_a_read_phase_counts_once() -> None:
    analysis = compute.analyze(runs_with_two_phases(), option="ionodes")
    assert len(analysis.runs) == 30
    assert answer.count_runs(analysis) == 15


def test_each_pattern_gets_its_answer_in_a_sentence() -> None:
    analysis = compute.analyze(runs_with_two_phases(), option="ionodes")
    sentences = answer.pattern_sentences(analysis)
    assert len(sentences) == 2  # the write and the read pattern
    for s in sentences:
        assert "best I/O nodes 1 (median" in s and "times direct access" in s
        assert re.search(r"median bandwidth \d+\.\d MiB/s\), 1\.7[89] times direct access", s), s


def test_where_the_runs_cannot_tell_the_options_apart_the_answer_says_so() -> None:
    """3 runs per option, as the testbed demo does: the write pattern's options overlap (no
    option significantly worse), the read pattern's are far apart."""
    runs = runs_with_two_phases()
    runs = runs[runs["repetition"] < 3].copy()
    write = runs["operation"] == "write"
    runs.loc[write, "bandwidth_mib_s"] = (
        100.0 + runs.loc[write, "repetition"] * 30 + runs.loc[write, "ionodes"]
    )
    analysis = compute.analyze(runs, option="ionodes")
    by_op = dict(
        zip(analysis.patterns["operation"], answer.pattern_sentences(analysis), strict=True)
    )
    assert by_op["write"].startswith(
        "write: the runs cannot tell the choices of I/O nodes apart (Kruskal-Wallis p = "
    )
    assert (
        "3 runs per option); the highest median is 2 (median bandwidth 132.0 MiB/s"
        in by_op["write"]
    )
    assert "best I/O nodes 1" in by_op["read"] and "cannot tell" not in by_op["read"]
    note = answer.undecided_note(analysis)
    assert note.startswith("In 1 of 2 patterns the runs cannot tell the options apart")
    assert "With 3 runs per option" in note
    decided = compute.analyze(runs_with_two_phases(), option="ionodes")
    assert answer.undecided_note(decided) == ""


def test_readable_headings() -> None:
    analysis = compute.analyze(runs_with_two_phases(), option="ionodes")
    shown = answer.readable(analysis.best, "ionodes")
    assert "share_best" not in shown.columns and "share of patterns where best" in shown.columns
    assert "0 (direct)" in set(shown.iloc[:, 0])


def test_pattern_key_names_the_access_when_only_spatiality_varies() -> None:
    """A sweep of one shared file, contiguous and strided: each label says which, in full."""
    shown = ["spatiality", "request_bytes", "operation"]
    contiguous = {"layout": "shared", "spatiality": "contiguous", "request_bytes": 8192,
                  "operation": "read"}  # fmt: skip
    strided = {**contiguous, "spatiality": "strided"}
    assert labels.key(contiguous, shown).startswith("shared-contiguous ")
    assert labels.key(strided, shown).startswith("shared-strided ")
    assert labels.key({"spatiality": "strided", "operation": "read"}, ["spatiality"]) == "strided"
