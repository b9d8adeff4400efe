"""Consolidation: a new lesson is reconciled with what is known before it is stored.

Whatever minted it (a reflection, the session end, `rose add`), a lesson goes through
three judgements, then the code applies the answer:

1. `scope`: does it depend on this repository, or hold anywhere? The judge's answer is
   final (its prompt carries the asymmetric-error rule: when unsure, global). A scope
   given by the caller (`rose add --scope`) is not asked again. The store of that scope
   is created on first use and said so (`rose.loop.reflection._land`).
2. `related`: the lessons of that scope on the same subject, found by walking down from
   the apexes into every branch the model says may hold it (`rose.loop.reflection._related`).
3. `reconcile`: one relation to one of them, and the lesson's title and gist (written
   where they were only derived from the first sentence):

   - duplicate: nothing stored; the hit is logged (`rose status` counts it).
   - refines: the detail the model names is folded into the matched lesson's body, and
     registered as a patch on every lesson above it, on every path up to each apex, in
     one write unit; recall serves a lesson's patches with it, so the apexes carry the
     detail at once. (Whether a patch later rescued work is for episodes to show.) Unless
     the answer says the detail is about subjects the matched lesson's title and gist do
     not name (`other_subjects`): then it is kept apart, as a lesson of its own, filed as
     an orthogonal one is (recall reads those lines alone, so folded in, it would never
     be served for its subject).
   - contradicts: both kept and marked disputed, each naming the other, both carrying the
     question; the new lesson is an apex of the target's family, so recall meets the
     question without descending.
   - specialises: a sibling of the more general lesson: its family, and its parents (none
     when the general lesson is an apex). Not its child: in this DAG a parent is what its
     children were compressed or merged into, and its delta manifest, regression set and
     descent candidates say so; the new lesson was compressed into nothing.
   - orthogonal: a family of its own, named as minted (its title's first words when it
     came with the default family), made unique with `-2`, `-3` ...

   A family the user gave (`rose add --family`) is kept as given, whatever the relation:
   only the default one, or one a model chose, is moved or renamed (`_relations`).

A judge that cannot answer (`OUTAGES`) never costs the lesson: it is stored as it came,
in the scope asked for (else its own), with `"reconcile"` in `Node.provisional` (its
title and gist stay provisional where they were derived, and `"scope"` is there too when
no one chose or judged it), and the `reconcile` job reconciles every such lesson later. The
caller queues that job (`rose.jobs.capture`; a stage may not reach into the job runner).
A later reconcile asks `scope` first where it is provisional, and moves a lesson judged
global out of the project store (`Store.move`, one journalled unit): filed locally, a
global lesson would be lost to every other repository. One judged project but filed
globally (there was no project store) stays: that error is only noise. Reconciles of one
store run one at a time (`jobs/reconcile.lock`), and each re-reads a lesson before it
reconciles it, so two jobs never reconcile the same lesson twice. Every lesson offered is
logged as an `add` event with its `source`, and each later reconciliation as a
`reconcile` event: `captured` counts them.

A graph database another process holds past the caller's deadline (`StoreLocked`) never
costs the lesson either: its file is written without the graph (`Store.keep_unindexed`;
the next open indexes it, and its folder moving on makes the recall view stale), marked
`reconcile` as after an outage unless it was not to be reconciled, and the relation is
"deferred": the caller queues the `reconcile` job and starts a runner, which indexes and
reconciles it once the database is free. That job first takes in what a `rose add` that
died left in `rose.files.intake` (`take_in`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rose.errors import (
    MODEL_FAILURES,
    AnswerInvalid,
    GraphDamaged,
    LessonNotFound,
    RoseError,
    StoreLocked,
)
from rose.events import read_events
from rose.files import notices
from rose.judge.base import RECONCILE, SCOPE, Judge
from rose.judge.models import Lesson, ReconcileAnswer
from rose.loop.reflection import _land, _related, _relations
from rose.loop.reflection.review import WAITS
from rose.models import Node, first_sentence
from rose.store.facade import Store, redacted
from rose.text import shorten

#: Who offered a lesson (`source`): a reflection, the session end, or the user.
Source = Literal["reflector", "session-end", "user"]
SOURCES: tuple[str, ...] = ("reflector", "session-end", "user")
RELATIONS: tuple[str, ...] = ("duplicate", "refines", "contradicts", "specialises", "orthogonal")
#: Why a lesson from outside content with no repository to keep it in waits for the user.
NO_PROJECT = "from outside content, with no repository to keep it in"
#: The judge could not answer: the lesson is kept unreconciled, for the `reconcile` job.
OUTAGES = (*MODEL_FAILURES, GraphDamaged)


@dataclass
class Consolidated:
    """What became of one lesson.

    `relation` is a reconcile relation, or "unreconciled" (the judge could not answer:
    `why` says what failed) or "not reconciled" (the caller said not to). `lesson` is the
    lesson as stored, None when nothing of it was (a duplicate, a refinement folded in).
    `apart`: the subjects of a refinement that its target's title and gist do not name, for
    which it was kept as a lesson of its own. `store` is the store it landed in (a new one,
    when it had to be created). `pending` lists the lessons of that store still waiting for
    the `reconcile` job; `job` is what queueing it came to (`rose.jobs.capture` fills it in).
    """

    store: Store
    relation: str
    lesson: Node | None
    target: str = ""
    question: str = ""
    reason: str = ""
    why: str = ""
    apart: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    patched: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    job: str = ""
    #: Its file was written without the graph (the database stayed locked): a job indexes it.
    deferred: bool = False

    @property
    def ids(self) -> list[str]:
        """The id of the lesson stored, when one was: a duplicate or a refinement folded in
        stores none."""
        return [self.lesson.id] if self.lesson is not None else []

    @property
    def reconciled(self) -> bool:
        return self.relation in RELATIONS

    @property
    def marked(self) -> bool:
        """Whether the lesson stored waits for the `reconcile` job."""
        return self.lesson is not None and "reconcile" in self.lesson.provisional

    def line(self) -> str:
        """One line saying what happened, for `rose add`."""
        if self.relation == "duplicate":
            return f"not added: it says nothing {self.target} does not already say"
        if self.relation == "held" and self.lesson is not None:
            held = self.lesson
            return (  # no accept command here: an agent reads this line, and only the user
                # may accept (`rose review` says how)
                f"held for review: {held.id} · {held.title} — {held.held} "
                "(never served until the user accepts it: `rose review`)"
            )
        if self.relation == "deferred" and self.lesson is not None:
            what = "reconciliation" if self.marked else "indexing"
            if self.why:  # the command failed after the lesson was on disk
                return (
                    f"stored; {what} deferred: {self.lesson.id} · {self.lesson.title} "
                    f"({self.why}); a job finishes it"
                )
            return (
                f"stored; {what} deferred: {self.lesson.id} · {self.lesson.title} waits for "
                "the graph database another rose process holds; a job finishes it"
            )
        if self.relation == "refines" and self.lesson is None:
            above = f"; patched {len(self.patched)} lesson(s) above it" if self.patched else ""
            return f"folded into {self.target}{above}"
        node = self.lesson
        head = f"added {node.id} · {node.family} · {node.title}" if node else "added"
        tail = {
            "contradicts": f" — disputes {self.target}: {self.question}",
            "specialises": f" — beside {self.target}, a narrower case of it",
            "refines": f" — it refines {self.target}, whose title and gist do not name "
            f"{', '.join(self.apart)}: a lesson of its own",
            "unreconciled": f" — not reconciled yet ({self.why})",
        }.get(self.relation, "")
        return head + tail


def consolidate(
    store: Store | None,
    judge: Judge | None,
    lesson: Node,
    *,
    source: str,
    scope: str | None = None,
    reconcile: bool = True,
    start: Path | None = None,
) -> Consolidated:
    """Reconcile `lesson` with what is known, then store what the relation says to.

    `store` None: the store for `start` (the working directory), created as the lesson's
    scope needs. `judge` None: the store's own (`rose.judge.calls.for_store`). `scope`:
    the caller's choice, not asked again. `reconcile` False stores the lesson as it is.
    """
    if source not in SOURCES:
        raise RoseError(f"source {source!r} is not one of {', '.join(SOURCES)}")
    lesson = redacted(lesson)  # before any of it reaches a model
    if store is None:
        store = _land.existing(start)
    if lesson.provenance == "outside" and not lesson.accepted:
        scope = "project"  # outside content is never filed globally before the user accepts it
        if not _land.has_project(store, start):
            lesson.status, lesson.held = "quarantined", NO_PROJECT
    if lesson.status == "quarantined":  # never reconciled (folded into a served lesson)
        return _keep(store, lesson, scope or "project", source, start, why="")
    if not reconcile:
        return _keep(store, lesson, scope or lesson.scope, source, start, why="")
    bare = judge is None and store is None  # no store yet: the scope call has no cache
    try:
        judge = judge if judge is not None else _judge(store)
        if scope is None:
            scope = _scope(judge, lesson, store, start)
    except OUTAGES as exc:
        chosen = scope is not None  # else its scope is a default: judged later
        why = _why(exc)
        return _keep(store, lesson, scope or lesson.scope, source, start, why=why, scoped=chosen)
    landed, scope = _land.store_for(store, scope, start)
    if bare:
        from rose.judge.calls import for_store

        judge = for_store(landed, backend=judge.backend)
    taught = lesson.model_copy(deep=True)  # as it came: what a deferral keeps
    try:
        done = _reconcile(landed, judge, lesson, stored=False, scope=scope)
    except OUTAGES as exc:
        return _keep(landed, lesson, scope, source, start, why=_why(exc))
    except StoreLocked as exc:
        return _keep(landed, taught, scope, source, start, why=_why(exc), locked=exc)
    done.pending = pending(landed)
    _logged(done, source)
    return done


def pending(store: Store) -> list[str]:
    """The lessons stored unreconciled, oldest first (nothing when the index is unreadable)."""
    try:
        return [r["id"] for r in store.read("unreconciled")]
    except RoseError:
        return []


def reconcile_pending(store: Store, *, judge: Judge | None = None) -> list[Consolidated]:
    """Reconcile every lesson stored unreconciled, one run per store at a time (a second
    waits, then finds them done). A lesson whose answer does not fit is left for the next
    run; a backend that cannot answer at all ends the run (raised)."""
    out: list[Consolidated] = []
    with _one_at_a_time(store):
        tried: set[str] = set()
        while ids := [i for i in pending(store) if i not in tried]:  # stored meanwhile too
            if judge is None:
                from rose.judge.calls import for_store

                judge = for_store(store)
            for lesson_id in ids:
                tried.add(lesson_id)
                done = _reconcile_stored(store, judge, lesson_id)
                if done is not None:
                    out.append(done)
    return out


def _reconcile_stored(store: Store, judge: Judge, lesson_id: str) -> Consolidated | None:
    """Reconcile one stored lesson, read afresh: None when it no longer waits (another run
    did it) or the judge's answer did not fit (it waits for the next run)."""
    try:
        node = store.get(lesson_id)
    except LessonNotFound:
        return None
    if "reconcile" not in node.provisional:
        return None
    try:
        here = store
        if "scope" in node.provisional:
            here = _rescoped(store, judge, node)
        done = _reconcile(here, judge, node, stored=True, scope=node.scope)
    except AnswerInvalid:
        return None
    data: dict[str, Any] = {"id": node.id, "relation": done.relation, "target": done.target}
    if done.apart:
        data["apart"] = done.apart
    here.log("reconcile", {**data, "scope": node.scope})
    return done


