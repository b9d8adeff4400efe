"""`related`, walked down the DAG: the lessons on a new lesson's subject, however deep.

The apexes of the lesson's scope go into one `related` call, one line each. What the model
matches is on the subject; what it asks to `descend` is too general to tell from its line.
Both are branches that may hold the subject, so the lessons one level below them are
offered in the next call, down to `recall.max_depth` levels below the apexes (the bound
recall's walk has). A `descend` with nothing below it, or at the last level, is read in
full by `reconcile` rather than dropped: the body says what the line could not. So detail
that compression moved two levels below an apex still meets the new lesson.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rose.judge.base import RELATED, Judge
from rose.judge.models import Lesson
from rose.models import Node
from rose.store.facade import Row, Store


@dataclass
class Walk:
    """What the walk found: rows of the lessons to reconcile with, and what each call saw."""

    matched: list[Row] = field(default_factory=list)
    rounds: list[list[str]] = field(default_factory=list)  # candidate ids offered per call


def as_lesson(node: Node) -> Lesson:
    return Lesson(id=node.id, title=node.title, gist=node.gist, body=node.body)


def walk(store: Store, judge: Judge, lesson: Node, scope: str) -> Walk:
    """The servable lessons of `scope` the model says share `lesson`'s subject."""
    out = Walk()
    frontier = [r for r in store.read("apexes", scope=scope) if r["id"] != lesson.id]
    seen = {lesson.id}
    found: dict[str, Row] = {}
    depth, most = 0, store.config.recall.max_depth
    new = as_lesson(lesson)
    while frontier:
        seen |= {r["id"] for r in frontier}
        out.rounds.append([r["id"] for r in frontier])
        offered = [{"id": r["id"], "title": r["title"], "gist": r["gist"]} for r in frontier]
        answer = judge.ask(RELATED, {"lesson": new, "candidates": offered})
        matches = {p.id for p in answer.matches}
        down = {p.id for p in answer.descend} - matches
        found |= {r["id"]: r for r in frontier if r["id"] in matches}
        opened = [r["id"] for r in frontier if r["id"] in matches | down]
        rows = store.read("children", ids=opened) if opened and depth < most else []
        below = {r["parent"] for r in rows}
        found |= {r["id"]: r for r in frontier if r["id"] in down and r["id"] not in below}
        frontier = list({r["id"]: r["lesson"] for r in rows if r["id"] not in seen}.values())
        depth += 1
    out.matched = list(found.values())
    return out
