"""Snapshot comparison for text that reaches a model or a user.

Set UPDATE_SNAPSHOTS=1 to (re)write a snapshot after a deliberate change;
otherwise a missing or different snapshot fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"


def check(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path.name}; run with UPDATE_SNAPSHOTS=1 to create it"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} differs from its snapshot"
