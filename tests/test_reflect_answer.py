"""A reflection's answer is held to structure: quotes must be quotes, verdicts must be on served
lessons, and a failed or pointless call learns nothing.

Locks in: an empty digest asks nothing; verdicts on lessons that were not served are
dropped; a load-bearing span is kept only when the lesson really holds that sentence and
the lesson was judged used; a backend failure or an invalid answer is reported, never
raised into the job; what was found is written to the session's log as entries that
absorption folds in (`minted`, `used` with the reflection's source, `span`, `reflected`).
"""

from __future__ import annotations

from pathlib import Path

from rose.errors import BackendUnavailable
from rose.files import sessions
from rose.judge.calls import Judge
from rose.loop.reflection import reflect
from rose.model.scripted import ScriptedBackend
from rose.models import Node

A = Node(
    id="n_aaaa1111",
    title="Ports",
    gist="Which port",
    body="The api listens on 8081. Restart it after edits.",
)
#: Every lesson a reflection writes says where its content came from.
_FROM = {"provenance": "repository", "outside_instructions": False}
B = Node(id="n_bbbb2222", title="Logs", gist="Where logs go", body="Logs go to /var/log/app.")


def _judge(*answers) -> tuple[Judge, ScriptedBackend]:
    backend = ScriptedBackend({"reflect": list(answers)})
    return Judge(backend, cache_path=None, events_path=None), backend


def _answer(**extra) -> dict:
    return {"found": False, "reason": "routine", "new_lessons": [], **extra}


def test_an_empty_digest_asks_nothing():
    judge, backend = _judge()
    answer, found = reflect.reflect(judge, prompt="p", digest="  \n", served=[A])
    assert answer is None and not found.produced and not backend.requests


def test_verdicts_and_spans_are_kept_only_where_they_hold():
    judge, backend = _judge(
        _answer(
            lessons=[
                {"id": A.id, "used": True, "reason": "set the port"},
                {"id": B.id, "used": False, "reason": "off topic"},
                {"id": "n_cccc3333", "used": True, "reason": "never served"},
            ],
            load_bearing=[
                {"id": A.id, "span": "The api listens on   8081."},  # spacing aside, a quote
                {"id": A.id, "span": "The api listens on 9090."},  # not what it says
                {"id": B.id, "span": "Logs go to /var/log/app."},  # said, but B was not used
            ],
        )
    )
    _, found = reflect.reflect(judge, prompt="fix the api", digest="Agent: done", served=[A, B])
    assert found.used == [A.id] and found.unused == [B.id]
    assert found.spans == [(A.id, "The api listens on 8081.")]
    assert "<served>" in backend.requests[0].prompt and A.body in backend.requests[0].prompt


def test_a_found_lesson_becomes_a_level_zero_reflection_node():
    lesson = {
        "title": "Use 8081",
        "gist": "The api port",
        "family": "api",
        "body": "It is 8081.",
        **_FROM,
    }
    judge, _ = _judge({"found": True, "reason": "user said", "new_lessons": [lesson]})
    answer, _ = reflect.reflect(judge, prompt="p", digest="User: it is 8081", served=[])
    (node,) = reflect.minted_nodes(answer)
    assert (node.level, node.origin, node.family) == (0, "reflection", "api")
    assert node.body == "It is 8081."
    (again,) = reflect.minted_nodes(answer, where="s1:2:0")
    assert again.id == reflect.minted_nodes(answer, where="s1:2:0")[0].id
    assert again.id != reflect.minted_nodes(answer, where="s1:3:0")[0].id  # other work, other id
    assert node.id != reflect.minted_nodes(answer)[0].id  # without `where`: a fresh id each time


def test_each_lesson_found_becomes_a_node_of_its_own():
    """One reflection on work that taught two subjects mints two lessons, each with its own
    id (from the work and its own text); one written twice is minted once."""
    port = {
        "title": "Api port",
        "gist": "The api port",
        "family": "api",
        "body": "It is 8081.",
        **_FROM,
    }
    logs = {
        "title": "Log path",
        "gist": "Where logs go",
        "family": "logs",
        "body": "/var/log.",
        **_FROM,
    }
    found = {"found": True, "reason": "user said", "new_lessons": [port, logs, port]}
    judge, _ = _judge(found)
    answer, _ = reflect.reflect(judge, prompt="p", digest="User: 8081, /var/log", served=[])
    nodes = reflect.minted_nodes(answer, where="s1:2:0")
    assert [(n.family, n.body) for n in nodes] == [("api", "It is 8081."), ("logs", "/var/log.")]
    assert len({n.id for n in nodes}) == 2


def test_a_failed_call_is_reported_not_raised():
    judge, _ = _judge(BackendUnavailable("claude", "not installed"))
    answer, found = reflect.reflect(judge, prompt="p", digest="Agent: x", served=[A])
    assert answer is None and found.error.startswith("BackendUnavailable")
    judge, _ = _judge({"found": True, "reason": "x", "new_lessons": []})  # found, none written
    answer, found = reflect.reflect(judge, prompt="p", digest="Agent: x", served=[A])
    assert answer is None and found.error.startswith("AnswerInvalid")
    lesson = {"title": "t", "gist": "g", "family": "api", "body": "b", **_FROM}
    judge, _ = _judge({"found": False, "reason": "x", "new_lessons": [lesson]})  # and the reverse
    answer, found = reflect.reflect(judge, prompt="p", digest="Agent: x", served=[A])
    assert answer is None and found.error.startswith("AnswerInvalid")


def test_what_was_found_goes_to_the_session_log(tmp_path: Path):
    found = reflect.Reflection(minted=["n_dddd4444"], used=[A.id], unused=[B.id])
    found.spans.append((A.id, "The api listens on 8081."))
    reflect.record(tmp_path, "s1", 2, found, source="background")
    kinds = [(e["t"], e.get("source")) for e in sessions.read(tmp_path, "s1")]
    assert kinds == [
        ("minted", "background"),
        ("used", "background"),
        ("span", None),
        ("reflected", "background"),
    ]
    assert sessions.read(tmp_path, "s1")[-1]["produced"] is True
    reflect.record(tmp_path, "s2", 1, reflect.Reflection(error="x"), source="background")
    (only,) = sessions.read(tmp_path, "s2")
    assert only["t"] == "reflected" and only["produced"] is False and only["error"] == "x"


def test_the_reflector_is_shown_the_requests_a_reply_continues():
    """A reply ("that is not right: ...") is reflected on with the session's earlier
    requests, oldest first: the opening one says what kind of task the work was."""
    from rose.judge.calls import render
    from rose.judge.models import ReflectContext

    ctx = ReflectContext(
        prompt="That is not right: use 8081.",
        digest="User: use 8081",
        earlier=["Please fix the api port.", "It still fails."],
    )
    text = render("reflect", ctx)
    assert text.index("Please fix the api port.") < text.index("It still fails.")
    assert "<earlier>" in text and text.index("<task>") < text.index("<earlier>")
    assert "<earlier>" not in render("reflect", ctx.model_copy(update={"earlier": []}))


def test_earlier_requests_are_the_last_few_before_the_unit_each_clipped():
    from rose.jobs import learning

    prompts = [{"prompt": f"request {i}"} for i in range(6)]
    prompts[4]["prompt"] = "x" * 5000
    shown = learning._earlier(prompts, prompts[5])
    assert shown[:2] == ["request 2", "request 3"] and len(shown) == learning.EARLIER_REQUESTS
    assert len(shown[2]) == learning.EARLIER_CHARS and shown[2].endswith("…")
    assert learning._earlier(prompts, prompts[0]) == []
