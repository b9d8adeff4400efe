"""The simulated world is reproducible, sized to make recall choose, and written in words.

Locks in: the same seed always gives the same world and a different seed a different
one; the world contains conflicting variants of a detail (one true, one stale), facts
the agent already knows, and tasks whose prompt never names a topic they need (reachable
only through a bridging fact's wording); lessons are real prose carrying exactly the
facts they were written from, the verbose form padded with filler; the default world
costs at least three times recall's budget, so recall's model path runs on it; topics
are read as whole words and no other word of the vocabulary is a topic's name; every
fact's sentences state it in words, and no other fact.
"""

from __future__ import annotations

import re

import pytest

from rose import tokens
from rose.config import Config
from rose.sim import SIZES, World, vocab
from rose.sim.markers import OPEN, strip
from rose.sim.parse import sentences


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(7)


def test_same_seed_same_world_different_seed_different_world(world):
    assert World.generate(7) == world
    other = World.generate(8)
    assert other != world
    assert [t.prompt for t in other.tasks] != [t.prompt for t in world.tasks]
    assert World.generate(7, size="small") == World.generate(7, size="small")


def test_sizes_and_the_default_is_well_over_the_recall_budget():
    budget = Config().recall.max_pack_tokens
    sized = {name: World.generate(0, size=name) for name in SIZES}
    costs = {name: w.tokens() for name, w in sized.items()}
    assert costs["small"] < costs["default"] < costs["large"]
    assert costs["default"] >= 3 * budget
    assert World.generate(0).tokens() == costs["default"]
    for name, w in sized.items():
        assert len(w.topics) == SIZES[name]["topics"]
        assert len(w.tasks) == SIZES[name]["tasks"]
    assert len(World.generate(0, size="small", topics=3).topics) == 3
    with pytest.raises(ValueError):
        World.generate(0, size="huge")


def test_facts_have_every_kind_and_one_marker_each(world):
    assert {f.kind for f in world.facts.values()} == {"principle", "detail", "trap"}
    for fact in world.facts.values():
        assert world.facts_in(fact.text) == [fact.id]
        assert world.facts_in(fact.terse) == [fact.id]
        assert len(fact.terse) < len(fact.text)
        assert fact.topic in world.topics and fact.id in world.topics[fact.topic].facts


def test_every_fact_is_stated_in_words_and_nothing_else_is(world):
    for fact in world.facts.values():
        assert world.stated(strip(fact.text)) == [fact.id]
        assert world.stated(strip(fact.terse)) == [fact.id]
    assert world.stated(" ".join(vocab.FILLER)) == []


def test_conflicting_variants(world):
    stale = [f for f in world.facts.values() if f.stale]
    assert len(stale) == SIZES["default"]["conflicts"]
    for old in stale:
        true = world.facts[world.true_variant(old.id)]
        assert world.conflicting(true.id, old.id)
        assert true.value != old.value and true.subject == old.subject
        assert not any(old.id in t.needs for t in world.tasks)
    assert not world.conflicting(stale[0].id, stale[0].id)


def test_known_facts(world):
    assert len(world.known) == SIZES["default"]["known"]
    assert all(world.facts[f].kind == "principle" for f in world.known)


def test_hidden_topics_are_reachable_only_through_a_bridge(world):
    hidden = [t for t in world.tasks if t.hidden]
    assert hidden
    for task in hidden:
        assert not set(world.topics_in(task.prompt)) & set(task.hidden)
        bridges = [f for f in task.needs if world.facts[f].mentions]
        assert bridges and set(world.facts[bridges[0]].mentions) == set(task.hidden)
        assert set(task.hidden) <= {world.facts[f].topic for f in task.needs}
        assert set(task.hidden) <= set(world.topics_in(world.facts[bridges[0]].text))


def test_topics_are_whole_words_and_no_other_word_is_one(world):
    topics = set(vocab.TOPICS)
    others = [
        *[s for pair in vocab.THINGS for s in pair],
        *vocab.ACTIONS,
        *[s for pair in vocab.TRAPS for s in pair],
        *[s for pair in vocab.VERBS for s in pair],
        *vocab.OBJECTS,
        *vocab.FILLER,
        *vocab.WORDS,
        *vocab.REGIONS,
        vocab.HABIT,
    ]
    assert [s for s in others if set(re.findall(r"[a-z0-9_]+", s.lower())) & topics] == []
    for fact in world.facts.values():
        named = set(world.topics_in(fact.text))
        assert named == {fact.topic, *fact.mentions, *filter(None, [fact.homonym])}
    some = next(iter(world.topics))
    assert world.topics_in(f"the {some}xyz and pre{some}") == []
    assert world.topics_in(f"About {some.upper()}.") == [some]


def test_task_prompts_name_their_topics(world):
    for task in world.tasks:
        assert world.task_in(task.prompt) == task
        assert set(world.topics_in(task.prompt)) == set(task.topics)


def test_lesson_prose(world):
    # a task whose facts borrow no other topic's name: its gist names its own topics alone
    task = next(t for t in world.tasks if not any(world.facts[f].homonym for f in t.needs))
    verbose = world.lesson(task.needs)
    terse = world.lesson(task.needs, verbose=False)
    assert world.facts_in(verbose.body) == world.facts_in(terse.body) == list(task.needs)
    assert len(verbose.body) > len(terse.body)
    filler = [s for s in sentences(verbose.body) if not world.facts_in(s)]
    assert filler  # the verbose form carries slack to compress away
    topics = list(dict.fromkeys(world.facts[f].topic for f in task.needs))
    assert world.topics_in(verbose.gist) == topics[:2]  # a one-sentence gist names two at most
    assert verbose.family == topics[0] and world.topics_in(verbose.title) == topics[:1]
    assert OPEN not in strip(verbose.body)
    assert world.lesson(task.needs) == verbose  # deterministic


def test_the_store_of_topic_lessons(world):
    lessons = world.lessons()
    assert [d.family for d in lessons] == list(world.topics)
    assert world.tokens() == sum(tokens.count(f"{d.title}\n{d.gist}\n\n{d.body}") for d in lessons)
    held = {f for d in lessons for f in world.facts_in(d.body)}
    assert held == {f for f, fact in world.facts.items() if not fact.stale}


def test_generate_rejects_impossible_sizes():
    with pytest.raises(ValueError):
        World.generate(0, topics=0)
    with pytest.raises(ValueError):
        World.generate(0, facts_per_topic=1)