def _rescoped(store: Store, judge: Judge, node: Node) -> Store:
    """Judge the scope of a lesson filed by default, moving it to the global store when it
    belongs there; returns the store to reconcile it in (`node.scope` says where it is)."""
    node.provisional = [p for p in node.provisional if p != "scope"]
    if node.provenance == "outside" and not node.accepted:
        return store  # outside content stays in the project store until the user accepts it
    wanted = _scope(judge, node, store, None)
    if wanted != "global" or node.scope == "global":
        return store  # a project lesson filed globally had no project store: it stays
    landed, _ = _land.store_for(store, "global")
    moved = landed.move(node, "global")
    landed.log("move", {"id": moved.id, "from": "project", "to": "global"})
    node.scope = moved.scope
    return landed


@contextmanager
def _one_at_a_time(store: Store) -> Iterator[None]:
    """Hold `jobs/reconcile.lock` of each of the store's folders (project, then global: one
    order, so no two runs wait on each other) while reconciling."""
    from rose.disk.atomic import exclusive

    with ExitStack() as stack:
        for d in store.dirs:  # a run waits its turn; a job has a deadline
            stack.enter_context(exclusive(d.jobs / "reconcile.lock"))
        yield


def take_in(store: Store) -> list[str]:
    """Store every lesson a `rose add` recorded (`rose.files.intake`) and died before storing,
    as it came, marked for reconciliation where it asked for it; the ids stored. A lesson
    whose file is on disk already (the command died just after writing it) is left as it is."""
    from rose.files import intake

    out: list[str] = []
    for d in store.dirs:
        with intake.leftover(d) as records:
            for r in records:
                lid = str(r["id"])
                if any(any(x.nodes.glob(f"*/{lid}.md")) for x in store.dirs):
                    continue
                node = store.draft(r["text"], title=r.get("title"), family=r.get("family"))
                node.id, node.provenance = lid, r.get("provenance") or "user"
                if r.get("reconcile", True):  # one order is kept: scope before reconcile
                    node.provisional = [*node.provisional, "reconcile"]
                    if not r.get("scope"):
                        node.provisional = [*node.provisional, "scope"]
                source = str(r.get("source") or "user")
                done = _keep(store, node, r.get("scope") or d.scope, source, None, why="")
                if done.lesson is not None:
                    out.append(done.lesson.id)
                    _noted(done.store, str(r.get("session") or ""), done.lesson.id, source)
    return out


