"""A reflection on work that taught two subjects mints a lesson for each, each consolidated.

Locks in: a reflection used to return at most one lesson, so one correction about two
subjects became one lesson titled and gisted for the first, and recall (reading only
titles and gists) never served it for the second. Now the reflect answer holds a list of
lessons, the simulated reflector writes one per topic of what it was taught (as the
prompt asks), and the reflection job consolidates each: both are stored, each holding the
facts of its own topic under a title and gist naming it, both are noted as minted in the
session's log, and consolidation logs each as offered by the reflector.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose import config
from rose.events import read_events
from rose.files import sessions
from rose.jobs import learning
from rose.judge.calls import Judge
from rose.sim import Agent, SimulatedBackend, World, examples
from rose.sim.hosts.transcript import claude_code
from rose.sim.markers import TASK, drop
from rose.sim.world import Task
from rose.store.facade import Store

SEED = 0
SID = "sess-two-subjects"


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(SEED, homonyms=0)


def _two_subjects(world: World) -> tuple[Task, list[str]]:
    """A task the agent lacks facts of two topics for, and what the user then teaches."""
    agent = Agent(world, seed=SEED, explains=1.0, discovery=0.0)
    for task in world.tasks:
        if len({world.facts[f].topic for f in examples.unknown(world, task)}) < 2:
            continue
        session = agent.session(task, "")
        taught = [f for f in session.first.missing if f not in world.known]
        if len({world.facts[f].topic for f in taught}) >= 2:
            return task, taught
    raise ValueError(f"world {SEED} has no task teaching two topics")


def test_the_reflector_writes_one_lesson_a_topic(world: World):
    task, taught = _two_subjects(world)
    session = Agent(world, seed=SEED, explains=1.0, discovery=0.0).session(task, "")
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    answer = judge.ask("reflect", {"prompt": task.prompt, "digest": session.digest})
    assert answer.found
    topics = list(dict.fromkeys(world.facts[f].topic for f in taught))
    assert [x.family for x in answer.new_lessons] == topics
    for lesson in answer.new_lessons:
        facts = world.facts_in(lesson.body)
        assert {world.facts[f].topic for f in facts} == {lesson.family}
        assert sorted(facts) == sorted(f for f in taught if world.facts[f].topic == lesson.family)
        assert lesson.family in world.topics_in(f"{lesson.title} {lesson.gist}")


@pytest.mark.graph
def test_each_lesson_the_reflection_found_is_consolidated(
    store: Store, project: Path, world: World
):
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", f"seed={SEED},homonyms=0")
    store = Store.open(project)
    task, taught = _two_subjects(world)
    session = Agent(world, seed=SEED, explains=1.0, discovery=0.0).session(task, "")
    path = project / "t.jsonl"
    path.write_text(claude_code(session, session_id=SID, cwd=str(project)))
    root = store.primary.root
    prompt = drop(task.prompt, TASK).strip()
    sessions.append(root, SID, "prompt", turn=1, prompt=prompt, served=[])

    found = learning.reflect_on(store, SID, str(path), source="reflector", cwd=str(project))

    assert found is not None and not found.error
    topics = list(dict.fromkeys(world.facts[f].topic for f in taught))
    assert len(found.minted) == len(topics) >= 2
    assert found.outcomes == ["orthogonal"] * len(topics)  # a store knowing nothing yet
    store = Store.open(project)
    lessons = [store.get(i) for i in found.minted]
    assert [{world.facts[f].topic for f in world.facts_in(n.body)} for n in lessons] == [
        {t} for t in topics
    ]
    assert sorted(f for n in lessons for f in world.facts_in(n.body)) == sorted(taught)
    for node, topic in zip(lessons, topics, strict=True):
        assert topic in world.topics_in(f"{node.title} {node.gist}")
    minted = [e["id"] for e in sessions.read(root, SID) if e["t"] == "minted"]
    assert minted == found.minted
    added = [e for d in store.dirs for e in read_events(d.events, kind="add")]
    assert sorted(e["id"] for e in added) == sorted(found.minted)
    assert {e["source"] for e in added} == {"reflector"}
