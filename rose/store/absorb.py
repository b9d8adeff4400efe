"""Folding a session's scratch log into episodes: one per unit of work, each written once.

A unit of work is a user prompt and the turns that serve it. It is complete once the
next prompt has begun, or when the session has ended; a Stop may absorb the complete
units so far and SessionEnd the rest. An episode's id is derived from the session and
the unit's turn, so absorbing the same unit twice finds its episode already written
and writes nothing: no unit is ever counted twice, whichever job gets there first.

Attribution is combined from its sources, best first. The in-session reflector (`used`
entries from ``rose used`` or a ``reflector``) decides for the lessons it names; the
judges of the digest (``assess``, a ``background`` reflection) fill in the rest; a lesson
the agent cited counts as used unless the reflector said it was not. Within one rank a
lesson said to be unused once is unused. A lesson served and named by nobody was not
used: strict by default.

A refinement's patch counts as a rescue of the lesson carrying it only when the prompt hook
logged it served (in the lesson's full block: `patched`) on a unit that succeeded and used
that lesson; served on work that failed or is unknown, or with a lesson not used, it
counts nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import cast

from rose.files import sessions, shortid
from rose.models import (
    AttributionSource,
    Cause,
    ClaimRef,
    Episode,
    Miss,
    Outcome,
    RecallMode,
    Span,
    valid_id,
)


def episode_id(session_id: str, turn: int) -> str:
    digest = hashlib.sha256(f"{session_id}\0{turn}".encode()).hexdigest()[:20]
    return f"e_{digest}"


OUTCOMES: dict[str, Outcome] = {o: o for o in ("success", "failure", "partial", "unknown")}
RECALL_MODES: dict[str, RecallMode] = {m: m for m in ("fits", "judged", "degraded")}
CAUSES: dict[str, Cause] = {c: c for c in ("irrelevant", "redundant", "ignored")}
#: The sources in the order an episode lists them (best first).
_ORDER: tuple[AttributionSource, ...] = ("rose used", "reflector", "assess", "background", "cite")

#: Turns a short id (as the block shows it) into the lesson id it is a prefix of.
Resolve = Callable[[str], str]


@dataclass
class Unit:
    turn: int
    prompt: str = ""
    time: str = ""
    recall: RecallMode = ""
    rules: list[str] = field(default_factory=list)  # selection rules recall was given
    served: list[str] = field(default_factory=list)
    patched: dict[str, list[str]] = field(default_factory=dict)  # lesson -> patches served
    # lesson -> used?, as the in-session reflector said, and as the digest's judges judged
    reflected: dict[str, bool] = field(default_factory=dict)
    assessed: dict[str, bool] = field(default_factory=dict)
    causes: dict[str, Cause] = field(default_factory=dict)  # from the digest's judges
    spoke: set[AttributionSource] = field(default_factory=set)
    citations: list[str] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    expansions: list[ClaimRef] = field(default_factory=list)
    rescues: list[ClaimRef] = field(default_factory=list)
    misses: list[Miss] = field(default_factory=list)
    outcome: Outcome = "unknown"
    summary: str = ""

    def attribution(self) -> tuple[list[str], list[str]]:
        """(used, unused): every lesson served or named, each in exactly one of them."""
        verdict = dict(self.assessed)
        for i in self.citations:
            if self.reflected.get(i, True):
                verdict[i] = True
        verdict.update(self.reflected)
        named = dict.fromkeys([*self.served, *self.reflected, *self.assessed, *self.citations])
        used = [i for i in named if verdict.get(i, False)]
        return used, [i for i in named if not verdict.get(i, False)]

    def sources(self) -> list[AttributionSource]:
        return [s for s in _ORDER if s in self.spoke or (s == "cite" and self.citations)]


def units(entries: list[dict], *, final: bool, resolve: Resolve | None = None) -> list[Unit]:
    """The units of work in a session's log; the last one only when the session has ended.

    An entry that names no `turn` belongs to the unit open when it was written. With
    `resolve`, every lesson id is resolved as it is read (the block shows short ids).
    """
    full: Resolve = resolve or (lambda i: i)
    found: dict[int, Unit] = {}
    current = 0
    for e in entries:
        kind = e["t"]
        if kind == "prompt":
            current = int(e.get("turn") or current + 1)
            u = found.setdefault(current, Unit(current))
            u.prompt, u.time = str(e.get("prompt", "")), str(e.get("time", ""))
            u.recall = RECALL_MODES.get(str(e.get("recall", "")), u.recall)
            _extend(u.served, e.get("served"), full)
            rules = e.get("rules")
            u.rules = [r for r in rules if valid_id(r)] if isinstance(rules, list) else []
            _patched(u, e.get("patched"), full)
            continue
        turn = int(e.get("turn") or current)
        if turn not in found:
            continue  # attribution for a unit this log never opened
        u = found[turn]
        if kind == "used":
            _said(u, e, full)
        elif kind == "cite":
            _extend(u.citations, e.get("ids"), full)
        elif kind == "span" and valid_id(e.get("lesson")) and e.get("span"):
            u.spans.append(Span(lesson=full(str(e["lesson"])), span=str(e["span"])))
        elif kind in ("expand", "rescue") and valid_id(e.get("lesson")) and e.get("claim"):
            ref = ClaimRef(lesson=full(str(e["lesson"])), claim=str(e["claim"]))
            (u.expansions if kind == "expand" else u.rescues).append(ref)
        elif kind == "miss" and valid_id(e.get("lesson")) and e.get("by") in MISSED_BY:
            _missed(u, e, full)
        elif kind == "outcome" and e.get("outcome") in OUTCOMES:
            u.outcome, u.summary = OUTCOMES[e["outcome"]], str(e.get("summary", ""))
    done = sorted(found.values(), key=lambda u: u.turn)
    return done if final else done[:-1]


MISSED_BY = ("rule", "relevance", "budget")


def _missed(u: Unit, e: dict, full: Resolve) -> None:
    """Fold one `miss` entry into the unit: a lesson once, the rules it cites once."""
    lesson = full(str(e["lesson"]))
    if any(m.lesson == lesson for m in u.misses):
        return
    rules = e.get("rules")
    cited = (
        list(dict.fromkeys(str(r) for r in rules if valid_id(r))) if isinstance(rules, list) else []
    )
    u.misses.append(Miss(lesson=lesson, by=e["by"], rules=cited))


def _said(u: Unit, e: dict, full: Resolve) -> None:
    """Fold one `used` entry into the unit: its source's verdicts, strict within a source."""
    source = e.get("source") or "rose used"  # written before sources were recorded
    if source not in sessions.SOURCES or e.get("error"):
        return  # a foreign source, or a judgement that failed: it said nothing
    digest = source in sessions.DIGEST_SOURCES
    into = u.assessed if digest else u.reflected
    used: list[str] = []
    unused: list[str] = []
    _extend(used, e.get("used"), full)
    _extend(unused, e.get("unused"), full)
    for i in used:
        into.setdefault(i, True)
    for i in unused:
        into[i] = False
    if digest:
        causes = e.get("causes")
        for i, cause in (causes if isinstance(causes, dict) else {}).items():
            if valid_id(i) and cause in CAUSES:
                u.causes[full(i)] = CAUSES[cause]
    if used or unused:
        u.spoke.add(cast(AttributionSource, source))


