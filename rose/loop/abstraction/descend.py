"""Descent: when work a compressed lesson was served for fails, which dropped detail to restore.

Compression declares what it removed (`Node.dropped`, each claim with the node still holding
its text), and deltas are inherited, so descent is a ranking over the claims dropped anywhere
below the served node, not a search of the graph:

    score = w_judge * usefulness + w_prior * prior - w_cost * cost

`usefulness` is the model's judgement (`rank_repairs`: how likely this detail's absence
caused this failure, 0-1); `prior` is observed, the Laplace-smoothed rate at which restoring
this claim into this lesson rescued the work ((rescues + 1) / (tries + 2), a try being an
episode's expansion of it, a rescue a failure it turned or a success its patch was served
on); `cost` is the claim's tokens over the dearest candidate's. Without a judge (none
given, or no model to ask: `BackendUnavailable`) the first term is absent: what has worked,
cheapest first. A judge asked that fails to answer (a timeout, an unreadable answer, a
failed call: `JUDGE_FAILURES`) decides nothing: that lesson gets no step of descent, and
a ``descend-failed`` event says why. A ranking that names no claim is the model's verdict
that none explains the failure: every claim scores 0, as one found not to bear (`BEARS`).
A lesson the unit's attribution found irrelevant to the work (its ``causes``, from the
``assess`` judge, in the session's log) is not descended from: no detail of it can explain
a failure of work it did not bear on, so none of it is offered to `rank_repairs`.

Descent restores one step at a time (`_pick`), in the form `recall.strategy` says:
`delta-patch` the claims the judge finds likely to explain the failure (or the best one
not yet restored), `delta-jump` the whole text of the best one's holder,
`stepwise` the next lesson below, level by level, ignoring the manifest (the baseline).
With nothing left to restore it escalates to the level-0 lessons (never deleted). A
failure at level 0 is a knowledge gap, not a compression bug: it is logged as a
``knowledge-gap`` event, which `rose status` lists.

Seen at session end (`after_failure`, from the learning jobs), a failed unit's compressed
lessons get that step as a trial patch for their next serving (`rose.loop.abstraction.trial` keeps
or drops it by that serving), and the unit's episode records the expansion (a session log
``expand`` entry).
Seen mid-session by a reflector (`during_session`), the step is restored for the rest of
the session only (`sessions.restore`), and the prompt hook serves it on every later
prompt. A patch or restored claim served on later work that used the lesson and succeeded
is credited as a rescue (`Episode.patch_rescues`), which raises the claim's prior; a
restored one then becomes a patch of its lesson (`keep_rescues`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose import tokens
from rose.errors import MODEL_FAILURES, BackendUnavailable, LessonNotFound
from rose.events import read_events
from rose.files import sessions
from rose.models import Node, claim_id
from rose.store import absorb
from rose.store.facade import Row, Store

if TYPE_CHECKING:
    from rose.judge.base import Judge

STRATEGIES = ("delta-patch", "delta-jump", "stepwise")
#: A claim the judge scores this useful is likely to explain the failure: delta-patch
#: restores every such claim at once, not one a failure.
LIKELY = 0.7
#: A claim the judge scores below this does not bear on the failure: it is not tried, and
#: with none above it descent goes to the level-0 lessons. Without a judge every claim is
#: tried, cheapest of what has worked first.
BEARS = 0.25
GAP = "knowledge-gap"
#: What a judge asked can fail with: its judgement is missing, so descent does nothing for
#: that lesson (never the judge-less ranking). `BackendUnavailable` is no model to ask.
JUDGE_FAILURES = tuple(e for e in MODEL_FAILURES if e is not BackendUnavailable)
#: The event of a descent that decided nothing because its judge failed.
FAILED = "descend-failed"
#: How much of a failure's words a `descend` or `knowledge-gap` event keeps.
_EXCERPT = 300


@dataclass(frozen=True)
class Candidate:
    """A dropped claim descent could restore, with what it was scored on.

    `usefulness` is None when no judge answered; `tried` and `rescued` are this claim's
    record on the served lesson (the prior's counts).
    """

    id: str
    claim: str
    kind: str
    holder: str
    tokens: int
    usefulness: float | None
    prior: float
    cost: float
    score: float
    tried: int = 0
    rescued: int = 0


def priors(
    store: Store, lesson_id: str, claims: Sequence[tuple[str, str]]
) -> dict[str, tuple[float, int, int]]:
    """(prior, tried, rescued) of each (claim id, claim text) on the lesson: episodes that
    restored it into this lesson, the failures it rescued there, and the successful uses
    its text was served on as the lesson's patch."""
    top = _below(store, lesson_id)[lesson_id]
    return _priors(store, top, claims)


def _priors(
    store: Store, top: Row, claims: Sequence[tuple[str, str]]
) -> dict[str, tuple[float, int, int]]:
    if not claims:
        return {}
    ids = [c for c, _ in claims]
    rows = {r["id"]: r for r in store.read("claim_record", id=top["id"], ids=ids)}
    patched = dict(_pairs(top["patch_rescues"]))
    out: dict[str, tuple[float, int, int]] = {}
    for cid, text in claims:
        row = rows.get(cid, {})
        served = int(patched.get(claim_id(top["id"], text), 0))
        rescued = int(row.get("rescued") or 0) + served
        tried = max(int(row.get("tried") or 0), rescued)
        out[cid] = ((rescued + 1) / (tried + 2), tried, rescued)
    return out


def _pairs(values: list[str] | None) -> list[tuple[str, str]]:
    """The graph's "patch|count" entries as pairs."""
    return [(a, b) for a, _, b in (v.rpartition("|") for v in values or []) if a]


def _below(store: Store, lesson_id: str) -> dict[str, Row]:
    """The lesson and everything below it (`descent_walk` rows by id); unknown: an error."""
    rows = {r["id"]: r for r in store.read("descent_walk", id=lesson_id)}
    if lesson_id not in rows:
        raise LessonNotFound(lesson_id)
    return rows


def _usefulness(
    judge: Judge | None, prompt: str, failure: str, rows: list[Row]
) -> dict[str, float] | None:
    """The model's usefulness of each claim it ranked ({} when it ranked none), or None when
    there is no judge: none given, or no model to ask (`BackendUnavailable`). Any other
    model failure (`JUDGE_FAILURES`) is raised: a failed judgement decides nothing."""
    if judge is None:
        return None
    from rose.judge.base import RANK_REPAIRS
    from rose.judge.models import RankRepairsContext, RepairClaim

    context = RankRepairsContext(
        prompt=prompt,
        failure=failure,
        claims=[RepairClaim(id=r["id"], claim=r["claim"], kind=r["kind"]) for r in rows],
    )
    try:
        answer = judge.ask(RANK_REPAIRS, context)
    except BackendUnavailable:
        return None
    scores: dict[str, float] = {}
    for s in answer.ranking:
        scores[s.id] = min(scores.get(s.id, 1.0), s.usefulness)  # said twice: the lower
    return scores


def rank(
    store: Store, judge: Judge | None, lesson_id: str, failure_text: str, *, prompt: str = ""
) -> list[Candidate]:
    """The claims dropped below `lesson_id` that it neither carries as patches nor holds in
    its body (folded back by repair), best first.

    `judge` is a `rose.judge.calls.Judge`, or None: then (as when it has no model to ask)
    the ranking is by prior and cost alone. A judge that fails to answer raises its
    failure (`JUDGE_FAILURES`): it is no ranking."""
    return _rank(store, judge, _below(store, lesson_id)[lesson_id], failure_text, prompt)


def _rank(
    store: Store, judge: Judge | None, top: Row, failure_text: str, prompt: str
) -> list[Candidate]:
    carried = {p.strip() for p in top["patches"] or []}
    body = top.get("body") or ""
    rows: list[Row] = []
    seen: set[str] = set()
    for r in store.read("descent_candidates", id=top["id"]):
        text = r["claim"].strip()
        # Repair folds a claim dropped below into this lesson's body word for word; the
        # lower lesson's manifest still lists it (true of that lesson), so it is skipped here.
        if text in carried or text in seen or text in body:
            continue
        seen.add(text)
        rows.append(r)
    if not rows:
        return []
    w = store.config.descend
    judged = _usefulness(judge, prompt, failure_text, rows)
    record = _priors(store, top, [(r["id"], r["claim"]) for r in rows])
    dearest = max(int(r["tokens"] or 0) for r in rows) or 1
    out = []
    for r in rows:
        prior, tried, rescued = record[r["id"]]
        # A claim the judge left out (all of them, when it ranked none) has no evidence of
        # explaining the failure.
        useful = judged.get(r["id"], 0.0) if judged is not None else None
        cost = int(r["tokens"] or 0) / dearest
        score = w.w_prior * prior - w.w_cost * cost
        if useful is not None:
            score += w.w_judge * useful
        out.append(
            Candidate(
                id=r["id"], claim=r["claim"], kind=r["kind"], holder=r["holder"],
                tokens=int(r["tokens"] or 0), usefulness=useful, prior=prior, cost=cost,
                score=score, tried=tried, rescued=rescued,
            )
        )  # fmt: skip
    out.sort(key=lambda c: (-c.score, c.tokens, c.id))
    return out


def level0(store: Store, lesson_id: str) -> list[str]:
    """The level-0 lessons below `lesson_id` (itself when it is one), nearest first."""
    below = _below(store, lesson_id)
    return [i for i in _walk(below, lesson_id) if below[i]["level"] == 0]


def _walk(below: dict[str, Row], lesson_id: str) -> list[str]:
    """The lessons below `lesson_id` (itself when at level 0), level by level, each once,
    in the order each lists what it was derived from."""
    if below[lesson_id]["level"] == 0:
        return [lesson_id]
    out: list[str] = []
    seen = {lesson_id}
    frontier = [lesson_id]
    while frontier:
        nxt = []
        for parent in frontier:
            for child in below[parent]["derived"] or []:
                if child in below and child not in seen:
                    seen.add(child)
                    out.append(child)
                    nxt.append(child)
        frontier = nxt
    return out


def _pick(
    store: Store, lesson_id: str, ranked: list[Candidate], strategy: str, taken: set[str]
) -> list[tuple[str, tuple[str, ...]]]:
    """What one more step of descent restores to the lesson under `strategy`, as (text, the
    claim ids it restores) pairs, skipping texts in `taken`; [] when nothing is left.

    `delta-patch`: every claim the judge found likely to explain the failure (usefulness
    at least `LIKELY`), or else the best one; `delta-jump`: the whole text of the best
    claim's holder (what swapping it in would add); `stepwise`: the next lesson below,
    level by level, whatever the manifest says. Claims the judge found not to bear on the
    failure (`BEARS`) are none of these."""
    ranked = [c for c in ranked if c.usefulness is None or c.usefulness >= BEARS]
    if strategy == "delta-patch":
        fresh = [c for c in ranked if c.claim.strip() not in taken]
        likely = [c for c in fresh if c.usefulness is not None and c.usefulness >= LIKELY]
        return [(c.claim, (c.id,)) for c in likely or fresh[:1]]
    if strategy == "delta-jump":
        held: dict[str, list[str]] = {}
        for c in ranked:
            held.setdefault(c.holder, []).append(c.id)
        candidates = [(holder, tuple(ids)) for holder, ids in held.items()]
    else:
        candidates = [(i, ()) for i in _walk(_below(store, lesson_id), lesson_id) if i != lesson_id]
    for holder, ids in candidates:
        for text in _bodies(store, [holder]):
            if text not in taken:
                return [(text, ids)]
    return []


def _bodies(store: Store, ids: Sequence[str]) -> list[str]:
    """The bodies of the lessons `ids` that still exist, stripped."""
    out = []
    for i in ids:
        try:
            out.append(store.get(i).body.strip())
        except LessonNotFound:
            continue
    return [b for b in out if b]


def _ranked(
    store: Store, judge: Judge | None, node: Node, failure: str, prompt: str, strategy: str
) -> list[Candidate]:
    """The ranking `strategy` needs: none for `stepwise`, which ignores the manifest."""
    return [] if strategy == "stepwise" else rank(store, judge, node.id, failure, prompt=prompt)


def _irrelevant(store: Store, session_id: str, turn: int, used: Iterable[str] = ()) -> set[str]:
    """The lessons the unit at `turn` was served that its attribution found irrelevant to
    the work (the digest judges' ``causes`` in the session's log), less any said used."""
    root = str(store.primary.root)
    every = absorb.resolver(lambda: [r["id"] for r in store.read("lesson_id_list")])
    for u in absorb.units(sessions.read(root, session_id), final=True, resolve=every):
        if u.turn == turn:
            _, unused = u.attribution()
            out = {i for i, cause in u.causes.items() if cause == "irrelevant" and i in unused}
            return out - set(used)
    return set()


def _failed(store: Store, event: dict[str, Any], exc: Exception) -> dict[str, Any]:
    """Log that descent from a lesson decided nothing, its judge having failed; the entry."""
    event = {**event, "error": f"{type(exc).__name__}: {exc}"[:_EXCERPT]}
    store.log(FAILED, event)
    return {"kind": FAILED, **event}


def after_failure(
    store: Store,
    judge: Judge,
    *,
    session_id: str,
    turn: int,
    prompt: str,
    failure: str,
    served: Iterable[Node],
    used: Iterable[str],
) -> list[Row]:
    """After a unit of work failed (seen at session end): descend from each compressed
    lesson it was served, and note a knowledge gap for each level-0 lesson it used.
    Returns what was done (as logged). A lesson the unit's attribution found irrelevant is
    passed over; one whose judge failed gets nothing (a ``descend-failed`` entry).

    A compressed lesson gets one more step of descent (`_pick`) as a trial patch for its
    next serving, and the unit's episode records the expansion. A lesson with nothing left
    to restore escalates to its level-0 nodes, which is only logged: demotion
    (`rose.loop.abstraction.demote`) counts the failures themselves, from the episodes."""
    root = str(store.primary.root)
    strategy = store.config.recall.strategy
    used = set(used)
    done: list[Row] = []
    words = failure[-_EXCERPT:]
    skip = _irrelevant(store, session_id, turn, used)
    for node in {n.id: n for n in served}.values():
        if node.id in skip:
            continue
        base = {"session": session_id, "turn": turn, "lesson": node.id, "level": node.level}
        if node.level == 0:
            if node.id in used:
                gap = {**base, "title": node.title, "prompt": prompt[:_EXCERPT], "failure": words}
                store.log(GAP, gap)
                sessions.append(root, session_id, "gap", turn=turn, lesson=node.id)
                done.append({"kind": GAP, **gap})
            continue
        node = store.get(node.id)  # as it is now, not as it was served
        try:
            ranked = _ranked(store, judge, node, failure, prompt, strategy)
        except JUDGE_FAILURES as exc:
            done.append(_failed(store, {**base, "strategy": strategy}, exc))
            continue
        event: dict[str, Any] = {**base, "strategy": strategy, "judged": _judged(ranked)}
        chosen = _pick(store, node.id, ranked, strategy, {p.strip() for p in node.patches})
        if not chosen:
            event["escalate"] = level0(store, node.id)
        else:
            node.patches = [*node.patches, *(text for text, _ in chosen)]
            store.save(node)
            _expanded(root, event, chosen)
            event["patches"] = [claim_id(node.id, text) for text, _ in chosen]  # on trial
        store.log("descend", event)
        done.append({"kind": "descend", **event})
    return done


def _expanded(root: str, event: dict[str, Any], chosen: list[tuple[str, tuple[str, ...]]]) -> None:
    """Log each claim restored for the unit's episode (`expand`), and say so in `event`."""
    claims = [cid for _, ids in chosen for cid in ids]
    for cid in claims:
        sessions.append(
            root, event["session"], "expand", turn=event["turn"], lesson=event["lesson"], claim=cid
        )
    event.update(claims=claims, tokens=sum(tokens.count(t) for t, _ in chosen))


def during_session(
    store: Store,
    judge: Judge,
    *,
    session_id: str,
    turn: int,
    prompt: str,
    failure: str,
    served: Iterable[Node],
) -> list[Row]:
    """A reflector saw the work of `turn` fail: restore one more step of descent to each
    compressed lesson it was served, for the rest of the session (`sessions.restore`: the
    prompt hook serves it from there on every later prompt, without the graph). A restored
    claim served on work that then succeeds becomes a patch of its lesson
    (`keep_rescues`); one that does not is gone when the session is. With nothing left to
    try, the level-0 lessons below are restored whole, for this session only. Returns what
    was done (as logged). A lesson the unit's attribution found irrelevant is passed over;
    one whose judge failed gets nothing (a ``descend-failed`` entry)."""
    from rose.store.view import render

    root = str(store.primary.root)
    strategy = store.config.recall.strategy
    before = sessions.restored(root, session_id)
    done: list[Row] = []
    skip = _irrelevant(store, session_id, turn)
    for node in {n.id: n for n in served}.values():
        if node.level == 0 or node.id in skip:
            continue  # level 0: nothing was dropped from it, a gap for the session's end
        node = store.get(node.id)
        taken = {p.strip() for p in node.patches}
        taken |= {r["text"].strip() for r in before if r["lesson"] == node.id}
        base = {
            "session": session_id, "turn": turn, "lesson": node.id, "level": node.level,
            "strategy": strategy, "during": True,
        }  # fmt: skip
        try:
            ranked = _ranked(store, judge, node, failure, prompt, strategy)
        except JUDGE_FAILURES as exc:
            done.append(_failed(store, base, exc))
            continue
        chosen = _pick(store, node.id, ranked, strategy, taken)
        event: dict[str, Any] = {**base, "judged": _judged(ranked)}
        if not chosen:  # nothing left to try: the level-0 lessons, which hold all of it
            bottom = level0(store, node.id)
            event["escalate"] = bottom
            chosen = [(t, ()) for t in _bodies(store, bottom) if t not in taken]
        if chosen:
            for text, ids in chosen:
                piece = render("inject/restored", id=node.id, claims=[text])
                sessions.restore(
                    root, session_id, lesson=node.id, claim=ids[0] if ids else "",
                    patch=claim_id(node.id, text), text=text, piece=piece, turn=turn,
                    escalated="escalate" in event,
                )  # fmt: skip
            _expanded(root, event, chosen)
        store.log("descend", event)
        done.append({"kind": "descend", **event})
    return done


def keep_rescues(store: Store, session_id: str, episodes: Iterable[Any]) -> list[str]:
    """Make sticky what descent restored in this session and then rescued: a restored claim
    served on work that used its lesson and succeeded (an episode's `patch_rescues`)
    becomes a patch of that lesson. Returns the ids of the lessons it patched."""
    restored = {r["patch"]: r for r in sessions.restored(str(store.primary.root), session_id)}
    changed: dict[str, Node] = {}
    for episode in episodes:
        for ref in getattr(episode, "patch_rescues", []):
            entry = restored.get(ref.claim)
            if entry is None or entry["lesson"] != ref.lesson or entry.get("escalated"):
                continue  # a level-0 lesson served whole is the demotion rule's to judge
            try:
                node = changed.get(ref.lesson) or store.get(ref.lesson)
            except LessonNotFound:
                continue  # gone since: nothing to patch
            if entry["text"].strip() not in {p.strip() for p in node.patches}:
                node.patches = [*node.patches, entry["text"]]
                changed[node.id] = node
    if changed:
        store.write(list(changed.values()))
        store.log("sticky", {"session": session_id, "lessons": sorted(changed)})
    return sorted(changed)


def _judged(ranked: list[Candidate]) -> bool:
    return any(c.usefulness is not None for c in ranked)


def knowledge_gaps(events: Path, *, limit: int = 20) -> list[Row]:
    """The latest knowledge gaps (a level-0 lesson used on work that failed), newest first,
    one per lesson."""
    out: dict[str, Row] = {}
    for e in reversed(read_events(events, kind=GAP)):
        lesson = str(e.get("lesson", ""))
        if lesson and lesson not in out:
            out[lesson] = {
                "lesson": lesson,
                "title": str(e.get("title", "")),
                "time": str(e.get("time", "")),
                "prompt": str(e.get("prompt", "")),
            }
    return list(out.values())[:limit]
