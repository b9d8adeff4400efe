"""A rule a reflection proposes is written only once enough distinct sessions proposed it.

Locks in the bar that keeps one session's accident (or a noisy judgement) from becoming a
rule: the first session's proposal is recorded under `routing/proposed/`, not written, and
proposing it again from that session changes nothing; a second session's proposal writes
it (`routing.propose_after`, 2 by default), its form judged then; a rule already written
is returned as it is; `routing.propose_after: 1` writes at once; forgetting a rule
forgets its proposals, so proposed again it must clear the bar again; a rule taught by
hand is written at once.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.judge.models import ProposedRule
from rose.loop.selection import route
from rose.model.scripted import ScriptedBackend
from rose.store.facade import Store

pytestmark = pytest.mark.graph

WHEN, THEN = "the task touches chat", "nothing in the imports lessons applies"
FORM = {"conditioned": True, "about_one_lesson": False, "reason": "a kind of task"}


def _judge(backend: ScriptedBackend) -> Judge:
    return Judge(backend, cache_path=None, events_path=None)


def _propose(store: Store, judge: Judge, session: str) -> list[str]:
    rule = ProposedRule(when=WHEN, then=THEN)
    written, refused = route.from_reflection(
        store, judge, [rule], source=f"{session}:1:0", session=session
    )
    assert refused == []
    return written


def test_a_proposal_is_written_once_a_second_session_makes_it(store: Store):
    backend = ScriptedBackend({"rule_form": [FORM, FORM]})
    judge = _judge(backend)
    assert _propose(store, judge, "s1") == []
    assert _propose(store, judge, "s1") == []  # the same session again is not a second one
    assert store.rules()[0] == [] and backend.requests == []  # nothing judged yet
    assert len(list((store.primary.routing / "proposed").iterdir())) == 1
    (rid,) = _propose(store, judge, "s2")
    assert [(r.id, r.when, r.then, r.origin) for r in store.rules()[0]] == [
        (rid, WHEN, THEN, "reflection")
    ]
    assert len(backend.requests) == 1  # its form, judged when it cleared the bar
    assert _propose(store, judge, "s3") == [rid]  # written already: returned as it is

    route.forget(store, rid)
    assert not list((store.primary.routing / "proposed").iterdir())
    assert _propose(store, judge, "s4") == [] and store.rules()[0] == []


def test_a_bar_of_one_writes_at_once(project, monkeypatch):
    monkeypatch.setenv("ROSE_ROUTING_PROPOSE_AFTER", "1")
    store = Store.init(project)
    assert store.config.routing.propose_after == 1
    assert len(_propose(store, _judge(ScriptedBackend({"rule_form": [FORM]})), "s1")) == 1


def test_a_rule_taught_by_hand_clears_no_bar(store: Store):
    judge = _judge(ScriptedBackend({"rule_form": [FORM]}))
    rule = route.teach(store, WHEN, THEN, judge=judge)
    assert [r.id for r in store.rules()[0]] == [rule.id]
    assert not (store.primary.routing / "proposed").exists()