def _noted(store: Store, session: str, lesson_id: str, source: str) -> None:
    """Note in the session's log that a lesson came of it (`rose.jobs.capture.note_minted`)."""
    from rose.files import sessions

    if session:
        root = store.primary.root
        turn = sessions.last_turn(root, session)
        sessions.append(root, session, "minted", turn=turn, id=lesson_id, source=source)


def captured(events: Path, *, unreconciled: int = 0) -> dict[str, Any]:
    """What `rose status` shows of consolidation: lessons offered by source, what became of
    them, the duplicates caught (then or on a later reconcile) and what still waits."""
    by_source = dict.fromkeys(SOURCES, 0)
    outcomes: dict[str, int] = {}
    for e in read_events(events, kind="add"):
        source = str(e.get("source") or "user")  # a plain `Store.add` is the user's
        by_source[source] = by_source.get(source, 0) + 1
        relation = str(e.get("relation") or "not reconciled")
        outcomes[relation] = outcomes.get(relation, 0) + 1
    later = read_events(events, kind="reconcile")
    for e in later:
        relation = str(e.get("relation"))
        outcomes[relation] = outcomes.get(relation, 0) + 1
    return {
        "by_source": by_source,
        "outcomes": outcomes,
        "duplicates": outcomes.get("duplicate", 0),
        "reconciled_later": len(later),
        "unreconciled": unreconciled,
    }


