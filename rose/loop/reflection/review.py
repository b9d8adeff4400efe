"""Review: what came from outside content waits for the user before it goes anywhere.

A lesson that carries instructions from outside content (the reflector says so, or the
copy tripwire caught it repeating a fetched page word for word) is `quarantined`: stored,
never served, never reconciled into another lesson, until the user settles it. A lesson
from outside content that carries no instruction is served, but only in the project store
it was learnt in, until the user accepts it: a global one would be served in every
repository. `rose review` lists both; `rose accept` serves a held lesson and lets either be
filed where its scope judgement says (it is then reconciled, as a lesson stored while the
judge was away is); `rose reject` archives it, on disk still, never served.
"""

from __future__ import annotations

from dataclasses import dataclass

from rose.errors import RoseError
from rose.models import Node
from rose.store.facade import Store

#: The few words the next prompt's status line says once when a lesson starts to wait.
WAITS = "a lesson waits for your review: rose review"


@dataclass(frozen=True)
class Waiting:
    """A lesson awaiting the user: held (never served), or from outside and kept local."""

    id: str
    scope: str
    title: str
    provenance: str
    held: str
    created: str
    path: str

    @property
    def is_held(self) -> bool:
        return bool(self.held)


def waiting(store: Store) -> list[Waiting]:
    """Held lessons first, then servable lessons from outside not yet accepted; oldest first."""
    rows = store.read("lessons_waiting")
    out = [
        Waiting(
            id=r["id"],
            scope=r["scope"],
            title=r["title"],
            provenance=r["provenance"] or "",
            held=r["held"] or ("held" if r["status"] == "quarantined" else ""),
            created=r["created"] or "",
            path=r["path"] or "",
        )
        for r in rows
    ]
    return sorted(out, key=lambda w: (not w.is_held, w.created, w.id))


def _awaiting(node: Node) -> bool:
    outside = node.provenance == "outside" and not node.accepted and node.servable
    return node.status == "quarantined" or outside


def accept(store: Store, lesson_id: str) -> Node:
    """Accept a lesson from review (a unique prefix will do): a held one is served from now
    on; either may be filed globally when its scope judgement says so. It is marked to be
    reconciled and have its scope judged (`rose.loop.reflection.consolidate.reconcile_pending`)."""
    node = store.get(lesson_id)
    if not _awaiting(node):
        raise RoseError(f"{node.id} is not waiting for review ({node.status}); `rose review`")
    was = node.status
    if was == "quarantined":
        node.status = "active"
    node.held, node.accepted = "", True
    node.provisional = [*node.provisional, "scope", "reconcile"]
    store.write([node], scope=node.scope)
    store.log("review", {"id": node.id, "verdict": "accepted", "was": was})
    return node


def reject(store: Store, lesson_id: str) -> Node:
    """Reject a lesson from review: archived, on disk and in `rose tree`, never served."""
    node = store.get(lesson_id)
    if not _awaiting(node):
        raise RoseError(f"{node.id} is not waiting for review ({node.status}); `rose review`")
    was = node.status
    node.status = "archived"  # `held` still says why it waited
    store.write([node], scope=node.scope)
    store.log("review", {"id": node.id, "verdict": "rejected", "was": was})
    return node
