"""A relevance judgement that missed the prompt's deadline is answered after all.

The prompt's path gives the model `calls.prompt_s`; a real model on a busy machine may take
longer, and the question would be thrown away. Instead the prompt hook hands the questions
that timed out to the `relevance-late` job (`answer_late`), which asks them again at a
background call's pace and writes, to the session's log, the lessons they judged relevant
(a `late` entry). The session's next prompt reads them (`relevant`): where its own
judgement falls short too (out of time, or the model down), they come before the lessons
no judgement reached (`rose.loop.selection.recall`). Work in a session continues its task, so what
bore on the last prompt is the best guess for the next.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose.errors import MODEL_FAILURES
from rose.files import sessions

if TYPE_CHECKING:
    from rose.store.facade import Store

#: The verdicts that serve a lesson.
_SERVED = ("relevant", "maybe")


def relevant(root: str | Path, session: str) -> list[str]:
    """The lessons the last late judgement of `session` found relevant (none when the last
    prompt's judgement was in time, or there is no such session)."""
    entries = sessions.read(root, session)
    prompts = [e for e in entries if e["t"] == "prompt"]
    last = int(prompts[-1].get("turn") or 0) if prompts else 0
    said = [e for e in entries if e["t"] == "late" and int(e.get("turn") or 0) == last]
    return [str(i) for e in said for i in e.get("relevant") or []]


def answer_late(store: Store, p: dict[str, Any]) -> None:
    """The `relevance-late` job's work: ask the prompt's timed-out questions (`p`, the job's
    payload) again, at a background call's deadline, and note what they judged relevant in
    the session's log. Its answers are the judge's cached ones for the same question."""
    from rose.judge.base import RELEVANCE
    from rose.judge.calls import for_store

    judge = for_store(store)
    chosen: list[str] = []
    failed = ""
    for question in p.get("questions") or []:
        try:
            answer = judge.ask(RELEVANCE, question)
        except MODEL_FAILURES as exc:
            failed = f"{type(exc).__name__}: {exc}"
            continue
        chosen += [v.id for v in answer.verdicts if v.verdict in _SERVED]
    root, sid, turn = store.primary.root, str(p["session"]), int(p.get("turn") or 0)
    sessions.append(root, sid, "late", turn=turn, relevant=list(dict.fromkeys(chosen)))
    if failed and not chosen:
        raise RuntimeError(f"the late relevance judgement failed too: {failed}")
