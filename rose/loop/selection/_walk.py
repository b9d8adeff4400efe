"""Recall's relevance walk, bounded: at most a budget of calls, each of at most
`recall.max_candidates` lines, one level at a time (a level's chunks asked in parallel).

One walk is one pass. The first pass starts from the apexes (or, when they do not fit one
round trip, from their families, `rose.loop.selection.families`); the second starts from the lines
the first judged unrelated and shows the model the lessons the first chose (`found`), so a
lesson only recognisable through another one's wording can be reached. A family judged
anything but unrelated is opened (its apexes are the next level), a lesson judged
`descend` has its children offered next. What a pass's budget (or the deadline) leaves
unjudged is served, never dropped: the ranking puts it after everything judged relevant.
The exception is a second pass's own starting lines: the first pass judged them already,
so left unjudged they keep that verdict.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rose.errors import BackendTimeout, RoseError
from rose.loop.selection import families
from rose.store.facade import Row, Store

if TYPE_CHECKING:
    from rose.judge.base import Judge
    from rose.judge.models import CandidateVerdict, RelevanceAnswer
    from rose.loop.selection.recall import RecallResult

SERVED = ("relevant", "maybe", "unresolved")


@dataclass
class Walk:
    """One pass's settings and what it records into the recall result."""

    number: int  # 1: the first pass, 2: the second
    budget: int  # most calls
    found: list[Row] = field(default_factory=list)  # lessons shown in full (second pass)
    rules: list[Row] = field(default_factory=list)  # each rule's id and line
    calls: int = 0
    chosen: list[str] = field(default_factory=list)  # ids this pass chose
    # Questions known to follow this pass's levels (a second pass): each level has the
    # backend ready this many more as it asks (`Judge.prewarm`), so the next level's CLI
    # starts while this level is answered.
    ahead: int = 0
    late: list[Row] = field(default_factory=list)  # questions that ran out of time


def prewarm(judge: Judge, n: int) -> None:
    """Have `judge`'s backend ready for `n` relevance questions still to come (a judge
    without the method is left alone): the claude CLI's start-up then overlaps the work
    before they are asked (measured, 85 apexes on 2 cores: ~0.2 s less per prompt)."""
    warm = getattr(judge, "prewarm", None)
    if warm is not None:
        warm("relevance", n)


def run(
    store: Store,
    prompt: str,
    judge: Judge,
    res: RecallResult,
    frontier: list[Row],
    walk: Walk,
    *,
    started: float,
    deadline_s: float,
    again: bool = False,
) -> None:
    """Walk from `frontier` (each item a lesson row or a family item) until nothing is left
    to open or `walk.budget` is spent. `again`: the frontier was judged by the first pass."""
    from rose.loop.selection.recall import read_ahead

    rc = store.config.recall
    before = {v.id: v.depth for v in res.verdicts} if again else {}
    depth = {i["id"]: before.get(i["id"], 0) for i in frontier}  # a second look goes no deeper
    first = {i["id"] for i in frontier} if again else set()
    seen = {i["id"] for i in frontier}
    while frontier:
        size = rc.max_candidates
        chunks = [frontier[i : i + size] for i in range(0, len(frontier), size)]
        left = deadline_s - (time.monotonic() - started)
        out_of_time = left < min(judge.timeout_s, deadline_s) * 0.5
        room = 0 if out_of_time else max(0, walk.budget - walk.calls)
        asked, rest = chunks[:room], [i for c in chunks[room:] for i in c]
        if rest:
            why = "out of time" if out_of_time else f"pass {walk.number} call budget spent"
            _left_over(store, res, walk, rest, first, depth, why)
        if not asked:
            return
        if walk.ahead:
            prewarm(judge, len(asked) + walk.ahead)
        # the rows of the lessons asked about are read while the model answers
        lessons = [i["id"] for c in asked for i in c if not families.is_family(i)]
        wait = read_ahead(store, res, lessons)
        try:
            answers = _ask(judge, prompt, asked, walk)
        finally:
            wait()
        walk.calls += len(asked)
        failed = [a for a in answers if isinstance(a, RoseError)]
        if failed and len(failed) == len(answers) and not res.verdicts:
            raise failed[0]  # nothing was judged at all: recall degrades
        opened: list[Row] = []
        descend: list[Row] = []
        for chunk, answer in zip(asked, answers, strict=True):
            if isinstance(answer, RoseError):  # the other chunks' answers stand
                why = f"call failed ({type(answer).__name__})"
                _left_over(store, res, walk, chunk, first, depth, why)
                continue
            res.rounds.append([families.line(i) for i in chunk])
            res.passes.append(walk.number)
            res.items.update((i["id"], i) for i in chunk)
            given = {v.id: v for v in answer.verdicts}
            for item in chunk:
                opened += _judged(store, res, walk, item, given.get(item["id"]), depth, descend)
        opened += _children(store, descend, res, walk, depth)
        frontier = []
        for item in families.stable(opened):
            if item["id"] not in seen:
                seen.add(item["id"])
                frontier.append(item)


