"""A selection rule is judged for its form before it is written, and refused with the reason.

Locks in: a rule that names no kind of task, or that is a verdict on one lesson ("n_abc is
rarely useful"), is refused by the `rule_form` judgement (never by a keyword list in the
harness) and nothing is written; a rule of the right form is one file under
`.rose/routing/`, not among the lessons; teaching the same rule twice is one file; a
rule is forgotten by id, and an unknown id is an error.
"""

from __future__ import annotations

import pytest

from rose.errors import RoseError
from rose.judge.calls import Judge
from rose.loop.selection import route
from rose.model.scripted import ScriptedBackend
from rose.sim import SimulatedBackend, World

pytestmark = pytest.mark.graph


def _judge(backend):
    return Judge(backend, cache_path=None, events_path=None)


def test_a_rule_naming_no_kind_of_task_is_refused_with_the_reason(store):
    backend = ScriptedBackend(
        {"rule_form": [{"conditioned": False, "about_one_lesson": False, "reason": "always"}]}
    )
    with pytest.raises(route.RuleRefused) as err:
        route.teach(store, "always", "read the testing lessons", judge=_judge(backend))
    assert "names no kind of task" in err.value.reason and "always" in err.value.reason
    assert store.rules()[0] == [] and not list(store.primary.routing.iterdir())
    assert "when: always" in backend.requests[0].prompt


def test_a_verdict_on_one_lesson_is_refused_with_the_reason(store):
    world = World.generate(2, size="small")
    topic = next(iter(world.topics))
    judge = _judge(SimulatedBackend(world))
    with pytest.raises(route.RuleRefused) as err:
        route.teach(store, f"the task touches {topic}", "n_abc123 is rarely useful", judge=judge)
    assert "verdict on one lesson" in str(err.value)
    assert store.rules()[0] == []


def test_a_conditioned_rule_is_one_file_under_routing(store):
    world = World.generate(2, size="small")
    a, b = list(world.topics)[:2]
    judge = _judge(SimulatedBackend(world))
    rule = route.teach(store, f"the task touches {a}", f"also read the {b} lessons", judge=judge)
    again = route.teach(store, f"the task touches {a}", f"also read the {b} lessons", judge=judge)
    assert again.id == rule.id
    files = list(store.primary.routing.iterdir())
    assert [f.name for f in files] == [f"{rule.id}.yaml"]
    assert not list(store.primary.nodes.rglob("*.md"))  # not a lesson
    assert [r.text() for r in store.rules()[0]] == [
        f"when the task touches {a}: also read the {b} lessons"
    ]
    route.forget(store, rule.id)
    assert store.rules()[0] == []
    with pytest.raises(RoseError, match="no selection rule"):
        route.forget(store, rule.id)
