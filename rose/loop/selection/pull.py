"""Pull: the memory the agent asks for itself, through `rose mcp` (rose/hooks/mcp_server.py).

The prompt hook pushes what recall chose; these let the agent pull more while it works:
recall for a question of its own (the same recall the hook runs), one lesson in full with
what its compressions dropped and the lessons that still hold each dropped claim (so the
agent can descend itself), the families and their apexes, and its report of the lessons
it used, which feeds attribution exactly as `rose used` does.

Every answer is text for the model to read, naming each lesson by an id that `show` and
`used` accept (a unique prefix, as the injected block shows it). Errors are RoseErrors
with a message saying what to do; the server turns them into tool errors. `call` is the
one door both the server and an in-process client (the quality benchmark's simulated
agent) go through.

What was pulled is recorded as pulled, never as served: `recall` and `show` write a
``pull`` event to the store's event log (the tool and the lessons it answered with) and
nothing to any session's log or freshness record, since the prompt hook did not inject
them (and an MCP call names no session). A pulled lesson enters an episode only when the
agent reports it with `used`: then it is used (or unused) there, and not served, so
precision (used of served) does not count it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rose.errors import RoseError
from rose.events import append_event
from rose.files import sessions, shortid
from rose.frame import closed
from rose.store.facade import Store

#: Names the session `used` reports into when the call does not (see `session_for`).
SESSION_ENV = "ROSE_SESSION_ID"
#: Apexes listed at most per `lessons` answer: a 10,000-lesson store has thousands.
MAX_LISTED = 200


def recall_text(store: Store, query: str, *, deadline_s: float | None = None) -> str:
    """The lessons recall chooses for `query`, as the injected block shows them."""
    from rose.loop.selection.recall import recall

    if not query.strip():
        raise RoseError("recall needs a query: say what you are working on or looking for")
    res = recall(store, query, deadline_s=deadline_s)
    _pulled(store, "recall", [i["id"] for i in res.chosen])
    how = "; ".join(res.decisions)
    if not res.chosen:
        return f"nothing recalled ({how})"
    n = len(res.chosen)
    head = f"{n} lesson{'s' if n != 1 else ''} recalled ({how})."
    tail = "`show` a lesson by id for the detail its compression dropped."
    return "\n\n".join([head, *(i["full"] for i in res.chosen), tail])


def show_text(store: Store, lesson_id: str) -> str:
    """One lesson in full, what compression dropped from it, and who still holds that."""
    node = store.get(lesson_id)
    if node.status == "quarantined" or (node.held and not node.servable):
        return f"lesson {node.id} was held from recall for the user's review: it is not shown"
    manifest = store.read("delta_manifest", id=node.id)
    _pulled(store, "show", [node.id])
    around = sorted({*node.derived_from, *node.parents, *(r["holder"] for r in manifest)})
    rows = {r["lesson"]["id"]: r["lesson"] for r in store.lesson_rows(around)}

    def name(i: str) -> str:
        row = rows.get(i)
        return f"{i} (L{row['level']}: {row['title']})" if row else f"{i} (missing)"

    lines = [
        f"lesson {node.id}: {node.title}",
        f"level {node.level} · {node.scope} · family {node.family} · {node.status}",
    ]
    if node.gist:
        lines.append(f"gist: {node.gist}")
    if node.conflict:
        lines.append(f"unresolved conflict: {node.conflict}")
    lines += ["", node.body or node.gist]
    if node.patches:
        lines += ["", "restored detail (patches):", *(f"- {p}" for p in node.patches)]
    if node.derived_from:
        lines += ["", "compresses: " + ", ".join(name(i) for i in node.derived_from)]
    if node.parents:
        lines += ["", "merged into: " + ", ".join(name(i) for i in node.parents)]
    if manifest:
        lines += ["", "dropped by compression below it (claim id: claim; held by):"]
        for r in manifest:
            lines.append(f"- {r['id']} [{r['kind']}]: {r['claim']}; held by {name(r['holder'])}")
        lines.append("`show` a holder to read the claim in its full context.")
    else:
        lines += ["", "nothing was dropped: this is the lesson in full"]
    return closed("\n".join(lines))


def lessons_text(store: Store, family: str = "", *, limit: int = MAX_LISTED) -> str:
    """The families (lesson counts) and the apexes, of one family when `family` is given."""
    from rose.models import shown_title, slug

    fams = store.read("families")
    want = slug(family) if family.strip() else ""
    if want and not any(f["family"] == want for f in fams):
        known = ", ".join(f["family"] for f in fams) or "none yet"
        raise RoseError(f"no family {want!r} in this store; the families are: {known}")
    lines = ["families:"]
    lines += [f"- {f['family']} ({f['lessons']} lessons)" for f in fams] or ["- none yet"]
    apexes = [a for a in store.read("apexes", scope="") if not want or a["family"] == want]
    shown = shortid.shortest(r["id"] for r in store.read("lesson_id_list"))
    where = f" of family {want}" if want else ""
    lines += ["", f"apexes{where} (the most compressed lessons; {len(apexes)}):"]
    for a in apexes[:limit]:
        title = shown_title(a["title"], a["gist"])
        text = f"{title}: {a['gist']}" if title and a["gist"] else title or a["gist"]
        lines.append(f"- {shown.get(a['id'], a['id'])} L{a['level']} [{a['family']}] {text}")
    if len(apexes) > limit:
        lines.append(f"... {len(apexes) - limit} more: give a family to list its own")
    return closed("\n".join(lines))


@dataclass(frozen=True)
class SessionChoice:
    id: str
    how: str  # given | env | latest


def session_for(store: Store, given: str | None) -> SessionChoice:
    """The session a report goes to: the one named, else $ROSE_SESSION_ID, else the session
    whose log was written last in this store (the prompt hook appends to it every prompt,
    so with one agent at work it is the current one)."""
    if given and given.strip():
        return SessionChoice(given.strip(), "given")
    env = os.environ.get(SESSION_ENV, "").strip()
    if env:
        return SessionChoice(env, "env")
    latest = sessions.latest(store.primary.root)
    if latest is None:
        raise RoseError(
            f"no session to report to: none has a log in {store.primary.root / 'sessions'}; "
            f"pass `session` (or set {SESSION_ENV})"
        )
    return SessionChoice(latest, "latest")


def used_text(
    store: Store,
    used: list[str],
    unused: list[str],
    *,
    session: str | None = None,
    load_bearing: dict[str, str] | None = None,
) -> str:
    """Record which lessons bore on the work, exactly as `rose used` does; what was recorded."""
    choice = session_for(store, session)
    spans = list((load_bearing or {}).items())
    turn = store.attribute(choice.id, used, unused, load_bearing=spans)
    via = {"given": "", "env": f" (from ${SESSION_ENV})", "latest": " (the latest session)"}
    return f"recorded for session {choice.id}{via[choice.how]}, prompt {turn}"


def _pulled(store: Store, tool: str, lessons: list[str]) -> None:
    """The record of a pull: an event, never a session's served log (see the docstring)."""
    append_event(store.primary.events, "pull", {"tool": tool, "lessons": lessons})


#: The tools, in the order the server lists them.
TOOLS = ("recall", "show", "lessons", "used")


def call(store: Store, tool: str, arguments: Mapping[str, Any]) -> str:
    """Answer one tool call by name, its arguments as the MCP client sends them."""
    a = dict(arguments)
    if tool == "recall":
        return recall_text(store, str(a.get("query") or ""))
    if tool == "show":
        return show_text(store, str(a.get("id") or ""))
    if tool == "lessons":
        return lessons_text(store, str(a.get("family") or ""))
    if tool == "used":
        return used_text(
            store,
            list(a.get("used") or []),
            list(a.get("unused") or []),
            session=a.get("session"),
            load_bearing=a.get("load_bearing"),
        )
    raise RoseError(f"no tool {tool!r}: the tools are {', '.join(TOOLS)}")
