"""Misses: a lesson the work needed, held and not served, is evidence for selection.

When a reflection draws a lesson from work and consolidation finds the store already held
it (a `duplicate` of a lesson, or a `refines` of one), and neither that lesson nor any
lesson above it was in the block of the request that opened the work, recall missed it.
The prompt hook logged what kept each lesson out (`RecallResult.selection`): the
selection rules the relevance answer cited for turning it away (`ruled`), the token
budget (`over_budget`), or else the judgement itself, which reads only a lesson's title
and gist. A lesson stored after that request, or a store that fell back without a model,
is no miss.

A miss is written to the session's log (`miss`; absorption puts it in the episode, where
each rule's record counts it) and acted on:

- turned away by rules: once the episodes are written (`after_episodes`), a rule whose
  misses reached `routing.retire_after_misses` retires (`rose.loop.selection.route.retire_missed`);
- passed over by the judgement: the lesson's line is rewritten by a `gist` call to name
  the subject the task needed it for (a title the user wrote stays), so the next prompt
  of that kind reaches it through its own line, never through a rule naming a lesson;
- left out over the budget: logged, as nothing in selection was wrong.

Only the request the reflector was shown and the few before it (`EARLIER`) are looked
at: the first of them whose block lacked the lesson is the one that missed it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rose.errors import MODEL_FAILURES, RoseError
from rose.files import sessions
from rose.models import Miss, MissedBy

if TYPE_CHECKING:
    from rose.judge.base import Judge
    from rose.models import Episode, Node
    from rose.store.facade import Row, Store

#: Requests before the reflected one that may be the one that missed the lesson.
EARLIER = 3
#: Relations saying the store already held what the work taught.
HELD = ("duplicate", "refines")


@dataclass(frozen=True)
class Found:
    """A miss and the request it happened on."""

    miss: Miss
    turn: int
    prompt: str


def _when(text: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text))
    except ValueError:
        return None


def find(
    store: Store, entries: Sequence[Row], turn: int, relation: str, target: str
) -> list[Found]:
    """The misses a consolidation shows: `entries` are the session's log, `turn` the unit
    reflected on, `relation` and `target` what consolidation said. One miss per servable
    lesson holding the target (itself, or what serves it)."""
    if relation not in HELD or not target:
        return []
    if any(e["t"] == "minted" and e.get("id") == target for e in entries):
        return []  # this session's own lesson, or a miss of it already found
    units = [e for e in entries if e["t"] == "prompt" and int(e.get("turn") or 0) <= turn]
    try:
        lesson = store.get(target)
        above = store.read("ancestors", id=lesson.id)
    except RoseError:
        return []
    family = {lesson.id, *(r["id"] for r in above)}
    serving = [r["id"] for r in above if r["is_apex"] and r["status"] in ("active", "disputed")]
    units_of = serving or ([lesson.id] if lesson.servable else [])
    if not units_of:
        return []
    for unit in units[-(EARLIER + 1) :]:
        asked = _when(unit.get("time"))
        if asked is None or lesson.created > asked:
            continue  # stored after this request: nothing was there to miss
        if family & set(unit.get("served") or []):
            return []  # served in some form: what it dropped is descent's to restore
        by, rules = _cause(unit, family)
        if by is None:
            continue
        turn, prompt = int(unit.get("turn") or 0), str(unit.get("prompt") or "")
        return [Found(Miss(lesson=u, by=by, rules=rules), turn, prompt) for u in units_of]
    return []


def _cause(unit: Row, family: set[str]) -> tuple[MissedBy | None, list[str]]:
    ruled = unit.get("ruled")
    ruled = ruled if isinstance(ruled, dict) else {}
    cited = [r for i in sorted(family) for r in ruled.get(i) or [] if isinstance(r, str)]
    if cited:
        return "rule", list(dict.fromkeys(cited))
    if family & set(unit.get("over_budget") or []):
        return "budget", []
    if unit.get("recall") == "judged":
        return "relevance", []
    return None, []  # everything fit (so it was served) or recall fell back: no choice made


def record(
    store: Store, judge: Judge, session_id: str, found: list[Found], *, lessons: Store | None = None
) -> list[str]:
    """Write each miss to `store`'s session log and events, and act on those the judgement
    made (`reline`, in `lessons`: the store the lesson lives in, `store` by default); the
    ids of the lessons whose line was rewritten."""
    root = str(store.primary.root)
    relined = []
    for f in found:
        m = f.miss
        sessions.append(root, session_id, "miss", turn=f.turn, lesson=m.lesson, by=m.by,
                        rules=m.rules)  # fmt: skip
        store.log("miss", {"session": session_id, "turn": f.turn, "lesson": m.lesson,
                           "by": m.by, "rules": m.rules})  # fmt: skip
        if m.by == "relevance" and reline(lessons or store, judge, m.lesson, f.prompt):
            relined.append(m.lesson)
    return relined


def reline(store: Store, judge: Judge, lesson_id: str, task: str) -> Node | None:
    """Rewrite a passed-over lesson's title and gist (a `gist` call) to name the subject
    `task` needed it for; a title the user wrote stays. None when nothing changed or the
    model could not answer (logged)."""
    from rose.judge.base import GIST

    node = store.get(lesson_id)
    keep_title = node.origin == "manual" and "title" not in node.provisional
    shown = {"id": node.id, "title": node.title, "gist": node.gist, "body": node.body}
    try:
        answer = judge.ask(GIST, {"lesson": shown, "task": task, "keep_title": keep_title})
    except MODEL_FAILURES as exc:
        store.log("reline-failed", {"lesson": lesson_id, "error": str(exc)[:200]})
        return None
    title = node.title if keep_title else answer.title.strip() or node.title
    gist = answer.gist.strip()
    if (title, gist) == (node.title, node.gist):
        return None
    provisional = [p for p in node.provisional if p not in ("title", "gist")]
    done = store.save(node.model_copy(update={"title": title, "gist": gist,
                                              "provisional": provisional}))  # fmt: skip
    store.log("reline", {"lesson": lesson_id, "was": node.gist, "gist": gist})
    return done


def after_episodes(store: Store, written: Sequence[Episode]) -> list[str]:
    """Retire the rules that newly written episodes' misses cite, once their misses reach
    `routing.retire_after_misses` (a session's end, after the episodes are written)."""
    from rose.loop.selection import route

    cited = [r for e in written for m in e.misses for r in m.rules]
    return route.retire_missed(store, cited)
