"""What the store says when its graph database was damaged or lost, or a lesson file holds a
byte that is not UTF-8: one line on stderr and an event, never a silent repair."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rose.errors import GraphDamaged, QueryError
from rose.files.notices import notify
from rose.graph.engine import query_damage

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
    _say(
        store,
        damage.path,
        f"was damaged ({damage.detail}); moved it to {moved.name} and rebuilt it",
        "index rebuilt (it was damaged)",
        {"reason": damage.detail, "moved_to": str(moved)},
    )


@dataclass(frozen=True)
class Lost:
    """A database a graph was built in before, found missing or empty before an open."""

    path: Path
    #: "missing" or "empty", and why that is damage, as the line and the event say it.
    what: str
    reason: str


def lost(store: Store) -> Lost | None:
    """The store's database when it is gone (deleted) or empty (truncated to nothing) though
    a graph was built here before, its leftover log removed (`drop_orphans`); else None. A
    store whose graph was never built (new, or cloned: the database is not committed) builds
    it without a word."""
    from rose.graph import synced
    from rose.graph.engine import drop_orphans

    path = store.graph_path
    try:
        size: int | None = os.stat(path).st_size
    except FileNotFoundError:
        size = None
    except OSError:
        return None
    if size:
        return None
    dropped = drop_orphans(path)
    if not (dropped or synced.read(path) is not None):
        return None
    if size is None:
        return Lost(path, "missing", "deleted since it was last built")
    return Lost(path, "empty", "it was truncated to 0 bytes")


def rebuilt_lost(store: Store, gone: Lost) -> None:
    """Log and say that the files rebuilt a database that was missing or empty."""
    was = "missing" if gone.what == "missing" else "damaged"
    _say(
        store,
        gone.path,
        f"was {was} ({gone.reason}); rebuilt it",
        f"index rebuilt (it was {gone.what})",
        {"reason": f"{gone.what}: {gone.reason}", "moved_to": ""},
    )


def _say(store: Store, path: Path, what: str, short: str, data: dict) -> None:
    report = store.last_sync
    store.log(
        "graph-rebuilt",
        {"path": str(path), **data, "read": report.read, "seconds": round(report.seconds, 3)},
    )
    notify(f"the graph database {path} {what} from the files ({report.read} read)", short)


def bad_bytes(store: Store) -> None:
    """Warn, once for each read, of the lesson files the last sync read with a byte that is
    not UTF-8 in them (each such byte read as U+FFFD; the file is left as it is)."""
    for path, offset in sorted(store.last_sync.bad_bytes.items()):
        store.log("lesson-bad-bytes", {"path": path, "offset": offset})
        notify(
            f"{path}: byte {offset} is not valid UTF-8; the lesson is read with U+FFFD in "
            "its place (the file is left as it is: fix the byte to silence this)",
            "a lesson file holds a byte that is not UTF-8",
        )
