"""Reflection: did this stretch of work teach something, and which served lessons did work?

A reflector is shown a digest of the work (what the user asked and corrected, the agent's
reasoning and messages, its tool calls and which failed) and the lessons the agent had in
context, and answers the `reflect` call: the lessons to mint, one per subject (a lesson is
found by its title and gist alone, so one holding two subjects would be found for the one
its title names), each written out verbosely (it is compressed later, and only what is
written now can be recovered), and for each served lesson whether it changed what was
done, with the sentences of it that did the work (load-bearing spans, which the
compressor keeps).

What comes back is held to structure, not trusted: a verdict on a lesson that was not
served is dropped, and a span is kept only when it is a sentence the lesson really holds.
Each minted lesson goes through consolidation (`rose.loop.reflection.consolidate`), never straight
into the store. What the reflection found is written to the session's append-only log
(`minted`, `used` and `span` entries, then one `reflected` entry), which absorption folds
into the unit's episode; nothing is counted in place.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rose.errors import MODEL_FAILURES
from rose.files import sessions
from rose.judge import models as m
from rose.judge.base import REFLECT, Judge
from rose.models import Node

#: Why a lesson waits for the user when the reflector says outside content instructs it.
INSTRUCTED = "the reflector says it carries instructions from outside content"


def hold(node: Node, why: str) -> None:
    """Quarantine `node`: stored, never served, until the user accepts it (`rose review`).
    What is held came from outside content, whatever else the answer said."""
    node.provenance = "outside"
    node.status = "quarantined"
    node.held = node.held or why


@dataclass
class Reflection:
    """What one reflection produced."""

    minted: list[str] = field(default_factory=list)  # ids of lessons stored (or folded into)
    outcomes: list[str] = field(default_factory=list)  # what consolidation did with each found
    used: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    spans: list[tuple[str, str]] = field(default_factory=list)  # (lesson id, sentence)
    error: str = ""  # the model call failed: nothing was learnt
    failed: str = ""  # the reflector saw the work fail: what went wrong, in its words
    proposed: list[m.ProposedRule] = field(default_factory=list)  # rules the reflector wrote
    rules: list[str] = field(default_factory=list)  # ids of those stored (form judged right)

    @property
    def produced(self) -> bool:
        return bool(self.minted or self.used or self.spans or self.rules)


def _lesson(node: Node) -> m.Lesson:
    return m.Lesson(id=node.id, title=node.title, gist=node.gist, body=node.body or node.gist)


def reflect(
    judge: Judge,
    *,
    prompt: str,
    digest: str,
    served: list[Node],
    known: Sequence[Node] = (),
    chosen: bool = False,
    earlier: Sequence[str] = (),
) -> tuple[m.ReflectAnswer | None, Reflection]:
    """Ask the reflector about one stretch of work; nothing is written here.

    An empty digest asks nothing (there is nothing to learn from). A failed call is
    reported in the `Reflection`, never raised. `chosen`: recall chose `served` from a
    larger store (the walk ran), rather than serving every lesson because all fit.
    `earlier`: the session's requests before `prompt`, oldest first.
    """
    out = Reflection()
    if not digest.strip():
        return None, out
    ctx = m.ReflectContext(
        prompt=prompt,
        digest=digest,
        earlier=list(earlier),
        known=[m.Candidate(id=n.id, title=n.title, gist=n.gist) for n in [*served, *known]],
        served=[_lesson(n) for n in served],
        chosen=chosen,
    )
    try:
        answer = judge.ask(REFLECT, ctx)
    except MODEL_FAILURES as exc:
        out.error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        return None, out
    out.proposed = list(answer.rules)
    if answer.outcome in ("failure", "partial"):
        out.failed = answer.failure.strip() or answer.reason.strip() or "the work failed"
    by_id = {n.id: n for n in served}
    for use in answer.lessons:
        if use.id in by_id:
            (out.used if use.used else out.unused).append(use.id)
    out.used = list(dict.fromkeys(out.used))
    out.unused = [i for i in dict.fromkeys(out.unused) if i not in out.used]
    for span in answer.load_bearing:
        node = by_id.get(span.id)
        text = " ".join(span.span.split())
        if (
            node is not None
            and span.id in out.used
            and text
            and text in " ".join(node.body.split())
        ):
            out.spans.append((span.id, text))
    return answer, out


def minted_nodes(answer: m.ReflectAnswer, *, where: str = "") -> list[Node]:
    """The lessons a reflection found, as new level-0 nodes (not yet stored), in its order.

    `where` names the stretch of work they came from (session and turn): each id is then
    derived from it and the lesson's text, so reflecting on the same work again (a retried
    job) mints the same lessons, not more, and a replayed run names its lessons alike. A
    lesson written twice in one answer is minted once.
    """
    if not answer.found:
        return []
    out: dict[str, Node] = {}
    for lesson in answer.new_lessons:
        ident = {}
        if where:
            digest = hashlib.sha256(f"{where}\0{lesson.body}".encode()).hexdigest()[:20]
            ident = {"id": f"n_{digest}"}
        node = Node(
            **ident,
            title=lesson.title,
            gist=lesson.gist,
            family=lesson.family,
            provisional=["family"],  # the model's choice: reconcile may rename it
            body=lesson.body,
            origin="reflection",
            provenance=lesson.provenance,
        )
        if lesson.outside_instructions:
            hold(node, INSTRUCTED)
        out.setdefault(" ".join(lesson.body.split()), node)
    return list(out.values())


def record(root: str | Path, session_id: str, turn: int, found: Reflection, *, source: str) -> None:
    """Write what a reflection found to the session's log, for absorption to fold in.

    `source` says whose verdicts these are: "background" (a digest judge, which fills in
    where nobody better spoke) or "reflector" (one that saw the session itself).
    """
    for lid in found.minted:
        sessions.append(root, session_id, "minted", turn=turn, id=lid, source=source)
    if (found.used or found.unused) and turn:
        sessions.append(
            root, session_id, "used", turn=turn, used=found.used, unused=found.unused, source=source
        )
    for lid, span in found.spans:
        sessions.append(root, session_id, "span", turn=turn, lesson=lid, span=span)
    sessions.append(
        root,
        session_id,
        "reflected",
        turn=turn,
        source=source,
        produced=found.produced,
        **({"error": found.error} if found.error else {}),
    )
