"""The digest judge's verdict on a unit of work is read strictly, and never breaks its job.

Locks in: an empty (or blank) digest makes no model call and credits nothing; a judge that
fails (unavailable, failed, or an answer that does not fit) credits nothing, leaves the
outcome unknown and is reported in the verdict, never raised; a lesson the judge left out
credits nothing; a lesson answered twice takes the stricter answer; an unused lesson keeps
the cause the judge gave, a used one none; the served lessons are shown in full; and
`record` writes the verdict to the session log without letting an unknown outcome
overwrite a known one.
"""

from __future__ import annotations

import pytest

from rose.errors import BackendFailed, BackendUnavailable
from rose.files import sessions
from rose.judge.calls import Judge
from rose.loop.reflection.attribute import Verdict, assess_unit, record
from rose.model.scripted import ScriptedBackend
from rose.models import Node

A = Node(id="n_alpha0001", title="Alpha", gist="Alpha gist.", body="Alpha body: use port 5433.")
B = Node(id="n_bravo0001", title="Bravo", gist="Bravo gist.", body="Bravo body: retry twice.")
C = Node(id="n_charl0001", title="Charlie", gist="Charlie gist.", body="Charlie body.")


def _judge(*answers) -> tuple[Judge, ScriptedBackend]:
    backend = ScriptedBackend({"assess": list(answers)})
    return Judge(backend, cache_path=None, events_path=None), backend


def _answer(*lessons: dict, outcome: str = "success") -> dict:
    return {
        "outcome": outcome,
        "steered": False,
        "reason": "it went fine",
        "lessons": list(lessons),
    }


@pytest.mark.parametrize("digest", ["", "   \n\t "])
def test_an_empty_digest_makes_no_call_and_credits_nothing(digest: str):
    judge, backend = _judge(_answer({"id": A.id, "used": True, "reason": "x"}))
    verdict = assess_unit(judge, prompt="fix it", digest=digest, served=[A, B])
    assert backend.requests == []
    assert (verdict.used, verdict.unused, verdict.outcome) == ([], [], "unknown")
    assert not verdict.judged and not verdict.error


@pytest.mark.parametrize(
    "failure",
    [
        BackendUnavailable("scripted", "not installed"),
        BackendFailed("scripted", "exit 1"),
        "this is not JSON at all",
        {"outcome": "triumph", "steered": False, "reason": "r", "lessons": []},
    ],
    ids=["unavailable", "failed", "unparsable", "off-schema"],
)
def test_a_failed_judgement_credits_nothing_and_is_reported(failure):
    judge, backend = _judge(failure)
    verdict = assess_unit(judge, prompt="fix it", digest="Tool: ran the tests", served=[A, B])
    assert len(backend.requests) == 1
    assert (verdict.used, verdict.unused, verdict.outcome) == ([], [], "unknown")
    assert verdict.error and not verdict.judged


def test_an_answer_naming_a_lesson_never_served_is_a_failure_not_credit():
    judge, _ = _judge(_answer({"id": "n_ghost0001", "used": True, "reason": "x"}))
    verdict = assess_unit(judge, prompt="p", digest="Tool: ran", served=[A])
    assert verdict.used == [] and "AnswerInvalid" in verdict.error


def test_the_verdict_is_read_strictly():
    judge, backend = _judge(
        _answer(
            {"id": A.id, "used": True, "cause": "irrelevant", "reason": "changed the port"},
            {"id": B.id, "used": False, "cause": "ignored", "reason": "bore on it, not followed"},
            {"id": B.id, "used": True, "reason": "a second, kinder answer"},
            outcome="partial",
        )
    )
    verdict = assess_unit(
        judge, prompt="fix the db", digest="Tool: set port 5433", served=[A, B, C]
    )
    assert verdict.judged and verdict.outcome == "partial" and verdict.summary == "it went fine"
    assert verdict.used == [A.id]
    assert verdict.unused == [B.id]  # answered twice: the stricter answer stands
    assert verdict.omitted == [C.id]  # left out: neither used nor given a cause
    assert verdict.causes == {B.id: "ignored"}  # a used lesson keeps no cause
    prompt = backend.requests[0].prompt
    assert all(n.body in prompt for n in (A, B, C)) and "fix the db" in prompt


def test_record_writes_the_verdict_to_the_session_log(store):
    root = store.primary.root
    sessions.append(root, "s1", "prompt", turn=1, prompt="p", served=[A.id, B.id])
    verdict = Verdict(
        outcome="failure",
        steered=True,
        summary="tests still fail",
        used=[A.id],
        unused=[B.id],
        causes={B.id: "redundant"},
        judged=True,
    )
    record(root, "s1", 1, verdict)
    outcome, used = sessions.read(root, "s1")[1:]
    assert (outcome["t"], outcome["outcome"], outcome["steered"]) == ("outcome", "failure", True)
    assert outcome["summary"] == "tests still fail"
    assert (used["source"], used["used"], used["unused"]) == ("assess", [A.id], [B.id])
    assert used["causes"] == {B.id: "redundant"} and used["turn"] == 1


def test_record_of_no_judgement_names_nothing_and_keeps_a_known_outcome(store):
    root = store.primary.root
    sessions.append(root, "s1", "prompt", turn=1, prompt="p", served=[A.id])
    sessions.append(root, "s1", "outcome", turn=1, outcome="success", summary="merged")
    record(root, "s1", 1, Verdict(error="BackendFailed: exit 1"))
    record(root, "s1", 1, Verdict(summary="nothing to judge: the digest is empty"))
    entries = sessions.read(root, "s1")
    assert [e["t"] for e in entries] == ["prompt", "outcome", "used", "used"]
    failed, skipped = entries[2:]
    assert failed["error"] == "BackendFailed: exit 1" and skipped["skipped"]
    assert failed["used"] == failed["unused"] == skipped["used"] == []
    (ep,) = store.absorb("s1", final=True)
    assert ep.outcome == "success" and ep.used == [] and "assess" not in ep.attributed_by
