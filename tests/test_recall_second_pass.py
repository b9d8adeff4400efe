"""A second pass finds a bridged lesson that one pass misses, on the simulated world.

Locks in progressive disclosure: a task whose prompt names one topic but whose work needs
another, named only in the wording of the first topic's lesson. One pass chooses the named
topic's lesson and judges the other unrelated (its line names a topic the prompt never
does). The second pass shows the model the lessons the first chose and asks again about
what it judged unrelated: the hidden topic's lesson is now a `maybe` and is served, and the
pass is reported apart (its own call count, its verdicts marked, the trace, and the note
on the status line the real prompt hook prints). It is not asked when the first pass's
lessons already fill the pack budget (nothing it found could be served), nor, under the
default `recall.second_look: auto`, for a store whose apexes fit one question.
"""

from __future__ import annotations

import pytest

from rose import config
from rose.files.notices import take_notices
from rose.inspect.trace import inspect, render
from rose.judge.calls import Judge
from rose.loop.selection.recall import recall
from rose.model.registry import simulated_model
from rose.models import Node
from rose.sim import SimulatedBackend, World
from rose.sim.hosts import scoreboard
from rose.sim.hosts.drive import HookHost
from rose.store.facade import Store

pytestmark = pytest.mark.graph


@pytest.fixture
def world_store(store: Store) -> tuple[Store, World]:
    # Without homonyms: a chosen lesson borrowing a topic's name would reach that topic too,
    # and these pin what the second pass finds through a bridge.
    world = World.generate(0, homonyms=0)
    store.write([Node(**row) for row in scoreboard.seed_lessons(world)])
    # The world's 24 lessons fit one question: `auto` would ask no second pass.
    config.set_override(store.primary.config, "recall.second_look", "always")
    return Store.open(), world


def _bridged(store: Store, world: World):
    task = next(t for t in world.tasks if t.hidden)
    ids = {r["family"]: r["id"] for r in store.read("apexes", scope="")}
    return task, ids[task.topics[0]], ids[task.hidden[0]]


def _judge(world: World) -> Judge:
    return Judge(SimulatedBackend(world), cache_path=None, events_path=None)


def test_one_pass_misses_the_bridged_lesson(world_store):
    store, world = world_store
    config.set_override(store.primary.config, "recall.second_look_calls", "0")
    store = Store.open()
    task, named, hidden = _bridged(store, world)
    res = recall(store, task.prompt, judge=_judge(world))
    chosen = {i["id"] for i in res.chosen}
    assert named in chosen and hidden not in chosen
    assert {v.id: v.verdict for v in res.verdicts}[hidden] == "unrelated"
    assert res.second_calls == 0 and res.note == ""


def test_the_second_pass_finds_it_and_is_reported_apart(world_store):
    store, world = world_store
    task, named, hidden = _bridged(store, world)
    judge = _judge(world)
    res = recall(store, task.prompt, judge=judge)
    chosen = [i["id"] for i in res.chosen]
    assert named in chosen and hidden in chosen
    assert chosen.index(named) < chosen.index(hidden)  # what the prompt names comes first
    assert res.calls == 1 and res.second_calls == 1 and res.passes == [1, 2]
    assert res.second_found == [hidden]
    last = [v for v in res.verdicts if v.id == hidden]
    assert [(v.verdict, v.pass_no) for v in last] == [("unrelated", 1), ("maybe", 2)]
    assert res.note == "2nd pass: +1 (1 call)"
    first, second = (p for c, p in judge.backend.requests)
    assert "<found>" not in first and "<found>" in second and f"[{named}]" not in second
    block_facts = {f for i in res.chosen for f in world.facts_in(i["full"])}
    hidden_needs = {f for f in task.needs if world.facts[f].topic == task.hidden[0]}
    assert hidden_needs <= block_facts


def test_the_trace_shows_the_second_pass(world_store):
    store, world = world_store
    task, _named, hidden = _bridged(store, world)
    res, packed = inspect(store, task.prompt, judge=_judge(world))
    text = render(res, packed)
    assert "relevance call 2 (second pass" in text
    assert "2nd maybe" in text and hidden in text


def test_the_hooks_note_reports_the_second_pass(tmp_path):
    take_notices()  # what earlier tests in this process left to say would crowd the line
    world = World.generate(0, homonyms=0)  # as the fixture's, for the same reason
    task = next(t for t in world.tasks if t.hidden)
    model = simulated_model(seed=0, size="default", noise=0.0, homonyms=0)
    always = {"recall.second_look": "always"}
    lessons = scoreboard.seed_lessons(world)
    with HookHost(tmp_path, model=model, lessons=lessons, settings=always) as host:
        payload = {
            "session_id": "s1",
            "transcript_path": "",
            "cwd": str(tmp_path),
            "hook_event_name": "UserPromptSubmit",
            "prompt": scoreboard.plain_prompt(task),
        }
        answer = host.hook("user-prompt-submit", payload) or {}
    assert "2nd pass: +1 (1 call)" in answer.get("systemMessage", "")
    block = answer["hookSpecificOutput"]["additionalContext"]
    hidden = {f for f in task.needs if world.facts[f].topic == task.hidden[0]}
    assert hidden <= set(world.facts_in(block))


def test_no_second_pass_when_the_first_fills_the_pack(world_store):
    store, world = world_store
    task, named, _hidden = _bridged(store, world)
    config.set_override(store.primary.config, "recall.max_pack_tokens", "200")
    store = Store.open()
    res = recall(store, task.prompt, judge=_judge(world))
    assert named in {v.id for v in res.verdicts if v.verdict == "relevant"}
    assert res.second_calls == 0 and res.passes == [1]
    assert any("no second pass" in d for d in res.decisions)


def test_auto_asks_no_second_pass_of_a_store_that_fits_one_question(world_store):
    store, world = world_store
    config.set_override(store.primary.config, "recall.second_look", "auto")
    store = Store.open()
    task, _named, hidden = _bridged(store, world)
    res = recall(store, task.prompt, judge=_judge(world))
    assert res.second_calls == 0 and hidden not in {i["id"] for i in res.chosen}
