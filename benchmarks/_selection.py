"""What an arm held and how it chose on one prompt (`rose.sim.hosts.causes.Selection`), read from
its store, so that each failed first attempt can be put down to one cause.

For a ROSE arm the prompt's recall is asked again, in this process, with a judge of its own
(its own cache and event log, so the arm's figures do not count it): the simulated model's
answers are a pure function of the prompt, so the second asking sees what the hook saw.
Asked once more with the selection rules off, it says which lessons a rule turned away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rose.loop.selection.recall import recall
from rose.sim.hosts.causes import Selection, Unit, lessons_in
from rose.store import view as recall_view
from rose.store.facade import Store

CHOSEN = ("relevant", "maybe", "unresolved")  # the verdicts recall serves, budget allowing


def level0_items(store: Store) -> list[dict]:
    """Every level-0 lesson the store holds (whatever its status but archived), rendered as
    the prompt hook renders a lesson: what the `-learned` arms serve from ROSE's store."""
    ids = [r["id"] for r in store.read("lessons_all") if r["level"] == 0]
    if not ids:
        return []
    rows = [r["lesson"] for r in store.lesson_rows(ids)]
    kept = [r for r in rows if r["status"] != "archived"]
    return sorted((recall_view.item(r) for r in kept), key=lambda i: i["id"])


def served_ids(block: str, ids: Sequence[str]) -> set[str]:
    """Which of `ids` the block holds: it shows each lesson by a prefix of its id."""
    shown = lessons_in(block)
    return {i for i in ids if any(i.startswith(s) for s in shown)}


def of_items(items: Sequence[dict], block: str, chosen: Sequence[str] | None = None) -> Selection:
    """A fixed library of rendered lessons, all of them (`chosen` None) or those chosen."""
    ids = [i["id"] for i in items]
    served = served_ids(block, ids)
    picked = set(ids if chosen is None else chosen)
    return Selection(
        stored="\n\n".join(i["full"] for i in items),
        units=tuple(Unit(i["id"], i["title"], i["gist"], i["full"]) for i in items),
        served=frozenset(served),
        unchosen=frozenset(set(ids) - picked),
        over_budget=frozenset(picked - served),
    )


def of_rose(store: Store, prompt: str, block: str, judge: Callable[[], Any]) -> Selection:
    """What ROSE's store held for `prompt` and how its recall chose (`judge()` makes the
    judge the second asking uses)."""
    with store.graph() as g:
        ids = [r["id"] for r in g.q("lessons_all")]
        rows = {r["lesson"]["id"]: r["lesson"] for r in store.lesson_rows(ids, g)}
        apexes = g.q("apexes", scope="")
        below = {a["id"]: [r["id"] for r in g.q("subtree", id=a["id"])] for a in apexes}
    units = []
    for a in apexes:
        parts = []
        for i in below[a["id"]]:
            row = rows.get(i) or {}
            parts += [row.get("body") or "", *(row.get("patches") or [])]
        units.append(Unit(a["id"], a["title"], a["gist"], "\n".join(parts)))
    shown = lessons_in(block)
    served = {a for a, sub in below.items() if any(i.startswith(s) for i in sub for s in shown)}
    stored = "\n".join(r.get("body") or "" for r in rows.values())
    unchosen: set[str] = set()
    over: set[str] = set()
    ruled: set[str] = set()
    # recall's verdicts name lessons at any level (the walk descends): each counts for the
    # top-level lessons it is under
    tops: dict[str, set[str]] = {}
    for apex, sub in below.items():
        for i in sub:
            tops.setdefault(i, set()).add(apex)

    def lifted(ids: set[str]) -> set[str]:
        return {a for i in ids for a in tops.get(i, ())}

    asked = recall(store, prompt, judge=judge(), deadline_s=3600)
    if asked.verdicts or asked.degraded:  # the model chose (the store outgrew the budget)
        picked = lifted({v.id for v in asked.verdicts if v.verdict in CHOSEN})
        kept = lifted({i["id"] for i in asked.chosen})
        if asked.degraded:  # no judgement: what the ranking left out, it left for the budget
            picked = set(below)
        over = picked - kept
        unchosen = set(below) - picked - kept
        if asked.rules and unchosen:
            bare = Store(store.project.root if store.project else None, _global(store))
            bare.config = bare.config.model_copy(
                update={"routing": bare.config.routing.model_copy(update={"enabled": False})}
            )
            free = recall(bare, prompt, judge=judge(), deadline_s=3600)
            ruled = unchosen & lifted({v.id for v in free.verdicts if v.verdict in CHOSEN})
    return Selection(
        stored=stored,
        units=tuple(units),
        served=frozenset(served),
        unchosen=frozenset(unchosen),
        ruled_out=frozenset(ruled),
        over_budget=frozenset(over),
    )


def _global(store: Store) -> Path | None:
    return store.global_.root if store.global_ else None
