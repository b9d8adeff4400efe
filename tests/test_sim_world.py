"""The simulated world is reproducible and has the shapes the loop must be tested on.

Locks in: the same seed always gives the same world and a different seed a different
one; the world contains conflicting variants of a detail (one true, one stale), facts
the agent already knows, and tasks whose prompt never names a topic they need (reachable
only through a bridging fact's wording); lessons are real prose carrying exactly the
facts they were written from, the verbose form padded with filler.
"""

from __future__ import annotations

import pytest

from rose.sim import World
from rose.sim.markers import OPEN, TOPIC, find, strip
from rose.sim.parse import sentences


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(7)


def test_same_seed_same_world_different_seed_different_world(world):
    assert World.generate(7) == world
    other = World.generate(8)
    assert other != world
    assert [t.prompt for t in other.tasks] != [t.prompt for t in world.tasks]


def test_facts_have_every_kind_and_one_marker_each(world):
    assert {f.kind for f in world.facts.values()} == {"principle", "detail", "trap"}
    for fact in world.facts.values():
        assert world.facts_in(fact.text) == [fact.id]
        assert world.facts_in(fact.terse) == [fact.id]
        assert len(fact.terse) < len(fact.text)
        assert fact.topic in world.topics and fact.id in world.topics[fact.topic].facts


def test_conflicting_variants(world):
    stale = [f for f in world.facts.values() if f.stale]
    assert len(stale) == 2
    for old in stale:
        true = world.facts[old.base + "a"]
        assert world.conflicting(true.id, old.id)
        assert true.value != old.value and true.subject == old.subject
        assert not any(old.id in t.needs for t in world.tasks)
    assert not world.conflicting(stale[0].id, stale[0].id)


def test_known_facts(world):
    assert len(world.known) == 3
    assert all(world.facts[f].kind == "principle" for f in world.known)


def test_hidden_topics_are_reachable_only_through_a_bridge(world):
    hidden = [t for t in world.tasks if t.hidden]
    assert hidden
    for task in hidden:
        assert not set(find(task.prompt, TOPIC)) & set(task.hidden)
        bridges = [f for f in task.needs if world.facts[f].mentions]
        assert bridges and set(world.facts[bridges[0]].mentions) == set(task.hidden)
        assert set(task.hidden) <= {world.facts[f].topic for f in task.needs}
        assert set(world.topics_in(world.facts[bridges[0]].text)) == set(task.hidden)


def test_task_accepted_outcome_names_its_needs(world):
    for task in world.tasks:
        assert world.task_in(task.prompt) == task
        assert world.facts_in(task.accepted) == list(task.needs)
        assert set(world.topics_in(task.prompt)) == set(task.topics)


def test_lesson_prose(world):
    task = world.tasks[0]
    verbose = world.lesson(task.needs)
    terse = world.lesson(task.needs, verbose=False)
    assert world.facts_in(verbose.body) == world.facts_in(terse.body) == list(task.needs)
    assert len(verbose.body) > len(terse.body)
    filler = [s for s in sentences(verbose.body) if not world.facts_in(s)]
    assert filler  # the verbose form carries slack to compress away
    assert set(world.topics_in(verbose.gist)) == {world.facts[f].topic for f in task.needs}
    assert verbose.family == world.facts[task.needs[0]].topic
    assert OPEN not in strip(verbose.body)
    assert world.lesson(task.needs) == verbose  # deterministic


def test_generate_rejects_impossible_sizes():
    with pytest.raises(ValueError):
        World.generate(0, topics=0)
    with pytest.raises(ValueError):
        World.generate(0, facts_per_topic=1)
