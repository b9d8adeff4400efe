"""Folding a session's scratch log into episodes: one per unit of work, each written once.

A unit of work is a user prompt and the turns that serve it. It is complete once the
next prompt has begun, or when the session has ended; a Stop may absorb the complete
units so far and SessionEnd the rest. An episode's id is derived from the session and
the unit's turn, so absorbing the same unit twice finds its episode already written
and writes nothing: no unit is ever counted twice, whichever job gets there first.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from rose.models import ClaimRef, Episode, Outcome, Span, valid_id
from rose.store import sessions, shortid


def episode_id(session_id: str, turn: int) -> str:
    digest = hashlib.sha256(f"{session_id}\0{turn}".encode()).hexdigest()[:20]
    return f"e_{digest}"


OUTCOMES: dict[str, Outcome] = {o: o for o in ("success", "failure", "partial", "unknown")}


@dataclass
class Unit:
    turn: int
    prompt: str = ""
    time: str = ""
    served: list[str] = field(default_factory=list)
    used: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    expansions: list[ClaimRef] = field(default_factory=list)
    rescues: list[ClaimRef] = field(default_factory=list)
    outcome: Outcome = "unknown"
    summary: str = ""


def units(entries: list[dict], *, final: bool) -> list[Unit]:
    """The units of work in a session's log; the last one only when the session has ended.

    An entry that names no `turn` belongs to the unit open when it was written.
    """
    found: dict[int, Unit] = {}
    current = 0
    for e in entries:
        kind = e["t"]
        if kind == "prompt":
            current = int(e.get("turn") or current + 1)
            u = found.setdefault(current, Unit(current))
            u.prompt, u.time = str(e.get("prompt", "")), str(e.get("time", ""))
            _extend(u.served, e.get("served"))
            continue
        turn = int(e.get("turn") or current)
        if turn not in found:
            continue  # attribution for a unit this log never opened
        u = found[turn]
        if kind == "used":
            _extend(u.used, e.get("used"))
            _extend(u.unused, e.get("unused"))
        elif kind == "cite":
            _extend(u.citations, e.get("ids"))
        elif kind == "span" and valid_id(e.get("lesson")) and e.get("span"):
            u.spans.append(Span(lesson=str(e["lesson"]), span=str(e["span"])))
        elif kind in ("expand", "rescue") and valid_id(e.get("lesson")) and e.get("claim"):
            ref = ClaimRef(lesson=str(e["lesson"]), claim=str(e["claim"]))
            (u.expansions if kind == "expand" else u.rescues).append(ref)
        elif kind == "outcome" and e.get("outcome") in OUTCOMES:
            u.outcome, u.summary = OUTCOMES[e["outcome"]], str(e.get("summary", ""))
    done = sorted(found.values(), key=lambda u: u.turn)
    return done if final else done[:-1]


def _extend(into: list[str], ids: object) -> None:
    """Add the valid ids among `ids` (a log line is scratch: anything may be in it)."""
    for i in ids if isinstance(ids, list) else []:
        if valid_id(i) and i not in into:
            into.append(i)


def _ids(ep: Episode) -> list[str]:
    spans = [s.lesson for s in ep.load_bearing]
    claims = [c.lesson for c in [*ep.expansions, *ep.rescues]]
    return [*ep.served, *ep.used, *ep.citations, *spans, *claims]


def prefixes(ep: Episode) -> list[str]:
    """The ids in `ep` that look like the injected block's short ids (a prefix to resolve)."""
    return [i for i in _ids(ep) if shortid.is_short(i)]


def resolved(ep: Episode, every: list[str]) -> Episode:
    """`ep` with each short id it holds replaced by the lesson id it is a unique prefix of.

    A prefix that names no lesson, or several, is kept as written: a log line is scratch.
    """
    full: dict[str, str] = {}
    for i in prefixes(ep):
        try:
            full[i] = shortid.resolve(i, every) or i
        except shortid.AmbiguousId:
            full[i] = i

    def ids(values: list[str]) -> list[str]:
        return list(dict.fromkeys(full.get(v, v) for v in values))

    def claims(values: list[ClaimRef]) -> list[ClaimRef]:
        return [ClaimRef(lesson=full.get(r.lesson, r.lesson), claim=r.claim) for r in values]

    return ep.model_copy(
        update={
            "served": ids(ep.served),
            "used": ids(ep.used),
            "citations": ids(ep.citations),
            "load_bearing": [
                Span(lesson=full.get(r.lesson, r.lesson), span=r.span) for r in ep.load_bearing
            ],
            "expansions": claims(ep.expansions),
            "rescues": claims(ep.rescues),
        }
    )


def episodes(store_root: str, session_id: str, *, final: bool) -> list[Episode]:
    """The episodes the session's complete units make (written or not yet)."""
    out = []
    for u in units(sessions.read(store_root, session_id), final=final):
        used = [i for i in u.used if i not in u.unused]
        out.append(
            Episode(
                id=episode_id(session_id, u.turn),
                session=session_id,
                turn=u.turn,
                prompt=u.prompt,
                outcome=u.outcome,
                served=u.served,
                used=used,
                citations=u.citations,
                load_bearing=u.spans,
                expansions=u.expansions,
                rescues=u.rescues,
                accepted_summary=u.summary,
                **({"time": u.time} if u.time else {}),
            )
        )
    return out
