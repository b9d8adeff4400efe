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

A compression or merge is also demoted the moment it is accepted when a held-out replay
fails it (`held_out_failed`, from `rose.loop.abstraction.compress` and
`rose.loop.abstraction.merge`): an episode
validation never saw, replayed after acceptance, found it missing something its source
had. The sources serve again in the same way, and what the failing replays found missing
goes with them as preserve hints, so the next attempt keeps it. A replay that could not
run is no verdict and demotes nothing. Each demotion is a `demote` event naming its
`cause` (`failures` or `held-out`); `rose status` counts the held-out ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rose.errors import LessonNotFound
from rose.models import SERVABLE, Episode
from rose.store.facade import Row, Store

if TYPE_CHECKING:
    from rose.graph.engine import Graph

#: Why a lesson was demoted: failed work in a row, or a held-out replay after acceptance.
FAILURES = "failures"
HELD_OUT = "held-out"


@dataclass(frozen=True)
class Demotion:
    """A compression demoted after `failures` failures (the `episodes`: failed work in a
    row, newest first, or the held-out replays that failed it, by `cause`); `restored` are
    the lessons it was derived from that are active again."""

    lesson: str
    level: int
    failures: int
    episodes: tuple[str, ...] = ()
    restored: tuple[str, ...] = ()
    cause: str = FAILURES


def failures_in_a_row(store: Store, lesson_id: str) -> list[str]:
    """The latest episodes that used the lesson and failed, newest first, up to the most
    recent success, partial success or rescue of it (unknown outcomes passed over)."""
    return _failures(store.read("use_record", id=lesson_id), lesson_id)


def _failures(record: list[Row], lesson_id: str) -> list[str]:
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
        if not _demotable(store, g, lesson_id):
            return None
        failed = _failures(g.q("use_record", id=lesson_id), lesson_id)
        if len(failed) < threshold:
            return None
        restore = _restore(store, g, lesson_id)
    return _demote(store, lesson_id, restore, failed, FAILURES, {"demote_after": threshold})


def held_out_failed(
    store: Store,
    lesson_id: str,
    episodes: Sequence[str],
    *,
    preserve: Mapping[str, Sequence[str]] | None = None,
) -> Demotion | None:
    """Demote `lesson_id`, a compression or merge just accepted, because the held-out
    `episodes` replayed after acceptance failed it; `preserve` maps a source to the hints
    (what the failing replays found missing) it is restored with. None when the lesson is
    no servable derived lesson any more (nothing to demote)."""
    with store.graph() as g:
        if not _demotable(store, g, lesson_id):
            return None
        restore = _restore(store, g, lesson_id)
    return _demote(store, lesson_id, restore, list(episodes), HELD_OUT, {}, preserve)


def _demotable(store: Store, g: Graph, lesson_id: str) -> bool:
    """Whether the lesson is servable and derived from others (a missing one: an error)."""
    rows = store.lesson_rows([lesson_id], g)
    if not rows:
        raise LessonNotFound(lesson_id)
    row = rows[0]["lesson"]
    return row["status"] in SERVABLE and bool(row["derived_ids"])


def _restore(store: Store, g: Graph, lesson_id: str) -> list[str]:
    """What the lesson was derived from that serves again once it is demoted."""
    row = store.lesson_rows([lesson_id], g)[0]["lesson"]
    return [i for i in row["derived_ids"] if _restorable(g, i, lesson_id)]


def _demote(
    store: Store,
    lesson_id: str,
    restore: list[str],
    episodes: list[str],
    cause: str,
    extra: dict[str, Any],
    preserve: Mapping[str, Sequence[str]] | None = None,
) -> Demotion:
    """Write the demotion (the lesson demoted, `restore` active again, each with its
    `preserve` hints it lacks) in one write, and log it."""
    node = store.get(lesson_id)
    node.status = "demoted"
    sources = [store.get(i) for i in restore]
    for source in sources:
        source.status = "active"
        hints = [h for h in (preserve or {}).get(source.id, ()) if h not in source.preserve]
        source.preserve = [*source.preserve, *dict.fromkeys(hints)]
    store.write([node, *sources])
    done = Demotion(node.id, node.level, len(episodes), tuple(episodes), tuple(restore), cause)
    store.log(
        "demote",
        {
            "lesson": done.lesson,
            "level": done.level,
            "cause": cause,
            "failures": done.failures,
            "episodes": list(done.episodes),
            "restored": list(done.restored),
            **extra,
        },
    )
    return done


def _restorable(g: Graph, source: str, demoted: str) -> bool:
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
