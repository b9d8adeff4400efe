"""Which of a lesson's episodes validate a compression, and which are held out from it.

Both are drawn in one seeded order (a hash of the lesson's id and the episode's), so the
same lesson holds out the same episodes on every attempt, and a rejected compression's
retry never gets to see them. A lesson with fewer than `MIN_TO_HOLD` episodes holds none
out (validation needs what there is), and says so.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from rose.loop.abstraction.replay import Case

#: Episodes a lesson needs before any is held out of validation.
MIN_TO_HOLD = 3


@dataclass(frozen=True)
class Split:
    """`sample`: the episodes replayed to validate; `held_out`: never shown to validation."""

    sample: list[Case] = field(default_factory=list)
    held_out: list[Case] = field(default_factory=list)
    note: str = ""


def _order(node_id: str, case: Case) -> str:
    return hashlib.sha256(f"{node_id}:{case.episode}".encode()).hexdigest()


def split(node_id: str, cases: Sequence[Case], *, sample: int, held_out: float) -> Split:
    """Up to `sample` episodes to validate on and a `held_out` share kept from them."""
    ordered = sorted(cases, key=lambda c: _order(node_id, c))
    if len(ordered) < MIN_TO_HOLD or held_out <= 0:
        why = (
            f"{len(ordered)} episode{'s' if len(ordered) != 1 else ''}: none held out "
            f"(fewer than {MIN_TO_HOLD})"
            if len(ordered) < MIN_TO_HOLD
            else "none held out (compress.held_out is 0)"
        )
        return Split(sample=ordered[:sample], held_out=[], note=why)
    k = max(1, math.floor(len(ordered) * held_out))
    return Split(sample=ordered[k:][:sample], held_out=ordered[:k])