def creates_global(scope: str | None = None, start: Path | None = None) -> Path | None:
    """The global store a lesson consolidated here would create, or None
    (`rose.loop.reflection._land.creates_global`): for a caller that asks the user first."""
    return _land.creates_global(scope, start)


# -- the steps ---------------------------------------------------------------------------


def _judge(store: Store | None) -> Judge:
    from rose.judge import calls

    if store is not None:
        return calls.for_store(store)
    from rose import config as configmod
    from rose.model.registry import make_backend

    settings = configmod.load([])  # no store, so no settings: the defaults
    backend = make_backend(settings.agent, model=settings.model or None)
    return calls.Judge(backend, cache_path=None, events_path=None)


def _scope(judge: Judge, lesson: Node, store: Store | None, start: Path | None) -> str:
    context = {"lesson": _related.as_lesson(lesson), "project": _land.project_name(store, start)}
    return str(judge.ask(SCOPE, context).scope)


def _reconcile(
    store: Store, judge: Judge, lesson: Node, *, stored: bool, scope: str
) -> Consolidated:
    walk = _related.walk(store, judge, lesson, scope)
    ids = [r["id"] for r in walk.matched]
    rows = [r["lesson"] for r in store.lesson_rows(ids)] if ids else []
    existing = [Lesson(id=r["id"], title=r["title"], gist=r["gist"], body=r["body"]) for r in rows]
    if existing or {"title", "gist"} & set(lesson.provisional):
        context = {"lesson": _related.as_lesson(lesson), "existing": existing}
        answer = judge.ask(RECONCILE, context)
    else:  # nothing on its subject and nothing to write: no call needed
        answer = _alone(lesson)
    lesson.scope = scope  # type: ignore[assignment]
    applied = _relations.apply(store, lesson, answer, stored=stored, scope=scope)
    return Consolidated(
        store=store,
        relation=answer.relation,
        lesson=applied.kept,
        target=answer.target,
        question=answer.question,
        reason=answer.reason,
        apart=answer.subjects_apart(),
        written=applied.written,
        patched=applied.patched,
    )


