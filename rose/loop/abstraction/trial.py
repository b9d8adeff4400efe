"""Trial patches: what descent restored after a failure is kept only if its next serving helps.

When work a compressed lesson was served for fails, descent attaches one more step of the
detail the lesson dropped as a patch, for its next serving (`descend.after_failure`, whose
`descend` event names the patches by `claim_id`). That patch is a trial. The first unit of
work, after it, whose block carried it with its lesson, and whose outcome is known, judges
it:

- the work succeeded and used the lesson: the trial is over and the patch stays (that
  success is credited as its rescue, `Episode.patch_rescues`);
- the work failed again (or partly), or the lesson was judged unused: the patch did not
  help, and it is dropped from the lesson, so it is no longer served. Descent may restore
  it again after a later failure, as a new trial, its record on that lesson lowered by
  the try.

A unit whose outcome is unknown judges nothing: the trial waits for the next serving. A
patch that is no trial (a refinement's, or a rescue made sticky by `keep_rescues`) is
never judged here. Each verdict is a `trial-patch` event; `rose status` counts them.

Which patches a unit's block carried is read from the session's log (`patched` on its
`prompt` entry), as absorption reads it; the outcome and the attribution from the unit's
episode. Runs when a session's units are absorbed (`after_episodes`, from the learning
jobs), after `descend.keep_rescues`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rose.errors import LessonNotFound
from rose.events import read_events
from rose.files import sessions
from rose.models import Episode, Node, claim_id
from rose.store import absorb
from rose.store.facade import Row, Store

#: The event of a judged trial patch.
TRIAL = "trial-patch"
#: The event descent logs when it attaches patches after a failure.
DESCEND = "descend"


def pending(events: Path) -> set[tuple[str, str]]:
    """The (lesson, patch id) trials not judged yet: attached by descent after a failure,
    with no verdict since (a patch attached again after a verdict is a new trial)."""
    out: set[tuple[str, str]] = set()
    for e in read_events(events):
        kind, lesson = e.get("kind"), str(e.get("lesson") or "")
        if kind == DESCEND and not e.get("during"):
            out |= {(lesson, str(p)) for p in e.get("patches") or []}
        elif kind == TRIAL:
            out.discard((lesson, str(e.get("patch") or "")))
    return out


def verdict(episode: Episode, lesson: str) -> str:
    """What one serving says of a trial patch on `lesson`: "kept", "dropped", or "" when
    it says nothing (the outcome is unknown)."""
    if episode.outcome == "unknown":
        return ""
    if episode.outcome == "success" and lesson in episode.used:
        return "kept"
    return "dropped"


def after_episodes(store: Store, session_id: str, episodes: Iterable[Episode]) -> list[Row]:
    """Judge the trial patches the session's newly written `episodes` served, each on its
    first serving with a known outcome; drop those that did not help. Returns the verdicts
    (as logged)."""
    trials = pending(store.primary.events)
    written = sorted(episodes, key=lambda e: (e.turn, e.time))
    if not trials or not written:
        return []
    entries = sessions.read(str(store.primary.root), session_id)
    every = absorb.resolver(lambda: [r["id"] for r in store.read("lesson_id_list")])
    patched = {u.turn: u.patched for u in absorb.units(entries, final=True, resolve=every)}
    found: list[Row] = []
    for ep in written:
        for lesson, ids in patched.get(ep.turn, {}).items():
            for pid in ids:
                said = verdict(ep, lesson) if (lesson, pid) in trials else ""
                if said:
                    trials.discard((lesson, pid))
                    found.append({"lesson": lesson, "patch": pid, "verdict": said,
                                  "episode": ep.id, "outcome": ep.outcome,
                                  "used": lesson in ep.used})  # fmt: skip
    _drop(store, [f for f in found if f["verdict"] == "dropped"])
    for f in found:
        store.log(TRIAL, {"session": session_id, **f})
    return found


def _drop(store: Store, dropped: list[Row]) -> None:
    """Take the dropped patches off their lessons, each lesson in one write; a patch the
    lesson no longer carries (folded back, edited away) is gone already."""
    changed: dict[str, Node] = {}
    for f in dropped:
        try:
            node = changed.get(f["lesson"]) or store.get(f["lesson"])
        except LessonNotFound:
            f["carried"] = False
            continue
        kept = [p for p in node.patches if claim_id(node.id, p) != f["patch"]]
        f["carried"] = len(kept) < len(node.patches)
        if f["carried"]:
            node.patches = kept
            changed[node.id] = node
    if changed:
        store.write(list(changed.values()))


def summary(events: Path) -> dict[str, Any]:
    """Trial patches judged on their next serving: how many were kept and dropped."""
    said = [str(e.get("verdict")) for e in read_events(events, kind=TRIAL)]
    return {"judged": len(said), "kept": said.count("kept"), "dropped": said.count("dropped")}
