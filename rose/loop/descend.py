"""Descent: when work a compressed lesson was served for fails, which dropped detail to restore.

Compression declares what it removed (`Node.dropped`, each claim with the node still holding
its text), and deltas are inherited, so descent is a ranking over the claims dropped anywhere
below the served node, not a search of the graph:

    score = w_judge * usefulness + w_prior * prior - w_cost * cost

`usefulness` is the model's judgement (`rank_repairs`: how likely this detail's absence
caused this failure, 0-1); `prior` is observed, the Laplace-smoothed rate at which restoring
this claim into this lesson rescued the work ((rescues + 1) / (tries + 2), a try being an
episode's expansion of it, a rescue a failure it turned or a success its patch was served
on); `cost` is the claim's tokens over the dearest candidate's. Without a judge (any model
failure) the first term is absent: what has worked, cheapest first.

Strategies (`recall.strategy`) turn the ranking into attempts, escalating until the level-0
nodes (never deleted) are served: `delta-patch` serves the lesson with the chosen claims
attached, one more each attempt; `delta-jump` swaps in each candidate's holder in turn;
`stepwise` ignores the manifest and walks the lesson's children level by level (the
baseline). A failure at level 0 is a knowledge gap, not a compression bug: it is logged as a
``knowledge-gap`` event, which `rose status` lists.

At session end (`after_failure`, from the learning jobs) a failed unit's compressed lessons
get the best claim not yet attached as a trial patch for their next serving, and the unit's
episode records the expansion (a session log ``expand`` entry). A patch served on later work
that used the lesson and succeeded is credited as a rescue (`Episode.patch_rescues`), which
raises the claim's prior. Attaching claims mid-session through the prompt hook is not built.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rose.errors import MODEL_FAILURES, LessonNotFound
from rose.events import read_events
from rose.models import Node, claim_id
from rose.store import sessions
from rose.store.facade import Store

STRATEGIES = ("delta-patch", "delta-jump", "stepwise")
GAP = "knowledge-gap"
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


@dataclass(frozen=True)
class Attempt:
    """One try: serve the lessons `serve` in full, with `patches` (claim texts) attached to
    the first of them; `restored` are the claim ids this try restored so far."""

    serve: tuple[str, ...]
    patches: tuple[str, ...] = ()
    restored: tuple[str, ...] = ()
    level0: bool = False


def priors(store: Store, lesson_id: str, claims: Sequence[tuple[str, str]]) -> dict[str, tuple]:
    """(prior, tried, rescued) of each (claim id, claim text) on the lesson: episodes that
    restored it into this lesson, the failures it rescued there, and the successful uses
    its text was served on as the lesson's patch."""
    top = _below(store, lesson_id)[lesson_id]
    return _priors(store, top, claims)


def _priors(store: Store, top: dict, claims: Sequence[tuple[str, str]]) -> dict[str, tuple]:
    if not claims:
        return {}
    ids = [c for c, _ in claims]
    rows = {r["id"]: r for r in store.read("claim_record", id=top["id"], ids=ids)}
    patched = dict(_pairs(top["patch_rescues"]))
    out: dict[str, tuple] = {}
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


def _below(store: Store, lesson_id: str) -> dict[str, dict]:
    """The lesson and everything below it (`descent_walk` rows by id); unknown: an error."""
    rows = {r["id"]: r for r in store.read("descent_walk", id=lesson_id)}
    if lesson_id not in rows:
        raise LessonNotFound(lesson_id)
    return rows


def _usefulness(judge: Any, prompt: str, failure: str, rows: list[dict]) -> dict[str, float]:
    """The model's usefulness of each claim, or {} when no judge answered."""
    if judge is None or not rows:
        return {}
    from rose.judge.models import RankRepairsContext, RepairClaim

    context = RankRepairsContext(
        prompt=prompt,
        failure=failure,
        claims=[RepairClaim(id=r["id"], claim=r["claim"], kind=r["kind"]) for r in rows],
    )
    try:
        answer = judge.ask("rank_repairs", context)
    except MODEL_FAILURES:
        return {}
    scores: dict[str, float] = {}
    for s in answer.ranking:
        scores[s.id] = min(scores.get(s.id, 1.0), s.usefulness)  # said twice: the lower
    return scores


def rank(
    store: Store, judge: Any, lesson_id: str, failure_text: str, *, prompt: str = ""
) -> list[Candidate]:
    """The claims dropped below `lesson_id` that it neither carries as patches nor holds in
    its body (folded back by repair), best first.

    `judge` is a `rose.judge.calls.Judge`, or None: then (as on any model failure) the
    ranking is by prior and cost alone."""
    return _rank(store, judge, _below(store, lesson_id)[lesson_id], failure_text, prompt)


