"""Attribution by the digest judge: how a unit of work went, and which served lessons bore on it.

Serving is a retrieval decision, using is an outcome. `assess_unit` shows the `assess`
call the task, the digest and every served lesson in full, and reads its answer
strictly: a lesson is used only when the judge says so; one it leaves out, or one it
names twice with two answers, is not. An unused lesson keeps the judge's likely cause
(irrelevant: recall over-served it; redundant: the agent knew it anyway; ignored: it
bore on the work and did not land) where the judge could tell.

Nothing here raises into the job that called it: an empty digest makes no call and a
failed call is reported in the verdict, and either way the verdict credits nothing and
leaves the outcome unknown. `record` appends a verdict to the session's log, where
absorption combines it with the better sources (the in-session reflector, citations).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rose.errors import RoseError
from rose.files import sessions
from rose.judge.base import ASSESS, Judge
from rose.judge.models import AssessAnswer, AssessContext, Lesson
from rose.models import Cause, Node, Outcome

SOURCE = "assess"


@dataclass(frozen=True)
class Verdict:
    """What the digest judge said of one unit of work.

    `used` and `unused` name only lessons the judge spoke of (`omitted` the served ones
    it did not); `causes` maps an unused lesson to its likely cause where the judge gave
    one. `error` says why there is no judgement (then nothing is credited); `judged` is
    false whenever no answer was read.
    """

    outcome: Outcome = "unknown"
    steered: bool = False
    summary: str = ""
    used: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    causes: dict[str, Cause] = field(default_factory=dict)
    omitted: list[str] = field(default_factory=list)
    error: str = ""
    judged: bool = False


def assess_unit(judge: Judge, *, prompt: str, digest: str, served: list[Node]) -> Verdict:
    """Judge one unit of work from its digest; never raises a judge failure.

    `judge` is a `rose.judge.calls.Judge`. An empty (or blank) digest shows nothing done:
    no call is made and nothing is credited.
    """
    if not digest.strip():
        return Verdict(summary="nothing to judge: the digest is empty")
    shown = list({n.id: n for n in served}.values())
    context = AssessContext(
        prompt=prompt,
        digest=digest,
        served=[Lesson(id=n.id, title=n.title, gist=n.gist, body=n.body) for n in shown],
    )
    try:
        answer: AssessAnswer = judge.ask(ASSESS, context)
    except RoseError as exc:
        return Verdict(error=f"{type(exc).__name__}: {exc}")
    return _read(answer, [n.id for n in shown])


def _read(answer: AssessAnswer, served: list[str]) -> Verdict:
    said: dict[str, bool] = {}
    causes: dict[str, Cause] = {}
    for use in answer.lessons:
        said[use.id] = said.get(use.id, True) and use.used  # two answers: the stricter one
        if not use.used and use.cause:
            causes[use.id] = use.cause
    used = [i for i in served if said.get(i) is True]
    unused = [i for i in served if said.get(i) is False]
    return Verdict(
        outcome=answer.outcome,
        steered=answer.steered,
        summary=answer.reason,
        used=used,
        unused=unused,
        causes={i: c for i, c in causes.items() if i in unused},
        omitted=[i for i in served if i not in said],
        judged=True,
    )


def record(store_root: str | Path, session_id: str, turn: int, verdict: Verdict) -> None:
    """Append `verdict` to the session's log for the unit at `turn`.

    An ``outcome`` entry when the judge gave one (an unknown outcome never overwrites a
    known one), and a ``used`` entry from ``assess``: naming nothing, with the ``error``
    or why it was ``skipped``, when there was no judgement, so the log shows it was tried.
    """
    if verdict.outcome != "unknown":
        sessions.append(
            store_root,
            session_id,
            "outcome",
            turn=turn,
            outcome=verdict.outcome,
            summary=verdict.summary,
            steered=verdict.steered,
        )
    extra: dict[str, Any] = {}
    if verdict.error:
        extra["error"] = verdict.error
    elif not verdict.judged:
        extra["skipped"] = verdict.summary or "not judged"
    sessions.append(
        store_root,
        session_id,
        "used",
        turn=turn,
        used=list(verdict.used),
        unused=list(verdict.unused),
        causes=dict(verdict.causes),
        source=SOURCE,
        **extra,
    )
