"""Counterfactual attribution: would the approach have been different without the lesson?

Attribution (`attribute`, `rose used`) says which served lessons were used by reading what
was done: a judgement of a counterfactual nobody ran. This runs it, on a sample, with the
replay runner: for a lesson an episode served, the episode's prompt is probed twice, each
probe in a fresh process that sees only the lessons it is shown and the prompt
(`_replay.FreshProcess.probe_set`): once with every lesson the episode served, once with
all of them but this one. The `counterfactual` call then judges, blind to what attribution
said, whether the approach changed in a way this lesson accounts for. Attribution agrees
when a lesson it called used changed the approach, or one it called unused did not.

Why with the rest of what was served, not the lesson alone against nothing: alone, every
lesson on the task's topic changes the approach, so the check would ask recall's question
(does it bear on the task). Taken out of what the agent really had, it asks what "used"
claims: that this lesson made a difference beside the others. A lesson whose point another
served lesson also makes changes nothing, and attribution calling it used disagrees. The
lessons are shown as they are now (an episode records ids, not text); one since deleted
drops out of both probes.

A disagreement corrects the record: the check ran the counterfactual that attribution only
inferred, so its verdict stands for the pair. A `Correction` is written beside the episode
(`Store.save_correction`; the episode itself is never edited), and the graph holds the
episode with the lesson moved to what it used (the approach changed) or did not use (it
did not): the lesson's successes and failures, its regression set, demotion's count and
precision all follow. The check's event says so (`corrected`), and `rose status` counts
the corrections. A probe is not the agent: it neither forgets a lesson nor knows anything
out of habit, so a lesson the agent ignored or did not need, rightly called unused, can
still change the probe's approach, and is then counted as used.

Sampling: episodes with a prompt that some source attributed (`attributed_by`); pairs
already checked (a `counterfactual` event) or corrected (here or on another machine) are
not redone; the rest in a seeded order (a
hash of the ids, as `_sample` orders episodes), an episode's lessons together, so they
share its probe with everything. The budget, `attribute.counterfactual_calls` a run, counts
each probe and each judgement as one call, answered from the cache or not, and a pair is
started only when its calls fit: at most three, two once its episode was probed whole.

A failed probe or an unreadable judgement records no verdict, never an agreement: a
`counterfactual-failed` event says why, and the pair is tried again on a later run, up to
`TRIES` times in all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from rose.disk.atomic import exclusive
from rose.errors import RoseError
from rose.events import read_events
from rose.judge import models as m
from rose.judge.base import COUNTERFACTUAL, Judge
from rose.loop.abstraction import replay as _replay
from rose.models import Correction
from rose.store.facade import Store

#: The event of a checked pair, and of a pair whose check failed.
CHECKED = "counterfactual"
FAILED = "counterfactual-failed"
#: Runs a pair may fail in before it is left alone (a probe that always fails would else
#: take the budget of every run, being first in the order).
TRIES = 2


@dataclass(frozen=True)
class Episode:
    """A recorded episode whose attribution can be checked: its prompt, the lessons it
    served (as they are now), which of them its attribution called used (as corrected),
    and which a check has corrected already."""

    id: str
    prompt: str
    served: tuple[m.Lesson, ...]
    used: frozenset[str]
    corrected: frozenset[str] = frozenset()


@dataclass
class Check:
    """One pair checked: `changed` is the judgement, `agree` whether attribution's `used`
    says the same; both None, with `error`, when the check failed. `corrected`: the
    disagreement was written as a correction of the episode's record."""

    episode: str
    lesson: str
    used: bool
    changed: bool | None = None
    agree: bool | None = None
    reason: str = ""
    error: str = ""
    corrected: bool = False


def episodes(store: Store) -> list[Episode]:
    """Every episode with a prompt that some source attributed, with what it served."""
    grouped: dict[str, tuple[str, list[m.Lesson], set[str], set[str]]] = {}
    for r in store.read("counterfactual_pairs"):
        _, served, used, fixed = grouped.setdefault(r["episode"], (r["prompt"], [], set(), set()))
        lesson = m.Lesson(id=r["lesson"], title=r["title"], gist=r["gist"], body=r["body"])
        served.append(lesson)
        if r["used"]:
            used.add(lesson.id)
        if r["corrected"]:
            fixed.add(lesson.id)
    return [
        Episode(eid, prompt, tuple(served), frozenset(used), frozenset(fixed))
        for eid, (prompt, served, used, fixed) in grouped.items()
    ]


def _order(*ids: str) -> str:
    return hashlib.sha256(":".join(ids).encode()).hexdigest()


def due(store: Store) -> list[tuple[Episode, m.Lesson]]:
    """The (episode, served lesson) pairs left to check, in the seeded order."""
    checked: set[tuple[str, str]] = set()
    failures: dict[tuple[str, str], int] = {}
    for e in read_events(store.primary.events):
        pair = (str(e.get("episode")), str(e.get("lesson")))
        if e.get("kind") == CHECKED:
            checked.add(pair)
        elif e.get("kind") == FAILED:
            failures[pair] = failures.get(pair, 0) + 1
    out = []
    for ep in sorted(episodes(store), key=lambda ep: _order(ep.id)):
        for lesson in sorted(ep.served, key=lambda x: _order(ep.id, x.id)):
            pair = (ep.id, lesson.id)
            if lesson.id in ep.corrected:
                continue
            if pair not in checked and failures.get(pair, 0) < TRIES:
                out.append((ep, lesson))
    return out