def _patched(u: Unit, patched: object, full: Resolve) -> None:
    """Add the patches a `prompt` entry says each lesson's full block carried."""
    for lesson, ids in (patched if isinstance(patched, dict) else {}).items():
        if not valid_id(lesson) or not isinstance(ids, list):
            continue
        into = u.patched.setdefault(full(lesson), [])
        into += [p for p in dict.fromkeys(ids) if isinstance(p, str) and p and p not in into]


def _extend(into: list[str], ids: object, full: Resolve) -> None:
    """Add the valid ids among `ids` (a log line is scratch: anything may be in it)."""
    for i in ids if isinstance(ids, list) else []:
        if valid_id(i) and (lid := full(i)) not in into:
            into.append(lid)


def resolver(every: Callable[[], list[str]]) -> Resolve:
    """A `Resolve` over the lesson ids `every()` lists, asked for them only when an id is
    short. A prefix that names no lesson, or several, is kept as written: a log line is
    scratch."""
    pool: list[list[str]] = []

    def resolve(i: str) -> str:
        if not shortid.is_short(i):
            return i
        if not pool:
            pool.append(every())
        try:
            return shortid.resolve(i, pool[0]) or i
        except shortid.AmbiguousId:
            return i

    return resolve


def episode(session_id: str, u: Unit) -> Episode:
    """The episode unit `u` of the session makes."""
    used, unused = u.attribution()
    credited = [i for i in used if i in u.patched] if u.outcome == "success" else []
    return Episode(
        id=episode_id(session_id, u.turn),
        session=session_id,
        turn=u.turn,
        prompt=u.prompt,
        outcome=u.outcome,
        served=u.served,
        used=used,
        unused=unused,
        causes={i: c for i, c in u.causes.items() if i in unused},
        recall=u.recall,
        rules=u.rules,
        attributed_by=u.sources(),
        citations=u.citations,
        load_bearing=u.spans,
        expansions=u.expansions,
        rescues=u.rescues,
        patch_rescues=[ClaimRef(lesson=i, claim=p) for i in credited for p in u.patched[i]],
        misses=u.misses,
        accepted_summary=u.summary,
        **({"time": u.time} if u.time else {}),
    )


def episodes(
    store_root: str,
    session_id: str,
    *,
    final: bool,
    resolve: Resolve | None = None,
    hold: Collection[int] = (),
) -> list[Episode]:
    """The episodes the session's complete units make (written or not yet), but for the
    turns in `hold` (their judgement failed: a later run judges them first)."""
    entries = sessions.read(store_root, session_id)
    done = units(entries, final=final, resolve=resolve)
    return [episode(session_id, u) for u in done if u.turn not in hold]
