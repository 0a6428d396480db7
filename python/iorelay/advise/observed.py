"""A pattern read from a run's records (a daemon trace, a Darshan log) rather than typed: its
pattern keys as `--pattern` takes them, and the evidence each key was read from, printed with
the advice so that a user can check it."""

from __future__ import annotations

from dataclasses import dataclass, field


class ObservedError(ValueError):
    """Records that do not describe a pattern (no data requests, a missing count); the message
    names what is missing."""


@dataclass(frozen=True)
class Observed:
    """`keys`: pattern keys (layout, spatiality, request, ranks, operation, odirect; nodes when
    the records hold it). `evidence`: one line per key or fact, as printed. `notes`: facts that
    are not pattern keys (the file system, the share of time spent in I/O), by name."""

    keys: dict[str, str]
    evidence: list[str] = field(default_factory=list)
    notes: dict[str, object] = field(default_factory=dict)

    def pattern_text(self, nodes: int | None = None, ranks: int | None = None) -> str:
        """The `--pattern` text; `nodes`/`ranks` when given replace what the records say.
        ObservedError when the node count is known neither way."""
        keys = dict(self.keys)
        if ranks is not None:
            keys["ranks"] = str(ranks)
        if nodes is not None:
            keys["nodes"] = str(nodes)
        if "nodes" not in keys:
            raise ObservedError("the records do not hold the node count: give --nodes N")
        return ",".join(f"{k}={v}" for k, v in keys.items())


def majority(share: float) -> bool:
    """True when a share of bytes or requests is at least half."""
    return share >= 0.5
