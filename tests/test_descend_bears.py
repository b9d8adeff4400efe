"""What the judge finds does not bear on a failure is never restored; with nothing that
bears, a failure seen mid-session restores the level-0 lessons whole, for the session only.

Locks in: a claim `rank_repairs` scores below `descend.BEARS` is no candidate under any
strategy, so an unrelated anecdote is not served as a fix; mid-session, with no claim left,
descent escalates to the level-0 originals (their whole bodies restored, marked
`escalated`), and a success with them served does not make the original's text a patch of
the compression (that is the demotion rule's to judge); at session end the same failure
attaches nothing and logs the escalation.
"""

from __future__ import annotations

import pytest

from rose.files import sessions
from rose.judge.calls import Judge
from rose.loop.abstraction import descend
from rose.model.scripted import ScriptedBackend
from rose.models import ClaimRef, Episode
from rose.store.facade import Store
from tests._descent import level1

pytestmark = pytest.mark.graph


def _judge(store: Store, lesson: str, score: float) -> Judge:
    ranked = descend.rank(store, None, lesson, "It broke.")
    answer = {"ranking": [{"id": c.id, "usefulness": score, "reason": "r"} for c in ranked]}
    return Judge(ScriptedBackend({"rank_repairs": [answer] * 4}), cache_path=None, events_path=None)


def test_nothing_that_bears_escalates_to_level_0_for_the_session(store: Store):
    fam = level1(store, 2)
    original = store.get("n_orig0001").body.strip()
    judge = _judge(store, fam.apex, 0.1)
    assert descend.rank(store, judge, fam.apex, "It broke.")[0].usefulness == 0.1
    (done,) = descend.during_session(
        store, judge, session_id="s1", turn=1, prompt="p", failure="It broke.",
        served=[store.get(fam.apex)],
    )  # fmt: skip
    assert done["escalate"] == ["n_orig0001"] and done["claims"] == []
    (entry,) = sessions.restored(store.primary.root, "s1")
    assert entry["text"] == original and entry["escalated"] is True
    rescued = Episode(session="s1", turn=2, prompt="p", outcome="success", served=[fam.apex],
                      used=[fam.apex], patch_rescues=[ClaimRef(lesson=fam.apex,
                      claim=entry["patch"])])  # fmt: skip
    assert descend.keep_rescues(store, "s1", [rescued]) == []
    assert store.get(fam.apex).patches == []

    (later,) = descend.after_failure(
        store, judge, session_id="s2", turn=1, prompt="p", failure="It broke.",
        served=[store.get(fam.apex)], used=[],
    )  # fmt: skip
    assert later["escalate"] == ["n_orig0001"] and store.get(fam.apex).patches == []


def test_a_claim_that_bears_is_restored_and_kept_once_it_rescues(store: Store):
    fam = level1(store, 2)
    judge = _judge(store, fam.apex, 0.9)
    (done,) = descend.during_session(
        store, judge, session_id="s1", turn=1, prompt="p", failure="It broke.",
        served=[store.get(fam.apex)],
    )  # fmt: skip
    restored = sessions.restored(store.primary.root, "s1")
    assert done["claims"] and "escalate" not in done  # every claim scored likely: all of them
    assert len(restored) == len(descend.rank(store, None, fam.apex, "x"))
    assert not any(r["escalated"] for r in restored)
    rescued = Episode(session="s1", turn=2, prompt="p", outcome="success", served=[fam.apex],
                      used=[fam.apex], patch_rescues=[ClaimRef(lesson=fam.apex,
                      claim=restored[0]["patch"])])  # fmt: skip
    assert descend.keep_rescues(store, "s1", [rescued]) == [fam.apex]
    assert store.get(fam.apex).patches == [restored[0]["text"]]
