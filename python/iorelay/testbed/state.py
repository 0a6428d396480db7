"""The testbed's state file: every object `up` creates is recorded before it is created.

`down` undoes the records in reverse order, so it removes exactly what `up` made, also after an
`up` that stopped half way; each undo tolerates an object that is already gone (idempotent).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iorelay.testbed.plan import RUN_DIR

STATE_FILE = RUN_DIR / "state.json"
STATE_VERSION = 1


@dataclass
class State:
    path: Path = STATE_FILE
    doc: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path = STATE_FILE) -> State | None:
        try:
            doc = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        if doc.get("version") != STATE_VERSION:
            raise RuntimeError(f"{path}: state version {doc.get('version')} is not {STATE_VERSION}")
        return cls(path, doc)

    @classmethod
    def create(cls, path: Path, config: dict[str, Any], hosts: list[dict[str, Any]]) -> State:
        state = cls(path, {"version": STATE_VERSION, "config": config, "hosts": hosts})
        state.doc.update(phase="starting", steps=[], facts={})
        return state

    @property
    def steps(self) -> list[dict[str, Any]]:
        return self.doc.setdefault("steps", [])

    def record(self, kind: str, **params: Any) -> dict[str, Any]:
        """Appends a step and writes the file (atomically) before the caller acts on it."""
        step = {"kind": kind, **params}
        self.steps.append(step)
        self.save()
        return step

    def update(self, step: dict[str, Any], **params: Any) -> None:
        step.update(params)
        self.save()

    def set(self, **facts: Any) -> None:
        self.doc.setdefault("facts", {}).update(facts)
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.doc, indent=2) + "\n")
        os.replace(tmp, self.path)
