"""Contradictions the user settles: `rose conflicts` lists them, `rose resolve` settles one.

Consolidation never settles a contradiction itself: both lessons stay servable, disputed,
carrying the question. `resolve(store, ID)` says ID holds: it is kept (active again once no
dispute is left on it) and every lesson it disputes is superseded, out of recall but still
on disk. `resolve(store, ID, drop=True)` says the opposite: ID is superseded and the lessons
it disputes are kept. Either way the dispute links between them go from both sides, and a
lesson's question goes once it disputes nothing more (one still disputing a third lesson
keeps its status and its question).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rose.errors import RoseError
from rose.models import Node
from rose.store.facade import Row, Store


@dataclass
class Resolved:
    kept: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    question: str = ""


def conflicts(store: Store) -> list[Row]:
    """Each lesson in an unresolved contradiction: id, title, scope, question, and the ids and
    titles of the lessons it disputes (`against`)."""
    rows = store.read("conflicts")
    titles = {r["id"]: r["title"] for r in rows}
    return [
        {
            "id": r["id"],
            "title": r["title"],
            "scope": r["scope"],
            "question": r["question"],
            "against": [{"id": i, "title": titles.get(i, "")} for i in sorted(r["against"])],
        }
        for r in rows
    ]


def resolve(store: Store, lesson_id: str, *, drop: bool = False) -> Resolved:
    """Settle the contradictions of `lesson_id` (a unique prefix will do): it holds, or with
    `drop` the lessons it disputes do."""
    node = store.get(lesson_id)
    rows = [r for r in store.read("conflicts") if r["id"] == node.id]
    against = sorted(set(node.disputes) | {i for r in rows for i in r["against"]})
    if not against:
        raise RoseError(
            f"{node.id} disputes no lesson: nothing to resolve; `rose conflicts` lists the "
            "contradictions still open"
        )
    others = [store.get(i) for i in against]
    question = node.conflict
    node.disputes = [i for i in node.disputes if i not in against]
    for other in others:
        other.disputes = [i for i in other.disputes if i != node.id]
    winners, losers = (others, [node]) if drop else ([node], others)
    for n in winners:
        _settled(n)
    for n in losers:
        _settled(n)
        n.status = "superseded"
    store.write([node, *others])
    out = Resolved([n.id for n in winners], [n.id for n in losers], question)
    store.log("resolve", {"id": node.id, "kept": out.kept, "superseded": out.superseded})
    return out


def _settled(node: Node) -> None:
    """No dispute left: its question goes and, if it was disputed, it is active again."""
    if node.disputes:
        return
    node.conflict = ""
    if node.status == "disputed":
        node.status = "active"
