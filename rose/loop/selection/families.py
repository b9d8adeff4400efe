"""Families as recall's top level, for a store whose apexes do not fit one round trip.

Past `recall.apex_chunks` questions of `recall.max_candidates` apexes (asked in parallel,
one round trip), recall offers each family of two or more apexes as one
line (its name and a gist), and a family with a single apex as that apex; the model opens
the families that bear on the prompt and is then asked about their apexes. A family's gist
is written by the model (`family_gist`) from its apexes' lines and cached as a judgement on
this machine: the cache key holds those lines, so a gist is recomputed exactly when the
family's apexes change. The prompt path never asks for one (its calls are the relevance
budget's): it reads the cache, and a family whose gist is not written yet is shown by the
titles of its first apexes, a listing rather than a judgement. `refresh` writes the missing
gists, off the prompt path (at a session's end, and before a benchmark measures).

Everything offered is in a stable order, oldest first (a family by its first lesson, a
lesson by its creation), so what a new lesson or family changes comes last and the
candidate lists of successive prompts share their longest prefix (the hosts' prompt caches
key on it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rose.store.facade import Row, Store

if TYPE_CHECKING:
    from rose.judge.base import Judge

PREFIX = "family:"  # a family line's candidate id: never a lesson id (those start `n_`)
_TITLES = 3  # titles shown for a family whose gist is not written yet


def stable(items: list[Row]) -> list[Row]:
    """`items` oldest first (ties by id): a new one lands at the end."""
    return sorted(items, key=lambda i: (str(i.get("created") or ""), i["id"]))


def line(item: Row) -> dict[str, str]:
    """The one-line form of a lesson or family item: what a relevance question offers."""
    return {"id": item["id"], "title": item["title"], "gist": item.get("gist") or ""}


def is_family(item: Row) -> bool:
    return bool(item.get("members"))


def firsts(rows: list[Row]) -> dict[str, str]:
    """Each family's first lesson's creation time (from `families` rows): where the family
    sits in stable order."""
    return {r["family"]: str(r.get("first") or "") for r in rows}


def groups(apexes: list[Row], first: dict[str, str]) -> list[tuple[str, list[Row]]]:
    """(family, its apexes in stable order), families in stable order (by first lesson)."""
    by_family: dict[str, list[Row]] = {}
    for apex in apexes:
        by_family.setdefault(apex["family"], []).append(apex)
    order = sorted(by_family, key=lambda f: (first.get(f, ""), f))
    return [(f, stable(by_family[f])) for f in order]


def gist_context(family: str, members: list[Row], limit: int) -> dict[str, Any]:
    """The `family_gist` question about one family: its first `limit` apexes' lines (a
    larger family is summed up from its oldest apexes, so one call stays bounded too)."""
    return {"family": family, "lessons": [line(m) for m in members[:limit]]}


def top_level(store: Store, apexes: list[Row], family_rows: list[Row], judge: Judge) -> list[Row]:
    """The walk's first frontier when the apexes do not fit one round trip: family lines (and
    single apexes), stable order. A family item keeps its apexes under ``members``."""
    from rose.judge.base import FAMILY_GIST

    limit = store.config.recall.max_candidates
    first = firsts(family_rows)
    out: list[Row] = []
    for family, members in groups(apexes, first):
        if len(members) == 1:
            out.append(members[0])
            continue
        answer = judge.cached(FAMILY_GIST, gist_context(family, members, limit))
        gist = answer.gist if answer is not None else _listing(members)
        out.append(
            {
                "id": PREFIX + family,
                "title": family,
                "gist": gist,
                "family": family,
                "members": members,
                "level": max(int(m.get("level") or 0) for m in members) + 1,
                "created": first.get(family, ""),
                "gisted": answer is not None,
            }
        )
    return out


def _listing(members: list[Row]) -> str:
    titles = "; ".join(m["title"] for m in members[:_TITLES])
    more = f" and {len(members) - _TITLES} more" if len(members) > _TITLES else ""
    return f"Lessons such as: {titles}{more}."


def needed(store: Store, apexes: list[Row]) -> bool:
    """Whether recall offers families at all: the apexes do not fit the questions one
    round trip may ask (`recall.apex_chunks` in parallel, within `recall.judge_calls`)."""
    rc = store.config.recall
    return len(apexes) > rc.max_candidates * max(1, min(rc.apex_chunks, rc.judge_calls))


def refresh(store: Store, judge: Judge, *, limit: int | None = None) -> int:
    """Write the gist of every family whose apexes changed since its gist was written (or
    that has none), at most `limit`; returns how many were asked. Nothing when the apexes
    fit one round trip (no family line is offered then), nor when the store is served whole
    (`recall.whole_tokens`: recall serves it unfiltered and asks no question at all)."""
    if store.view().get("fits"):
        return 0
    apexes, family_rows = store.reads(("apexes", {"scope": ""}), ("families", {}))
    if not needed(store, apexes):
        return 0
    from rose.judge.base import FAMILY_GIST

    most = store.config.recall.max_candidates
    asked = 0
    for family, members in groups(apexes, firsts(family_rows)):
        if len(members) < 2 or (limit is not None and asked >= limit):
            continue
        ctx = gist_context(family, members, most)
        if judge.cached(FAMILY_GIST, ctx) is None:
            judge.ask(FAMILY_GIST, ctx)
            asked += 1
    return asked
