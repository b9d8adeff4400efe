"""What the store says when its graph database was damaged: the event, and the notice."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rose.errors import GraphDamaged, QueryError
from rose.graph.engine import query_damage
from rose.store.notices import notify

if TYPE_CHECKING:
    from rose.store.facade import Store


def damaged_in_use(store: Store, exc: QueryError) -> GraphDamaged:
    """The error for damage met by the work inside: moved aside for the next command."""
    damage = query_damage(store.graph_path, exc)
    moved = store._set_aside(damage)
    store.log(
        "graph-damaged",
        {"path": str(damage.path), "reason": damage.detail, "moved_to": str(moved or "")},
    )
    return GraphDamaged(damage.path, damage.detail, moved_to=moved)


def rebuilt(store: Store, damage: GraphDamaged, moved: Path) -> None:
    """Log and say that the damaged database went to `moved` and the files rebuilt it."""
    report = store.last_sync
    store.log(
        "graph-rebuilt",
        {
            "path": str(damage.path),
            "reason": damage.detail,
            "moved_to": str(moved),
            "read": report.read,
            "seconds": round(report.seconds, 3),
        },
    )
    notify(
        f"the graph database {damage.path} was damaged ({damage.detail}); "
        f"moved it to {moved.name} and rebuilt it from the files ({report.read} read)",
        "index rebuilt (it was damaged)",
    )
