"""The one tie rule for predicted bandwidths of a pattern's options (how many I/O nodes): which
options a prediction cannot tell apart, and which one to choose from them. Shared by the
simulator's scores (sim_score) and `iorelay advise`, so that both count ties the same way.
"""

from __future__ import annotations

from collections.abc import Mapping

# Two predicted bandwidths are tied when the lower is within this share of the higher: 3%,
# the spread of the noise-free simulator under a change of request cap on a tied pattern
# (174-179 MiB/s, docs/simulator.md), and well inside FORGE's run-to-run spread.
TIE_TOLERANCE = 0.03


def tie_set(predicted: Mapping[int, float], tolerance: float = TIE_TOLERANCE) -> list[int]:
    """The options whose predicted bandwidth is at least (1 - tolerance) x the best predicted
    one, sorted by option (fewest I/O nodes first). Every option is measured against the best
    one, never against its neighbour, so the set does not grow by chaining near-equal steps.
    A prediction that is not a number counts as 0."""
    if not predicted:
        return []
    values = {k: (v if v == v else 0.0) for k, v in predicted.items()}  # NaN -> 0
    best = max(values.values())
    if best <= 0:
        return sorted(values)
    return sorted(k for k, v in values.items() if v >= (1.0 - tolerance) * best)


def cannot_tell(predicted: Mapping[int, float], tolerance: float = TIE_TOLERANCE) -> bool:
    """True when the prediction is flat: every option of two or more is in the tie set, so it
    gives no reason to prefer any of them. A flat prediction must be reported as "cannot tell",
    not turned into a choice."""
    return len(predicted) > 1 and len(tie_set(predicted, tolerance)) == len(predicted)


def choose(predicted: Mapping[int, float], tolerance: float = TIE_TOLERANCE) -> int:
    """The cheapest option of the tie set: the fewest I/O nodes among those predicted equal to
    the best (0, direct access, is cheapest of all). Callers check cannot_tell first."""
    tied = tie_set(predicted, tolerance)
    if not tied:
        raise ValueError("no options to choose from")
    return tied[0]


def choose_with_margin(
    predicted: Mapping[int, float], margin: float, tolerance: float = TIE_TOLERANCE
) -> int:
    """Direct access (option 0) only when its predicted bandwidth is at least (1 + margin) x
    the best forwarded option's; otherwise the cheapest of the forwarded options' tie set. A
    lead of direct within the margin is one the model cannot be trusted to tell, and the rule
    fixed in advance for it is to forward. margin = -tolerance is choose() itself (positive
    predictions); margin = inf never chooses direct. Without option 0 or a forwarded option:
    choose()."""
    forwarded = {k: v for k, v in predicted.items() if k != 0}
    if 0 not in predicted or not forwarded:
        return choose(predicted, tolerance)
    direct = predicted[0] if predicted[0] == predicted[0] else 0.0
    best = max((v if v == v else 0.0) for v in forwarded.values())
    if direct > 0 and direct >= (1.0 + margin) * best:
        return 0
    return choose(forwarded, tolerance)
