"""Where a session's closing reflection starts reading: the first stretch of the transcript
no reflection read, from the session's log (its `nudge` and `reflected` entries).

Standard library only, and no store: it reads entries the caller already has.
"""

from __future__ import annotations


def reflected(after: list[dict]) -> str:
    """How the reflection a nudge started stands, from the session log after it: "done", or
    "failed" (its model call failed), or "" (not yet reflected: pending, or it died)."""
    said = [e for e in after if e["t"] == "reflected"]
    if not said:
        return ""
    return "failed" if all(e.get("error") for e in said) else "done"


def unread(entries: list[dict]) -> tuple[int, bool]:
    """The byte the closing reflection starts from, and whether it resumes the session end's
    own reflection (one that died or failed half way: no new nudge is needed). A reflection
    whose model call failed left its stretch unread, so reading starts there at the latest."""
    marks = [(i, e) for i, e in enumerate(entries) if e["t"] == "nudge"]
    ends = [i for i, _ in marks[1:]] + [len(entries)] if marks else []
    states = [reflected(entries[i + 1 : end]) for (i, _), end in zip(marks, ends, strict=True)]
    failed = [
        int(e.get("start") or 0) for (_, e), s in zip(marks, states, strict=True) if s == "failed"
    ]
    last = marks[-1][1] if marks else {}
    if last.get("mode") == "session-end" and states[-1] != "done":
        return min([int(last.get("start") or 0), *failed]), True
    return (failed[0] if failed else int(last.get("end") or 0)), False