def _rank(store: Store, judge: Any, top: dict, failure_text: str, prompt: str) -> list[Candidate]:
    carried = {p.strip() for p in top["patches"] or []}
    body = top.get("body") or ""
    rows: list[dict] = []
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
        # A claim the judge left out has no evidence of explaining the failure.
        useful = judged.get(r["id"], 0.0) if judged else None
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


def _walk(below: dict[str, dict], lesson_id: str) -> list[str]:
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


def plan(
    store: Store,
    judge: Any,
    lesson_id: str,
    failure_text: str,
    *,
    strategy: str | None = None,
    prompt: str = "",
) -> list[Attempt]:
    """The attempts descent makes after `lesson_id` failed, in order, ending at level 0."""
    strategy = strategy or store.config.recall.strategy
    if strategy not in STRATEGIES:
        raise ValueError(f"recall.strategy must be one of {', '.join(STRATEGIES)}")
    below = _below(store, lesson_id)
    walk = _walk(below, lesson_id)
    bottom = tuple(i for i in walk if below[i]["level"] == 0)
    attempts: list[Attempt] = []
    if strategy == "stepwise":
        return [Attempt(serve=(i,), level0=below[i]["level"] == 0) for i in walk]
    ranked = _rank(store, judge, below[lesson_id], failure_text, prompt)
    if strategy == "delta-patch":
        for i in range(1, len(ranked) + 1):
            chosen = ranked[:i]
            attempts.append(
                Attempt(
                    serve=(lesson_id,),
                    patches=tuple(c.claim for c in chosen),
                    restored=tuple(c.id for c in chosen),
                )
            )
    else:  # delta-jump: each candidate's holder in turn, once each
        held: dict[str, list[str]] = {}
        for c in ranked:
            held.setdefault(c.holder, []).append(c.id)
        for holder, ids in held.items():
            at_bottom = holder in below and below[holder]["level"] == 0
            attempts.append(Attempt(serve=(holder,), restored=tuple(ids), level0=at_bottom))
    if bottom and (not attempts or set(attempts[-1].serve) != set(bottom)):
        attempts.append(Attempt(serve=bottom, level0=True))
    return attempts


def after_failure(
    store: Store,
    judge: Any,
    *,
    session_id: str,
    turn: int,
    prompt: str,
    failure: str,
    served: Iterable[Node],
    used: Iterable[str],
) -> list[dict]:
    """After a unit of work failed: descend from each compressed lesson it was served, and
    note a knowledge gap for each level-0 lesson it used. Returns what was done (as logged).

    A compressed lesson gets its best claim not yet attached as a trial patch (under
    `delta-patch`; the node-swapping strategies have no form that outlives the session, so
    they only log their choice), and the unit's episode records the expansion. A lesson
    whose candidates are used up escalates to its level-0 nodes, which is only logged:
    demotion (`rose.loop.demote`) counts the failures themselves, from the episodes."""
    root = str(store.primary.root)
    strategy = store.config.recall.strategy
    used = set(used)
    done: list[dict] = []
    words = failure[-_EXCERPT:]
    for node in {n.id: n for n in served}.values():
        base = {"session": session_id, "turn": turn, "lesson": node.id, "level": node.level}
        if node.level == 0:
            if node.id in used:
                gap = {**base, "title": node.title, "prompt": prompt[:_EXCERPT], "failure": words}
                store.log(GAP, gap)
                done.append({"kind": GAP, **gap})
            continue
        ranked = rank(store, judge, node.id, failure, prompt=prompt)
        event: dict[str, Any] = {**base, "strategy": strategy, "judged": _judged(ranked)}
        if not ranked:
            event["escalate"] = level0(store, node.id)
        elif strategy == "delta-patch":
            best = ranked[0]
            node = store.get(node.id)  # as it is now, not as it was served
            node.patches = [*node.patches, best.claim]
            store.save(node)
            sessions.append(root, session_id, "expand", turn=turn, lesson=node.id, claim=best.id)
            event.update(claims=[best.id], score=round(best.score, 3))
        else:
            event["chose"] = ranked[0].holder if strategy == "delta-jump" else ""
        store.log("descend", event)
        done.append({"kind": "descend", **event})
    return done


def _judged(ranked: list[Candidate]) -> bool:
    return any(c.usefulness is not None for c in ranked)


def knowledge_gaps(events: Path, *, limit: int = 20) -> list[dict]:
    """The latest knowledge gaps (a level-0 lesson used on work that failed), newest first,
    one per lesson."""
    out: dict[str, dict] = {}
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
