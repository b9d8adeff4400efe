"""A failed judgement decides nothing: descent restores only what `rank_repairs` chose.

Locks in (ROSE issue 39, item 7): a `rank_repairs` call that times out, fails or answers
unreadably restores nothing, at session end (no patch, no expansion) or mid-session
(nothing restored, no escalation), and leaves a ``descend-failed`` entry naming the
error; it is never read as "no judge" (prior and cost), which stays for a descent with
no judge, or no model to ask. An empty ranking is the model's verdict that no dropped
claim explains the failure: no claim is restored, as when every claim scores below
`BEARS`. A lesson the unit's `assess` verdict found irrelevant is never offered to
`rank_repairs` nor patched, unless the reflector said it was used; one ignored is.
"""

from __future__ import annotations

import pytest

from rose.errors import BackendFailed, BackendTimeout, BackendUnavailable
from rose.events import read_events
from rose.files import sessions
from rose.judge.calls import Judge
from rose.loop.abstraction import descend
from rose.loop.reflection import attribute
from rose.model.scripted import Answer, ScriptedBackend
from rose.models import Claim, Node
from rose.store.facade import Store
from tests._lineage import FIRST, L0, L1, SECOND, two_levels

pytestmark = pytest.mark.graph

CACHE0, CACHE1 = "n_orig0009", "n_comp0009"
TTL = "Cache entries live 90 s; the warm-up job refills them at 80 s."
SID = "s-failed-judgement"
FAILURE = "The retry loop gave up after one try: the POST was retried and duplicated."

FAILURES = {
    "timeout": BackendTimeout("scripted", 20),
    "unreadable": "I think the first one, probably.",
    "failed": BackendFailed("scripted", "exit 1: overloaded"),
}


def _lessons(store: Store) -> None:
    """The retry lineage (L1 dropped FIRST and SECOND) and an unrelated compressed lesson
    on caching (CACHE1 dropped TTL, held by CACHE0)."""
    two_levels(store)
    store.write(
        [
            Node(id=CACHE0, family="cache", title="Caching", status="superseded",
                 body=f"How the cache works. {TTL} Keys are per tenant."),
            Node(id=CACHE1, family="cache", title="Caching", level=1, origin="compression",
                 body="Keys are per tenant.", derived_from=[CACHE0],
                 dropped=[Claim(claim=TTL, kind="parameter", holder=CACHE0)]),
        ]
    )  # fmt: skip


def _judge(*answers: Answer) -> tuple[Judge, ScriptedBackend]:
    backend = ScriptedBackend({"rank_repairs": list(answers)})
    return Judge(backend, cache_path=None, events_path=None), backend


def _unit(store: Store, served: list[str], verdict: attribute.Verdict | None = None) -> None:
    """Turn 1 of the session, served `served`, and the `assess` verdict on it, if any."""
    sessions.append(store.primary.root, SID, "prompt", turn=1, prompt="fix the retries",
                    served=served)  # fmt: skip
    if verdict is not None:
        attribute.record(store.primary.root, SID, 1, verdict)


def _at_end(store: Store, judge: Judge | None, served: list[str], used=()) -> list[dict]:
    return descend.after_failure(
        store, judge, session_id=SID, turn=1, prompt="fix the retries", failure=FAILURE,
        served=[store.get(i) for i in served], used=list(used),
    )  # fmt: skip


def _during(store: Store, judge: Judge | None, served: list[str]) -> list[dict]:
    return descend.during_session(
        store, judge, session_id=SID, turn=1, prompt="fix the retries", failure=FAILURE,
        served=[store.get(i) for i in served],
    )  # fmt: skip


def _expands(store: Store) -> list[dict]:
    return [e for e in sessions.read(store.primary.root, SID) if e["t"] == "expand"]


@pytest.mark.parametrize("how", sorted(FAILURES))
def test_a_failed_judgement_attaches_no_patch_at_session_end(store: Store, how: str):
    _lessons(store)
    _unit(store, [L1])
    judge, _ = _judge(FAILURES[how])
    (done,) = _at_end(store, judge, [L1], used=[L1])
    assert done["kind"] == descend.FAILED and done["lesson"] == L1
    assert done["error"].startswith(("BackendTimeout", "AnswerInvalid", "BackendFailed"))
    assert "patches" not in done and "claims" not in done and "escalate" not in done
    assert store.get(L1).patches == [] and _expands(store) == []
    (logged,) = read_events(store.primary.events, kind=descend.FAILED)
    assert logged["error"] == done["error"] and logged["session"] == SID
    assert not read_events(store.primary.events, kind="descend")


