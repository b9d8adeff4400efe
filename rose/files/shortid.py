"""Short lesson ids, as git shows commits: the block shows a prefix, every command takes one.

A generated id is `n_` and 20 hex characters; the injected block shows `n_` and the
first 8 of them, longer only where two lessons share those 8. A hand-chosen id is shown
whole. Anything that takes a lesson id takes a unique prefix of one too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rose.errors import RoseError

SHORT = 8  # hex characters after `n_` the block shows, unless two lessons share them
FULL = 20  # hex characters after `n_` in a generated id
_GENERATED = re.compile(r"^n_[0-9a-f]+$")


class AmbiguousId(RoseError):
    def __init__(self, prefix: str, candidates: list[str]):
        self.prefix = prefix
        self.candidates = candidates
        super().__init__(
            f"lesson id {prefix!r} is ambiguous: it begins {', '.join(candidates)}; "
            "give more of the id"
        )


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def shortest(ids: Iterable[str]) -> dict[str, str]:
    """Each id's shown form: the shortest prefix of at least `SHORT` hex characters that
    begins no other id (a hand-chosen id, or one no shorter, is its own shown form)."""
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for k, lid in enumerate(ordered):
        if not _GENERATED.match(lid) or len(lid) <= 2 + SHORT:
            out[lid] = lid
            continue
        near = [ordered[j] for j in (k - 1, k + 1) if 0 <= j < len(ordered)]
        need = max([2 + SHORT, *(_common(lid, o) + 1 for o in near)])
        out[lid] = lid[:need]
    return out


def is_short(lesson_id: str) -> bool:
    """Whether `lesson_id` looks like a generated id cut short (as the block shows it)."""
    return bool(_GENERATED.match(lesson_id)) and 2 + SHORT <= len(lesson_id) < 2 + FULL


def resolve(prefix: str, ids: Iterable[str]) -> str | None:
    """The one id in `ids` that is `prefix` or begins with it; None when none does.

    Raises AmbiguousId, naming the candidates, when several do.
    """
    pool = list(ids)
    if prefix in pool:
        return prefix
    found = sorted(i for i in pool if i.startswith(prefix))
    if len(found) > 1:
        raise AmbiguousId(prefix, found)
    return found[0] if found else None