def _alone(lesson: Node) -> ReconcileAnswer:
    gist = lesson.gist or first_sentence(lesson.body) or lesson.title
    return ReconcileAnswer(
        relation="orthogonal",
        target="",
        question="",
        detail="",
        title=lesson.title,
        gist=gist,
        reason="no lesson on its subject",
    )


def _keep(
    store: Store | None,
    lesson: Node,
    scope: str,
    source: str,
    start: Path | None,
    *,
    why: str,
    scoped: bool = True,
    locked: StoreLocked | None = None,
) -> Consolidated:
    """Store the lesson as it came; marked for the `reconcile` job when the judge failed (`why`),
    its scope too when it was neither chosen nor judged (`scoped` False). With the graph
    `locked` (found so here, or by the caller), its file is written without it: "deferred"."""
    landed, scope = _land.store_for(store, scope, start)
    if why:
        lesson.provisional = [*lesson.provisional, "reconcile"]
        if not scoped:  # the validator keeps one order: scope before reconcile
            lesson.provisional = [*lesson.provisional, "scope"]
    if locked is None:
        try:
            node = landed.keep(lesson, scope=scope)
        except StoreLocked as exc:
            locked = exc
    if locked is not None:
        node = landed.keep_unindexed(lesson, scope=scope, why=_why(locked))
    held = node.status == "quarantined"
    if held:  # the next prompt's status line says so, once
        notices.keep(landed.primary.root, WAITS)
    relation = "deferred" if locked else "unreconciled" if why else "not reconciled"
    done = Consolidated(
        store=landed,
        relation="held" if held else relation,
        lesson=node,
        why=why,
        written=[node.id],
        deferred=locked is not None,
    )
    if locked is not None:  # the index cannot be read: the job indexes it, and reconciles
        done.pending = [node.id]
    else:
        done.pending = pending(landed) if why else []
        if why and node.id not in done.pending:  # written, but the index could not be read
            done.pending.append(node.id)
    _logged(done, source)
    return done


def _logged(done: Consolidated, source: str) -> None:
    node = done.lesson
    data: dict[str, Any] = {"source": source, "relation": done.relation}
    if node is not None:
        data |= {"id": node.id, "scope": node.scope}
        too_big = done.store.too_big(node)
        if too_big:
            data["too_big"] = too_big
    if done.target:
        data["target"] = done.target
    if done.apart:
        data["apart"] = done.apart
    if done.why:
        data["why"] = done.why
    done.store.log("add", data)


def _why(exc: Exception) -> str:
    return shorten(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 160)
