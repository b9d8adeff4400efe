"""The scripted backend that later stages' unit tests drive.

Locks in: answers come per call in queue order; every request is recorded; a queued
exception is raised; a text answer must parse and fit like a real model's; a dict that
does not fit is AnswerInvalid; an empty queue is BackendFailed naming the call.
"""

from __future__ import annotations

import pytest

from rose.errors import AnswerInvalid, BackendFailed, BackendTimeout
from rose.model import ScriptedBackend
from rose.model.base import Backend
from rose.model.scripted import ScriptedRequest

SCHEMA = {
    "type": "object",
    "properties": {"relevant": {"type": "boolean"}, "why": {"type": "string"}},
    "required": ["relevant"],
    "additionalProperties": False,
}


def test_answers_come_per_call_in_order_and_requests_are_recorded():
    backend = ScriptedBackend(
        {"relevance": [{"relevant": True}, {"relevant": False}], "scope": [{"relevant": True}]}
    )
    first = backend.complete("relevance", "p1", SCHEMA, timeout_s=3)
    scope = backend.complete("scope", "p2", SCHEMA, timeout_s=4)
    second = backend.complete("relevance", "p3", SCHEMA, timeout_s=5)
    assert [first.data, scope.data, second.data] == [
        {"relevant": True},
        {"relevant": True},
        {"relevant": False},
    ]
    assert backend.requests == [
        ScriptedRequest("relevance", "p1", SCHEMA, 3),
        ScriptedRequest("scope", "p2", SCHEMA, 4),
        ScriptedRequest("relevance", "p3", SCHEMA, 5),
    ]
    assert backend.pending() == 0


def test_push_appends_to_the_queue():
    backend = ScriptedBackend()
    backend.push("relevance", {"relevant": True})
    backend.push("relevance", {"relevant": False, "why": "other topic"})
    assert backend.pending("relevance") == 2
    backend.complete("relevance", "p", SCHEMA, timeout_s=1)
    assert backend.complete("relevance", "p", SCHEMA, timeout_s=1).data["why"] == "other topic"


def test_queued_exception_is_raised_and_still_recorded():
    backend = ScriptedBackend({"relevance": [BackendTimeout("scripted", 2.0)]})
    with pytest.raises(BackendTimeout):
        backend.complete("relevance", "p", SCHEMA, timeout_s=2)
    assert len(backend.requests) == 1


def test_text_answer_is_parsed_like_model_output():
    backend = ScriptedBackend()
    backend.push("relevance", 'Sure:\n```json\n{"relevant": true, "why": "same tool"}\n```')
    answer = backend.complete("relevance", "p", SCHEMA, timeout_s=1)
    assert answer.data == {"relevant": True, "why": "same tool"}
    assert answer.raw.startswith("Sure:")


@pytest.mark.parametrize(
    "bad",
    ["no json here", '{"relevant": "yes"}', {"relevant": True, "extra": 1}, {"why": "x"}],
)
def test_answer_that_does_not_fit_is_invalid(bad):
    backend = ScriptedBackend({"relevance": [bad]})
    with pytest.raises(AnswerInvalid) as caught:
        backend.complete("relevance", "p", SCHEMA, timeout_s=1)
    assert caught.value.call == "relevance"


def test_running_out_of_answers_names_the_call():
    backend = ScriptedBackend({"relevance": [{"relevant": True}]})
    backend.complete("relevance", "p", SCHEMA, timeout_s=1)
    with pytest.raises(BackendFailed, match="'relevance'"):
        backend.complete("relevance", "p", SCHEMA, timeout_s=1)
    with pytest.raises(BackendFailed, match="'compress'"):
        backend.complete("compress", "p", SCHEMA, timeout_s=1)


def test_returned_data_is_a_copy_of_the_script():
    scripted = {"relevant": True}
    backend = ScriptedBackend({"relevance": [scripted]})
    backend.complete("relevance", "p", SCHEMA, timeout_s=1).data["relevant"] = False
    assert scripted == {"relevant": True}


def test_is_a_backend():
    assert isinstance(ScriptedBackend(), Backend)
