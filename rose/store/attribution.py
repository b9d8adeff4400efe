"""`rose used`: the in-session reflector's word on which served lessons bore on the work.

The verdict goes to the session's append-only log (a ``used`` entry, and a ``span`` entry
per load-bearing sentence), to be folded into the unit's episode when the session is
absorbed: never into a counter in place. Every id may be a unique prefix, as the
injected block shows it; each is written out in full, resolved against the lesson files'
names (a file is named for its lesson's id: `rose.files.nodefile`), never the graph: a
record that takes no database lock lands while another process holds it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rose.errors import RoseError
from rose.files import scan, sessions, shortid
from rose.models import valid_id

if TYPE_CHECKING:
    from rose.store.facade import Store

#: The sources `rose used` speaks for: the agent (or its in-session reflector) and a forked one.
REFLECTORS = ("rose used", "reflector")


def record_used(
    store: Store,
    session_id: str,
    used: list[str],
    unused: list[str] | None = None,
    *,
    load_bearing: list[tuple[str, str]] | None = None,
    turn: int | None = None,
    source: str = "rose used",
) -> int:
    """Record which served lessons bore on a unit of work; returns the unit's turn.

    `load_bearing` pairs a lesson with a sentence of it that did work: that lesson was
    used, so naming it unused as well is refused.
    """
    if source not in REFLECTORS:
        raise RoseError(f"source {source!r}: `rose used` speaks as {' or '.join(REFLECTORS)}")
    unused = unused or []
    spans = [(i, text.strip()) for i, text in load_bearing or []]
    empty = [i for i, text in spans if not text]
    if empty:
        raise RoseError(f"--load-bearing {empty[0]}= names no sentence: give ID=TEXT")
    ids = [*used, *unused, *(i for i, _ in spans)]
    bad = [i for i in ids if not valid_id(i)]
    if bad:
        raise RoseError(f"not a lesson id: {', '.join(dict.fromkeys(bad))}")
    if not ids:
        raise RoseError("name at least one lesson with --used, --unused or --load-bearing")
    every = lesson_ids(store)
    full = {i: shortid.resolve(i, every) for i in dict.fromkeys(ids)}  # a prefix: its id
    unknown = sorted(i for i, f in full.items() if f is None)
    if unknown:
        raise RoseError(f"no lesson with id {', '.join(unknown)} in this store")
    bearing = [(str(full[i]), text) for i, text in spans]
    used = list(dict.fromkeys([*(str(full[i]) for i in used), *(i for i, _ in bearing)]))
    unused = list(dict.fromkeys(str(full[i]) for i in unused))
    both = [i for i in used if i in unused]
    if both:
        raise RoseError(f"{', '.join(both)} cannot be both used and unused")
    root = str(store.primary.root)
    turn = turn or sessions.last_turn(root, session_id)
    if not turn:
        raise RoseError(
            f"session {session_id!r} has no recorded prompt here: nothing to attribute to"
        )
    sessions.append(root, session_id, "used", turn=turn, used=used, unused=unused, source=source)
    for lesson, text in bearing:
        sessions.append(root, session_id, "span", turn=turn, lesson=lesson, span=text)
    return turn


def lesson_ids(store: Store) -> list[str]:
    """Every lesson's id in both scopes, from the lesson files' names, without the graph."""
    found = scan.scan(store.roots, episodes=False)
    return sorted({os.path.basename(p)[:-3] for p, f in found.items() if f.kind == "node"})
