"""When a turn is worth a reflection: the occasion is counted from the transcript, never judged.

The Stop hook keeps, in the session's freshness record, what happened since the last
reflection: tool calls, failed tool calls and turns. A reflection is due once any of them
reaches its setting (`reflect.nudge_after_tool_calls`, `reflect.min_surprises`,
`reflect.nudge_after_turns`), or a knowledge gap was found (descent had nothing below a
used lesson to restore), and the cooldown since the last one has passed. Failures are
one occasion among three on purpose: a conceptual mistake exits zero and passes its tests,
so a reflector that waited for errors would see only the cheapest mistakes.

When reflections keep producing nothing (no lesson minted, no lesson credited, no span
reported), the cooldown doubles with each one past `reflect.nudge_backoff_after` in a row,
and a reflection that produces something resets it. What a reflection produced is read
from the session's log (`nudge` entries, then `minted`, `span` or a reflector's `used`
after them), so any process may report it and nothing is counted in place.

Standard library only: the Stop hook runs this after every turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rose.store.facade import Row

#: Attribution sources that are a reflection's doing (the in-session and the background one).
REFLECTION_SOURCES = ("reflector", "background")
#: The cooldown doubles at most this many times (300 s becomes at most 5 h 20 min).
MAX_DOUBLINGS = 6


@dataclass(frozen=True)
class Settings:
    tool_calls: int = 12
    turns: int = 3
    surprises: int = 2
    cooldown_s: float = 300
    backoff_after: int = 3


def cooldown(settings: Settings, empty: int) -> float:
    """Seconds to wait after a reflection, given `empty` reflections in a row that produced
    nothing."""
    past = empty - settings.backoff_after + 1
    return settings.cooldown_s * 2 ** min(past, MAX_DOUBLINGS) if past > 0 else settings.cooldown_s


def tally(state: dict[str, Any], *, tool_calls: int, failed: int, turns: int = 1) -> dict[str, Any]:
    """`state` with one more turn's activity counted (a new dict)."""
    out = dict(state)
    out["tools"] = int(state.get("tools", 0)) + tool_calls
    out["failed"] = int(state.get("failed", 0)) + failed
    out["turns"] = int(state.get("turns", 0)) + turns
    return out


def due(
    state: dict[str, Any], settings: Settings, now: float, *, empty: int = 0, gaps: int = 0
) -> str | None:
    """Why a reflection is due now (a phrase for the log), or None. `gaps` are knowledge
    gaps found since the last reflection (work failed with a level-0 lesson used: nothing
    below it to restore), each an occasion to learn on its own."""
    reasons = []
    if gaps:
        reasons.append(f"{gaps} knowledge gap{'s' if gaps != 1 else ''}")
    if int(state.get("tools", 0)) >= settings.tool_calls:
        reasons.append(f"{state['tools']} tool calls")
    if int(state.get("failed", 0)) >= settings.surprises:
        reasons.append(f"{state['failed']} failed tool calls")
    if int(state.get("turns", 0)) >= settings.turns:
        reasons.append(f"{state['turns']} turns")
    if not reasons:
        return None
    last = state.get("last")
    if isinstance(last, (int, float)) and now - last < cooldown(settings, empty):
        return None
    return ", ".join(reasons)


def reset(state: dict[str, Any], now: float) -> dict[str, Any]:
    """`state` after a reflection was started: the counts begin again."""
    return {**state, "tools": 0, "failed": 0, "turns": 0, "last": now}


def gaps_since_reflection(entries: list[Row]) -> int:
    """The `gap` entries after the session log's latest `nudge` (all of them, before any)."""
    n = 0
    for e in entries:
        if e.get("t") == "nudge":
            n = 0
        elif e.get("t") == "gap":
            n += 1
    return n


def empty_streak(entries: list[Row]) -> int:
    """How many reflections in a row, ending with the latest, produced nothing.

    `entries` is the session's log, oldest first. A reflection produced something when a
    `minted` or `span` entry, or a `used` entry from a reflection, follows its `nudge`
    before the next one.
    """
    streak = 0
    produced = False
    seen = False
    for e in entries:
        kind = e.get("t")
        if kind == "nudge":
            if seen:
                streak = 0 if produced else streak + 1
            seen, produced = True, False
        elif seen and (
            kind in ("minted", "span")
            or (kind == "used" and e.get("source") in REFLECTION_SOURCES)
            or (kind == "reflected" and e.get("produced"))
        ):
            produced = True
    if seen:
        streak = 0 if produced else streak + 1
    return streak


def block_reason(root: str, session_id: str) -> str:
    """What the agent is asked to do with its one extra turn (also the fork's prompt)."""
    from rose.store.view import render

    served = _served(root, session_id)
    return render("inject/reflect", session=session_id, served=served)


def _served(root: str, session_id: str) -> list[str]:
    """The lesson ids the session has had in context, most recent unit first, as listed."""
    from rose.files import sessions

    seen: list[str] = []
    for e in reversed(sessions.read(root, session_id)):
        if e.get("t") == "prompt":
            for i in e.get("served") or []:
                if isinstance(i, str) and i not in seen:
                    seen.append(i)
    return seen