@pytest.mark.parametrize("how", sorted(FAILURES))
def test_a_failed_judgement_restores_nothing_mid_session(store: Store, how: str):
    _lessons(store)
    _unit(store, [L1])
    judge, _ = _judge(FAILURES[how])
    (done,) = _during(store, judge, [L1])
    assert done["kind"] == descend.FAILED and done["during"] is True
    assert "escalate" not in done  # the level-0 original is not restored either
    assert sessions.restored(store.primary.root, SID) == [] and _expands(store) == []


def test_without_a_model_to_ask_descent_ranks_by_prior_and_cost(store: Store):
    _lessons(store)
    _unit(store, [L1])
    cheapest = descend.rank(store, None, L1, FAILURE)[0].claim
    judge, _ = _judge(BackendUnavailable("scripted", "`claude` is not on PATH"))
    (done,) = _at_end(store, judge, [L1], used=[L1])
    assert done["kind"] == "descend" and not done["judged"]
    assert store.get(L1).patches == [cheapest]


def test_an_empty_ranking_restores_no_claim(store: Store):
    _lessons(store)
    _unit(store, [L1])
    judge, _ = _judge({"ranking": []}, {"ranking": []})
    ranked = descend.rank(store, judge, L1, FAILURE)
    assert {c.claim for c in ranked} == {FIRST, SECOND}
    assert all(c.usefulness == 0.0 for c in ranked)  # judged, and nothing bears
    (done,) = _at_end(store, judge, [L1], used=[L1])
    assert done["judged"] and "claims" not in done and done["escalate"] == [L0]
    assert store.get(L1).patches == [] and _expands(store) == []
    # Mid-session, no claim is restored: the rule for nothing that bears (`BEARS`) serves
    # the level-0 original, for the session only, as with every claim scored below it.
    judge, _ = _judge({"ranking": []})
    (during,) = _during(store, judge, [L1])
    assert during["claims"] == [] and during["escalate"] == [L0]
    restored = sessions.restored(store.primary.root, SID)
    assert [r["escalated"] for r in restored] == [True]
    assert {r["text"] for r in restored}.isdisjoint({FIRST, SECOND})


def _ranks(store: Store, lesson: str) -> dict:
    ids = [c.id for c in descend.rank(store, None, lesson, FAILURE)]
    return {"ranking": [{"id": i, "usefulness": 0.9, "reason": "r"} for i in ids]}


def _asked_about(backend: ScriptedBackend, text: str) -> bool:
    return any(text in r.prompt for r in backend.requests if r.call == "rank_repairs")


def test_a_lesson_judged_irrelevant_is_not_offered_nor_patched(store: Store):
    _lessons(store)
    _unit(store, [L1, CACHE1], attribute.Verdict(outcome="failure", used=[L1],
          unused=[CACHE1], causes={CACHE1: "irrelevant"}, judged=True))  # fmt: skip
    judge, backend = _judge(_ranks(store, L1), _ranks(store, L1))
    done = _at_end(store, judge, [L1, CACHE1], used=[L1])
    assert [d["lesson"] for d in done] == [L1]
    assert len(backend.requests) == 1 and _asked_about(backend, FIRST)
    assert not _asked_about(backend, TTL)
    assert store.get(CACHE1).patches == [] and set(store.get(L1).patches) == {FIRST, SECOND}
    during = _during(store, judge, [L1, CACHE1])
    assert [d["lesson"] for d in during] == [L1] and not _asked_about(backend, TTL)
    assert {r["lesson"] for r in sessions.restored(store.primary.root, SID)} <= {L1}


@pytest.mark.parametrize("how", ["ignored", "said used"])
def test_a_lesson_ignored_or_said_used_is_still_descended(store: Store, how: str):
    _lessons(store)
    cause = "ignored" if how == "ignored" else "irrelevant"
    _unit(store, [L1, CACHE1], attribute.Verdict(outcome="failure", used=[L1],
          unused=[CACHE1], causes={CACHE1: cause}, judged=True))  # fmt: skip
    if how == "said used":  # the reflector's word outranks the digest judge's
        sessions.append(store.primary.root, SID, "used", turn=1, used=[CACHE1], unused=[],
                        source="reflector")  # fmt: skip
    judge, backend = _judge(_ranks(store, L1), _ranks(store, CACHE1))
    done = _at_end(store, judge, [L1, CACHE1], used=[L1])
    assert [d["lesson"] for d in done] == [L1, CACHE1] and _asked_about(backend, TTL)
    assert store.get(CACHE1).patches == [TTL]
