"""What forwarding costs collective MPI-IO on a machine, and whether a job should forward at
all. Pure functions over measured runs and the platform file's evidence
(bench/collective_forwarding.py measures it).

The evidence is a ladder per MPI (`collective.forwarding_by_mpi.MPI` in the platform file): for
a fixed calibration pattern (on the testbed none of the judged ones, though its 3 MiB step has
P2's shape) and a few call sizes, the median write bandwidth through 1 I/O node over the median
direct, with the two-sided Mann-Whitney p of the two sets of runs. The rule is the tie rule of
iorelay.option_ties: of options the evidence cannot tell apart, the cheapest, and direct access
(no I/O nodes) is the cheapest of all. So only a significant gain keeps the I/O nodes the job
asked for; a loss, or a difference the runs cannot tell from noise, sends it direct. A job that
needs its I/O nodes for another reason (the daemons' scheduling or isolation) keeps them
whatever the ladder says.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from iorelay import units

ALPHA = 0.05


@dataclass(frozen=True)
class Step:
    """One call size of the ladder: forwarded median / direct median, and its p."""

    bytes_per_call: int
    ratio: float
    p: float
    runs: int  # per side

    def significant_loss(self, alpha: float = ALPHA) -> bool:
        return self.ratio < 1 and self.p < alpha

    def significant_gain(self, alpha: float = ALPHA) -> bool:
        return self.ratio > 1 and self.p < alpha

    def to_json(self) -> dict[str, Any]:
        return {"bytes_per_call": units.format_bytes(self.bytes_per_call),
                "ratio": round(self.ratio, 3), "p": round(self.p, 4),
                "runs": self.runs}  # fmt: skip


@dataclass(frozen=True)
class Ladder:
    mpi: str
    steps: tuple[Step, ...]  # ascending call sizes
    source: str  # the pattern, the date and where the runs are

    def nearest(self, bytes_per_call: int) -> Step:
        """The step whose call size is nearest in log size (the smaller on a tie)."""
        return min(self.steps, key=lambda s: (abs(math.log(s.bytes_per_call / bytes_per_call)),
                                              s.bytes_per_call))  # fmt: skip


def ladder_from_runs(mpi: str, runs: Iterable[tuple[int, int, float]], source: str) -> Ladder:
    """(bytes per call, I/O nodes 0 or 1, MiB/s) runs -> the ladder of forwarded / direct."""
    from scipy import stats  # only the bench builds ladders: `iorelay hints` reads them

    by: dict[tuple[int, int], list[float]] = {}
    for size, ionodes, mib_s in runs:
        by.setdefault((int(size), int(ionodes)), []).append(float(mib_s))
    steps = []
    for size in sorted({s for s, _ in by}):
        direct, forwarded = by.get((size, 0), []), by.get((size, 1), [])
        if len(direct) < 2 or len(forwarded) < 2:
            raise ValueError(f"{units.format_bytes(size)}: fewer than 2 runs direct or forwarded")
        ratio = statistics.median(forwarded) / statistics.median(direct)
        p = float(stats.mannwhitneyu(forwarded, direct, alternative="two-sided").pvalue)
        steps.append(Step(size, ratio, p, min(len(direct), len(forwarded))))
    return Ladder(mpi, tuple(steps), source)


def ladder_from_json(mpi: str, doc: Mapping[str, Any]) -> Ladder:
    """The platform file's collective.forwarding_by_mpi.MPI."""
    steps = tuple(sorted((Step(units.parse_bytes(s["bytes_per_call"]), float(s["ratio"]),
                               float(s["p"]), int(s["runs"])) for s in doc["ladder"]),
                         key=lambda s: s.bytes_per_call))  # fmt: skip
    if not steps:
        raise ValueError(f"collective.forwarding_by_mpi.{mpi}: an empty ladder")
    return Ladder(mpi, steps, str(doc.get("source", "")))


def ladder_to_json(ladder: Ladder) -> dict[str, Any]:
    return {"ladder": [s.to_json() for s in ladder.steps], "source": ladder.source}


@dataclass(frozen=True)
class Decision:
    ionodes: int  # the I/O nodes to use; 0: direct
    reason: str
    evidence: str  # "" without a ladder


def decide(
    asked: int, bytes_per_call: int, ladder: Ladder | None, keep: bool = False, mpi: str = ""
) -> Decision:
    """Forward through the `asked` I/O nodes, or go direct (0), for one job."""
    if asked == 0:
        said = "" if ladder is None else _said(ladder, bytes_per_call)
        return Decision(0, "direct: no I/O nodes asked for (--ionodes 0)", said)
    if ladder is None and not mpi:
        return Decision(asked, "forward as asked: the measured costs of forwarding are per "
                        "MPI (collective.forwarding_by_mpi); without --mpi none applies",
                        "")  # fmt: skip
    if ladder is None:
        return Decision(asked, f"forward as asked: no evidence of what "
                        f"forwarding costs collective writes with {mpi} on this platform (no "
                        f"collective.forwarding_by_mpi.{mpi}; measure it with "
                        f"bench/collective_forwarding.py --component {mpi})", "")  # fmt: skip
    step = ladder.nearest(bytes_per_call)
    evidence = _said(ladder, bytes_per_call)
    if keep:
        return Decision(asked, "forward as asked (--keep-ionodes: "
                        f"needed for scheduling or isolation), though {_measured(ladder, step)}",
                        evidence)  # fmt: skip
    if step.significant_gain():
        return Decision(asked, f"forward as asked: {_measured(ladder, step)}, a significant "
                        "gain", evidence)  # fmt: skip
    verdict = ("a significant loss" if step.significant_loss()
               else "not a significant gain, and direct access costs no I/O nodes")  # fmt: skip
    return Decision(0, f"direct: {_measured(ladder, step)}, {verdict}", evidence)


def _measured(ladder: Ladder, step: Step) -> str:
    return (
        f"through 1 I/O node collective writes with {ladder.mpi} were measured at "
        f"{step.ratio:.2f}x direct (calibration calls of "
        f"{units.format_bytes(step.bytes_per_call)}, p {_p(step.p)}, {step.runs} runs each)"
    )


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _said(ladder: Ladder, bytes_per_call: int) -> str:
    steps = ", ".join(f"{units.format_bytes(s.bytes_per_call)} {s.ratio:.2f}x (p {_p(s.p)})"
                      for s in ladder.steps)  # fmt: skip
    near = units.format_bytes(ladder.nearest(bytes_per_call).bytes_per_call)
    low, high = ladder.steps[0].bytes_per_call, ladder.steps[-1].bytes_per_call
    # (Beyond half the smallest or twice the largest size measured, the nearest step is a guess.)
    outside = (
        f", outside the sizes measured ({units.format_bytes(low)} to "
        f"{units.format_bytes(high)}): an extrapolation"
        if bytes_per_call * 2 < low or bytes_per_call > 2 * high
        else ""
    )
    return (
        f"forwarding ({ladder.mpi}, through 1 I/O node / direct): {steps}; the job's "
        f"{units.format_bytes(bytes_per_call)} calls take the nearest size, {near}{outside} "
        f"({ladder.source})"
    )