def counterfactual(
    store: Store,
    *,
    judge: Judge,
    prober: _replay.SetProber | None = None,
    calls: int | None = None,
) -> list[Check]:
    """Check attribution on the pairs due, within `calls` model calls (default:
    `attribute.counterfactual_calls`); each check is logged as an event, and each
    disagreement corrects the episode's record of the lesson (`Correction`).

    `prober` asks the probes (default: a fresh `rose` process each).
    """
    budget = store.config.attribute.counterfactual_calls if calls is None else calls
    if budget <= 0:
        return []
    prober = prober or _replay.FreshProcess.for_store(store, timeout_s=judge.timeout_s).probe_set
    spent = 0
    whole: dict[str, str] = {}  # each episode's probe with everything it served

    def spend() -> None:
        nonlocal spent
        spent += 1

    out: list[Check] = []
    with _one_at_a_time(store):  # two runs would check, and log, the same pairs
        for ep, lesson in due(store):
            if spent + 2 + (ep.id not in whole) > budget:
                break
            check = _check(judge, prober, ep, lesson, whole, spend)
            if check.agree is False and check.changed is not None:
                fix = Correction(episode=ep.id, lesson=lesson.id, used=check.changed,
                                 reason=check.reason[:300])  # fmt: skip
                check.corrected = store.save_correction(fix)
            _log(store, check, served=len(ep.served))
            out.append(check)
    return out


def _check(
    judge: Judge,
    prober: _replay.SetProber,
    ep: Episode,
    lesson: m.Lesson,
    whole: dict[str, str],
    spend: Callable[[], None],
) -> Check:
    check = Check(episode=ep.id, lesson=lesson.id, used=lesson.id in ep.used)
    rest: Sequence[m.Lesson] = [x for x in ep.served if x.id != lesson.id]
    try:
        if ep.id not in whole:
            spend()
            whole[ep.id] = prober(ep.served, ep.prompt)
        spend()
        without = prober(rest, ep.prompt)
        spend()
        ctx = m.CounterfactualContext(
            prompt=ep.prompt, lesson=lesson, with_lesson=whole[ep.id], without_lesson=without
        )
        answer = judge.ask(COUNTERFACTUAL, ctx)
    except RoseError as exc:
        check.error = f"{type(exc).__name__}: {exc}"[:300]
        return check
    check.changed = bool(answer.changed)
    check.agree = check.changed == check.used
    check.reason = str(answer.reason)
    return check


def _log(store: Store, check: Check, *, served: int) -> None:
    data: dict[str, Any] = {"episode": check.episode, "lesson": check.lesson, "served": served}
    if check.error:
        store.log(FAILED, {**data, "error": check.error})
        return
    store.log(
        CHECKED,
        {
            **data,
            "used": check.used,
            "changed": check.changed,
            "agree": check.agree,
            "reason": check.reason[:300],
            "corrected": check.corrected,
        },
    )


def _one_at_a_time(store: Store) -> AbstractContextManager[None]:
    return exclusive(store.primary.jobs / "counterfactual.lock")


def agreement(store: Store) -> dict[str, Any]:
    """How often attribution agrees with the counterfactual: over the pairs checked, and
    apart for the lessons attribution called used and unused; and how many pairs a
    disagreement corrected. `agreement` is None while nothing is checked, never a rate of
    nothing."""
    last: dict[tuple[str, str], tuple[bool, bool]] = {}
    corrected: set[tuple[str, str]] = set()
    for e in read_events(store.primary.events, kind=CHECKED):
        used, changed = e.get("used"), e.get("changed")
        pair = (str(e.get("episode")), str(e.get("lesson")))
        if isinstance(used, bool) and isinstance(changed, bool):
            last[pair] = (used, changed)
        if e.get("corrected"):
            corrected.add(pair)
    groups = {"used": [0, 0], "unused": [0, 0]}
    for used, changed in last.values():
        counts = groups["used" if used else "unused"]
        counts[0] += 1
        counts[1] += used == changed
    checked = sum(c[0] for c in groups.values())
    agreed = sum(c[1] for c in groups.values())
    return {
        "checked": checked,
        "agreed": agreed,
        "agreement": round(agreed / checked, 4) if checked else None,
        **{name: {"checked": c[0], "agreed": c[1]} for name, c in groups.items()},
        "corrected": len(corrected),
    }


def text(s: dict[str, Any]) -> str:
    """`agreement`'s figures as one line."""
    if not s["checked"]:
        return "no counterfactual check made yet (`rose attribute --counterfactual`)"
    used, unused = s["used"], s["unused"]
    fixed = s.get("corrected") or 0
    return (
        f"{s['agreement']:.0%} ({s['agreed']}/{s['checked']}) of checks agree with attribution:"
        f" used {used['agreed']}/{used['checked']}, unused {unused['agreed']}/{unused['checked']}"
        + (f"; {fixed} record(s) corrected to the check's verdict" if fixed else "")
    )
