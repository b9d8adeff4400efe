"""Archiving: a lesson put away by hand (`rose archive`), never by ROSE itself.

An archived lesson stays on disk, in the graph and in `rose tree`, but recall never serves
it. Only its own status changes: what it was derived from keeps its status, so archiving a
compression puts away the lessons below it too (they are superseded, served through it),
and a lesson with a servable lesson above it is still reached through that one. To serve
a lesson again, edit its `status` back by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from rose.errors import RoseError
from rose.store.facade import Store


@dataclass(frozen=True)
class Archived:
    """The lesson archived, and its status before."""

    id: str
    title: str
    was: str


def archive(store: Store, lesson_id: str) -> Archived:
    """Archive `lesson_id` (a unique prefix will do); an unknown id, or a lesson archived
    already, is an error."""
    node = store.get(lesson_id)
    if node.status == "archived":
        raise RoseError(f"{node.id} is archived already; `rose tree` shows it")
    was = node.status
    node.status = "archived"
    store.write([node])
    store.log("archive", {"id": node.id, "was": was})
    return Archived(node.id, node.title, was)