def _ask(
    judge: Judge, prompt: str, chunks: list[list[Row]], walk: Walk
) -> list[RelevanceAnswer | RoseError]:
    """Each chunk's answer, or the RoseError its call ended with. A question that ran out
    of time is kept in `walk.late`, for a background job to answer after all (`late`)."""

    from rose.judge.base import RELEVANCE

    def one(chunk: list[Row]) -> RelevanceAnswer | RoseError:
        ctx = {
            "prompt": prompt,
            "candidates": [families.line(i) for i in chunk],
            "rules": walk.rules,
            "found": walk.found,
        }
        try:
            return judge.ask(RELEVANCE, ctx)
        except BackendTimeout as exc:
            walk.late.append(ctx)
            return exc
        except RoseError as exc:
            return exc

    if len(chunks) == 1:
        return [one(chunks[0])]
    with ThreadPoolExecutor(max_workers=len(chunks)) as pool:  # one level, in parallel
        return list(pool.map(one, chunks))


def _judged(
    store: Store,
    res: RecallResult,
    walk: Walk,
    item: Row,
    v: CandidateVerdict | None,
    depth: dict[str, int],
    descend: list[Row],
) -> list[Row]:
    """Record the verdict on `item`; returns the apexes a family opens, and adds a lesson
    to open to `descend`."""
    from rose.loop.selection.recall import Verdict

    rc = store.config.recall
    level = depth.get(item["id"], 0)
    verdict: str  # the model's, or one the walk gives ("unresolved")
    verdict, reason = (v.verdict, v.reason) if v else ("unrelated", "not listed: unrelated")
    given = {r["id"] for r in walk.rules}
    rules = [r for r in dict.fromkeys(v.rules if v else []) if r in given]  # cited, and shown
    if families.is_family(item):
        res.verdicts.append(
            Verdict(item["id"], item["title"], verdict, reason, level, walk.number, rules)
        )
        if verdict == "unrelated":
            return []
        for m in item["members"]:
            depth.setdefault(m["id"], level)
        return list(item["members"])
    if verdict == "descend" and level >= rc.max_depth:
        verdict, reason = "unresolved", f"max depth {rc.max_depth}: {reason}"
    res.verdicts.append(
        Verdict(item["id"], item["title"], verdict, reason, level, walk.number, rules)
    )
    if verdict in SERVED:
        _choose(res, walk, item)
        return []
    if verdict == "descend":
        descend.append(item)
    return []


def _choose(res: RecallResult, walk: Walk | None, item: Row) -> bool:
    """Add `item` to what recall serves (and, with `walk`, to what that pass found);
    False when it was chosen already."""
    if any(c["id"] == item["id"] for c in res.chosen):
        return False
    res.chosen.append(item)
    if walk is not None:
        walk.chosen.append(item["id"])
    return True


def _children(
    store: Store, parents: list[Row], res: RecallResult, walk: Walk, depth: dict[str, int]
) -> list[Row]:
    """The lessons one step below `parents` (one query); a parent with none is served."""
    if not parents:
        return []
    rows = store.read("children", ids=[p["id"] for p in parents])
    chosen = {i["id"] for i in res.chosen}
    out: list[Row] = []
    for parent in parents:
        below = [r["lesson"] for r in rows if r["parent"] == parent["id"]]
        if not below:  # nothing below: serve it, ranked as the lesson the model asked about
            from rose.loop.selection.recall import Verdict

            level = depth.get(parent["id"], 0)
            why = "asked to descend, nothing below it: served itself"
            res.verdicts.append(
                Verdict(parent["id"], parent["title"], "relevant", why, level, walk.number)
            )
            _choose(res, walk, parent)
            res.decisions.append(f"{parent['id']} has nothing below it: served itself")
        for c in below:
            depth.setdefault(c["id"], depth.get(parent["id"], 0) + 1)
            if c["id"] not in chosen:
                out.append(c)
    return out


def _left_over(
    store: Store,
    res: RecallResult,
    walk: Walk,
    items: list[Row],
    first: set[str],
    depth: dict[str, int],
    why: str,
) -> None:
    """Lines no call of this pass could judge: served (a family's apexes in its place),
    except a second pass's starting lines, which keep the first pass's verdict."""
    from rose.loop.selection.recall import Verdict

    kept = [i for i in items if i["id"] in first]
    if kept:
        res.decisions.append(
            f"{len(kept)} line(s) not asked again ({why}): the first pass's verdict stands"
        )
    served = 0
    for item in (i for i in items if i["id"] not in first):
        for lesson in item["members"] if families.is_family(item) else [item]:
            level = depth.get(item["id"], 0)
            res.verdicts.append(
                Verdict(lesson["id"], lesson["title"], "unresolved", why, level, walk.number)
            )
            if _choose(res, None, lesson):  # served, but found by no judgement of this pass
                served += 1
                if why == "out of time":  # the machine's speed decided: said, never silent
                    res.unjudged.add(lesson["id"])
    if served:
        res.decisions.append(f"{served} lesson(s) unresolved ({why}): served within the budget")
