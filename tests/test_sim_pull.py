"""The simulated agent pulls only after a failed check, asks only with what it can see, and
reads what it pulled like any other text.

Locks in the honesty of `rose.sim.pulling`: the first attempt is the same with the tools as
without them (pulling re-rolls nothing), and an attempt that held makes no call; a failed
one asks `recall` with sentences of its own report (the symptoms: no fact or task marker,
no fact id) and `show`s only a lesson its context holds in compressed form, naming a topic
a symptom names; it retries only when the answers say something its context did not, and
the retry holds exactly when they gave it what was missing; nothing is asked twice in a
session; its `used` report names the lessons the pulls brought (acted on: used), never one
it had only from the injected block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from rose.sim import Agent, World, examples
from rose.sim.agent import Turn
from rose.sim.markers import FACT, OPEN, TASK, find
from rose.sim.pulling import attempt


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(11, tasks=40)


class Recorder:
    """Tools that answer from a table (tool, argument) -> text and record every call."""

    def __init__(self, answers: Mapping[tuple[str, str], str] | None = None, default: str = ""):
        self.answers = dict(answers or {})
        self.default = default
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, tool: str, arguments: Mapping[str, Any]) -> str:
        self.calls.append((tool, dict(arguments)))
        key = str(arguments.get("query") or arguments.get("id") or "")
        return self.answers.get((tool, key), self.default)


def _lesson(lid: str, body: str, level: int = 0, title: str = "Notes") -> str:
    return f'<lesson id="{lid}" level="{level}" scope="project">\n# {title}\n{body}\n</lesson>'


def _task_and_facts(world: World):
    task = examples.focus_task(world)
    return task, examples.unknown(world, task)


def test_no_call_after_success_and_the_first_attempt_is_the_same(world):
    task, facts = _task_and_facts(world)
    agent = Agent(world, seed=3)
    whole = _lesson("n_aaaa1111", " ".join(world.facts[f].text for f in facts))
    tools = Recorder()
    out, got = attempt(agent, task, (Turn(whole),), tools, set())
    assert out.ok and tools.calls == [] and got == () and out.pulls == ()
    short = _lesson("n_aaaa1111", world.facts[facts[0]].text)
    plain = agent.solve(task, short)
    out, _ = attempt(agent, task, (Turn(short),), Recorder(), set())
    assert not plain.ok and not out.ok
    assert out.text == plain.text and out.lines[: len(plain.lines)] == plain.lines


def test_recall_asks_with_its_own_report_and_a_useful_answer_rescues(world):
    task, facts = _task_and_facts(world)
    agent = Agent(world, seed=3)
    have = _lesson("n_aaaa1111", world.facts[facts[0]].text)
    failed = agent.solve(task, have)
    missing = [world.facts[f].text for f in failed.missing]
    tools = Recorder(default="1 lesson recalled.\n\n" + _lesson("n_bbbb2222", " ".join(missing)))
    out, got = attempt(agent, task, (Turn(have),), tools, set())
    (call, *rest) = tools.calls
    assert call[0] == "recall" and [c[0] for c in rest] == ["used"]
    query = call[1]["query"]
    assert query and query in failed.text  # its own words: sentences of the failure report
    assert OPEN not in query and find(query, FACT) == [] and find(query, TASK) == []
    assert not any(f in query for f in task.needs)
    assert out.ok and out.missing == () and [p.tool for p in out.pulls] == ["recall", "used"]
    assert got and "n_bbbb2222" in out.used
    assert rest[0][1] == {"used": ["n_bbbb2222"], "unused": []}
    assert any(line.startswith("Tool: rose recall: ") for _, line in out.lines)


def test_an_answer_with_nothing_new_gets_no_retry(world):
    task, facts = _task_and_facts(world)
    agent = Agent(world, seed=3)
    have = _lesson("n_aaaa1111", world.facts[facts[0]].text)
    failed = agent.solve(task, have)
    tools = Recorder(default="1 lesson recalled.\n\n" + have)  # what it already had
    out, _ = attempt(agent, task, (Turn(have),), tools, set())
    assert not out.ok and out.text == failed.text and out.missing == failed.missing
    checks = [line for kind, line in out.lines if kind == "failed"]
    assert checks == [line for kind, line in failed.lines if kind == "failed"]  # run once
    assert [c[0] for c in tools.calls] == ["recall"]  # nothing new to report as used


def test_a_compressed_lesson_naming_the_topic_is_shown(world):
    task, facts = _task_and_facts(world)
    agent = Agent(world, seed=3)
    gone = facts[0]
    kept = [world.facts[f].terse for f in facts[1:]]
    topic = world.facts[gone].topic
    short = _lesson("n_cccc3333", " ".join(kept), level=1, title=f"{topic.capitalize()} notes")
    shown = f"lesson n_cccc3333\n\ndropped by compression below it:\n- {world.facts[gone].terse}"
    tools = Recorder({("show", "n_cccc3333"): shown})
    asked: set[tuple[str, str]] = set()
    out, got = attempt(agent, task, (Turn(short),), tools, asked)
    assert tools.calls[0] == ("show", {"id": "n_cccc3333"})
    assert got[0].about == "n_cccc3333"
    assert out.ok and "n_cccc3333" in out.used
    assert ("show", "n_cccc3333") in asked
    line = next(line for _, line in out.lines if line.startswith("Tool: rose show: "))
    assert "n_cccc3333" not in line  # a look-up is not a citation
    # the lesson was injected, but what the show brought is new: reported as used
    assert tools.calls[-1] == ("used", {"used": ["n_cccc3333"], "unused": []})


def test_nothing_is_asked_twice_in_a_session(world):
    task, facts = _task_and_facts(world)
    agent = Agent(world, seed=3, explains=0.0)  # the user only ever says "not right"
    have = _lesson("n_aaaa1111", world.facts[facts[0]].text)
    tools = Recorder(default="nothing recalled (the store is empty)")
    session = agent.session(task, have, tools=tools)
    assert not session.first.ok
    asked = [(tool, str(a.get("query") or a.get("id"))) for tool, a in tools.calls]
    assert asked and len(asked) == len(set(asked))
