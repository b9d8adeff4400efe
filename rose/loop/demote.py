"""Demotion: a compression that keeps failing, with descent unable to rescue it, steps aside.

A compressed lesson (one derived from others) that work used and that failed
`compress.demote_after` times in a row, with no rescue by descent in between, becomes
`demoted`, and the lessons it was derived from, superseded by it, are active again: with no
servable lesson above them they are apexes, and recall serves them in its place. Nothing
is deleted, and the demoted lesson stays on disk with its lineage.

The count is folded from the episodes, never kept in a lesson file: the episodes that used
the lesson, newest first. A failure counts; a success or a partial success ends the run,
as does an episode that names a rescue of the lesson (a dropped claim that turned a
failure, a patch served on a success); an episode whose outcome is unknown says nothing
and is passed over. Only failures of work that used the lesson count, as only they count
against a lesson's success rate: a lesson merely served beside failing work, or judged
unused, is not blamed for it.

A lesson derived from the demoted one's sources that still has another servable lesson
above it (a merge of several) stays superseded: that lesson serves it.

Demotion runs after a session's episodes are written (`after_episodes`, from the learning
jobs, after descent has had its turn), over the compressed lessons the new failed
episodes used. Only by hand (`rose archive`) is a lesson archived.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rose.errors import LessonNotFound
from rose.models import SERVABLE, Episode
from rose.store.facade import Store


@dataclass(frozen=True)
class Demotion:
    """A compression demoted after `failures` failures in a row (the `episodes`, newest
    first); `restored` are the lessons it was derived from that are active again."""

    lesson: str
    level: int
    failures: int
    episodes: tuple[str, ...] = ()
    restored: tuple[str, ...] = ()


def failures_in_a_row(store: Store, lesson_id: str) -> list[str]:
    """The latest episodes that used the lesson and failed, newest first, up to the most
    recent success, partial success or rescue of it (unknown outcomes passed over)."""
    return _failures(store.read("use_record", id=lesson_id), lesson_id)


def _failures(record: list[dict], lesson_id: str) -> list[str]:
    out: list[str] = []
    mark = f"{lesson_id}|"
    for e in record:
        if e["outcome"] == "unknown":
            continue
        named = [*(e["rescued"] or []), *(e["patch_rescued"] or [])]
        if e["outcome"] != "failure" or any(x.startswith(mark) for x in named):
            break
        out.append(e["id"])
    return out


def check(store: Store, lesson_id: str) -> Demotion | None:
    """Demote `lesson_id` if it is a servable compression whose failures in a row reached
    `compress.demote_after`; returns what was done, or None. Deciding costs one open of the
    graph; only a demotion writes."""
    threshold = store.config.compress.demote_after
    with store.graph() as g:
        rows = store.lesson_rows([lesson_id], g)
        if not rows:
            raise LessonNotFound(lesson_id)
        row = rows[0]["lesson"]
        if row["status"] not in SERVABLE or not row["derived_ids"]:
            return None
        failed = _failures(g.q("use_record", id=lesson_id), lesson_id)
        if len(failed) < threshold:
            return None
        restore = [i for i in row["derived_ids"] if _restorable(g, i, lesson_id)]
    node = store.get(lesson_id)
    node.status = "demoted"
    sources = [store.get(i) for i in restore]
    for source in sources:
        source.status = "active"
    store.write([node, *sources])
    done = Demotion(node.id, node.level, len(failed), tuple(failed), tuple(restore))
    store.log(
        "demote",
        {
            "lesson": done.lesson,
            "level": done.level,
            "failures": done.failures,
            "episodes": list(done.episodes),
            "restored": list(done.restored),
            "demote_after": threshold,
        },
    )
    return done


def _restorable(g: Any, source: str, demoted: str) -> bool:
    """Whether `source` is superseded with no servable lesson above it but `demoted` (a
    dangling link, which `rose doctor` reports, restores nothing)."""
    rows = g.q("lesson_get", ids=[source])
    if not rows or rows[0]["lesson"]["status"] != "superseded":
        return False
    above = [r["id"] for r in g.q("parents_of", id=source) if r["id"] != demoted]
    found = g.q("lesson_get", ids=above) if above else []
    return not any(r["lesson"]["status"] in SERVABLE for r in found)


def after_episodes(store: Store, episodes: Iterable[Episode]) -> list[Demotion]:
    """Check every lesson that newly written failed episodes used (a session's end)."""
    used = dict.fromkeys(i for e in episodes if e.outcome == "failure" for i in e.used)
    done = []
    for lesson_id in used:
        try:
            demoted = check(store, lesson_id)
        except LessonNotFound:
            continue  # removed since it was used
        if demoted is not None:
            done.append(demoted)
    return done
