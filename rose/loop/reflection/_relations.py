"""What each reconcile relation does to the graph, written as one unit (`Store.write`).

`stored` says the new lesson already has a file (it was kept unreconciled during an
outage, and a later job reconciles it): where the relation stores nothing of it, that file
is marked superseded rather than deleted, so what a user taught is never thrown away.

A refinement that brings subjects its target's title and gist do not name
(`ReconcileAnswer.subjects_apart`) is kept apart: stored as a lesson of its own, in a family
of its own, as an orthogonal one is, under the title and gist the reconciler wrote for it.
Folded in, its detail would sit in a lesson whose line (all recall reads to choose) never
names its subject, so it would never be served for it; kept apart, one lesson holds one
point and no title someone wrote is rewritten.

Only a family a default or a model chose (`family_chosen`) is moved: into
the target's family, or renamed to be a family of its own. A family the user gave (`rose
add --family deploy`) is the user's word and is kept as given, whatever the relation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rose.judge.models import ReconcileAnswer
from rose.models import Node, farthest, slug
from rose.store.facade import Store


@dataclass
class Applied:
    kept: Node | None  # the new lesson as stored; None when nothing of it was kept
    written: list[str] = field(default_factory=list)  # every lesson the write unit wrote
    patched: list[str] = field(default_factory=list)  # ancestors given a refinement's patch


def titled(lesson: Node, answer: ReconcileAnswer) -> Node:
    """The lesson with the title and gist reconcile wrote where they were only derived; a
    title someone wrote (`rose add --title`, a reflection) stays. Nothing stays provisional."""
    if "title" in lesson.provisional:
        lesson.title = answer.title.strip()
    if "gist" in lesson.provisional:
        lesson.gist = answer.gist.strip()
    lesson.provisional = []
    return lesson


def apply(
    store: Store, lesson: Node, answer: ReconcileAnswer, *, stored: bool, scope: str
) -> Applied:
    chosen = family_chosen(lesson)
    lesson = titled(lesson, answer)
    relation = answer.relation
    if relation == "orthogonal" or answer.subjects_apart():  # a refinement kept apart
        if chosen:
            lesson.family = unique_family(store, lesson, stored=stored)
        return _written(store, [lesson], scope, kept=lesson)
    target = store.get(answer.target)
    retired = [_retired(lesson)] if stored else []
    if relation == "duplicate":
        return _written(store, retired, scope, kept=None) if retired else Applied(None)
    if relation == "refines":
        return _refined(
            store, target, answer.detail.strip(), retired, scope, lesson.provenance, lesson.accepted
        )
    if chosen:  # a family the user gave is the user's word, whatever the relation
        lesson.family = target.family
    if relation == "contradicts":
        question = answer.question.strip()
        lesson.status, lesson.conflict = "disputed", question
        lesson.disputes = [*lesson.disputes, target.id]
        target.status, target.conflict = "disputed", _joined(target.conflict, question)
        target.disputes = [*target.disputes, lesson.id]
        return _written(store, [lesson, target], scope, kept=lesson)
    # specialises: a sibling of the general lesson, under whatever is above it
    lesson.parents = [r["id"] for r in store.read("parents_of", id=target.id)]
    return _written(store, [lesson], scope, kept=lesson)


def _refined(
    store: Store,
    target: Node,
    detail: str,
    retired: list[Node],
    scope: str,
    provenance: str,
    accepted: bool,
) -> Applied:
    """The detail folded into the target's body, and a patch on every lesson above it."""
    if detail not in target.body:
        target.body = f"{target.body.rstrip()}\n\n{detail}"
    above = [store.get(r["id"]) for r in store.read("ancestors", id=target.id)]
    for node in above:
        if detail not in node.patches:
            node.patches = [*node.patches, detail]
    for node in (target, *above):  # what it says now comes from where the detail came from too
        node.provenance = farthest([node.provenance, provenance])  # type: ignore[assignment]
        if provenance == "outside" and not accepted:
            node.accepted = False  # the user accepted what it said before, not this
    done = _written(store, [target, *above, *retired], scope, kept=None)
    done.patched = [n.id for n in above]
    return done


def _written(store: Store, nodes: list[Node], scope: str, *, kept: Node | None) -> Applied:
    out = store.write(nodes, scope=scope)
    mine = next((n for n in out if kept is not None and n.id == kept.id), None)
    return Applied(mine, [n.id for n in out])


def _retired(lesson: Node) -> Node:
    """A kept lesson whose knowledge now lives in another: out of recall, on disk still."""
    lesson.status = "superseded"
    return lesson


def _joined(old: str, question: str) -> str:
    return question if not old else old if question in old else f"{old} {question}"


def family_chosen(lesson: Node) -> bool:
    """Whether the lesson's family is a default's or a model's choice, which reconcile may
    move or rename, rather than the user's word: marked so, or the default `general`, or a
    reflection's (a file written before the mark was)."""
    marked = "family" in lesson.provisional
    return marked or lesson.family == "general" or lesson.origin == "reflection"


def unique_family(store: Store, lesson: Node, *, stored: bool) -> str:
    """A family no other lesson is in: the lesson's own (its title's first words when it has
    none but the default), with `-2`, `-3` ... added while that one is taken."""
    base = lesson.family
    if base == "general":
        base = slug(" ".join(lesson.title.split()[:4]))
    rows = store.read("families")
    taken = {
        r["family"]
        for r in rows
        if not (stored and r["family"] == lesson.family and r["lessons"] <= 1)
    }
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base[:60].rstrip('-')}-{n}"
    return name
