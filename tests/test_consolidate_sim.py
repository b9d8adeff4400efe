"""Consolidation against the simulated world, through the real templates.

Locks in: with the world's model answering scope, related and reconcile from the prompts
alone, a lesson carrying the stale variant of a detail is classified as contradicting the
lesson that holds the true one, even when that lesson sits below a merged parent whose
body dropped the detail (the walk goes down the matched branch); both end disputed with
the world's question; and a lesson restating part of a known one is a duplicate, stored
nowhere. Each lands in the scope the world's topic has.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import for_store
from rose.loop.reflection.consolidate import consolidate
from rose.models import Node
from rose.sim import SimulatedBackend, World
from rose.sim.examples import conflict_pair
from rose.sim.world import Draft
from rose.store.facade import Store

pytestmark = pytest.mark.graph

SEED = 6


def _node(draft: Draft, lid: str = "", **fields) -> Node:
    extra = {"id": lid} if lid else {}
    return Node(
        title=draft.title, gist=draft.gist, body=draft.body, family=draft.family, **extra, **fields
    )


def _shown(node: Node) -> dict:
    return {"id": node.id, "title": node.title, "gist": node.gist, "body": node.body}


@pytest.fixture
def world() -> World:
    return World.generate(SEED)


@pytest.fixture
def known(store: Store, world: World) -> dict[str, str]:
    """One lesson per topic, in its topic's scope; the conflict's topic under a merged parent."""
    Store.init(scope="global")
    store = Store.open()
    ids: dict[str, str] = {}
    nodes = []
    for name, topic in world.topics.items():
        facts = [f for f in topic.facts if not world.facts[f].stale]
        node = _node(world.lesson(facts), f"n_{name}_topic", scope=topic.scope)
        ids[name] = node.id
        nodes.append(node)
    for scope in ("project", "global"):
        store.write([n for n in nodes if n.scope == scope], scope=scope)
    true, _stale = conflict_pair(world)
    topic = world.facts[true].topic
    partner = next(
        n for n, t in world.topics.items() if n != topic and t.scope == world.topics[topic].scope
    )
    merged = for_store(store, backend=SimulatedBackend(world)).ask(
        "merge",
        {
            "lessons": [_shown(store.get(ids[topic])), _shown(store.get(ids[partner]))],
            "budget_tokens": 10_000,
        },
    )
    parent = Node(
        id="n_parent01",
        title=merged.title,
        gist=merged.gist,
        body=merged.body,
        family=merged.family,
        level=1,
        derived_from=[ids[topic], ids[partner]],
    )
    store.write([parent], scope=world.topics[topic].scope)
    return ids


def test_a_stale_detail_contradicts_the_true_one_below_a_merged_parent(world: World, known):
    true, stale = conflict_pair(world)
    topic = world.facts[true].topic
    store = Store.open()
    assert world.facts[true].marker not in store.get("n_parent01").body  # merge dropped it
    judge = for_store(store, backend=SimulatedBackend(world))
    done = consolidate(store, judge, _node(world.lesson([stale], verbose=True)), source="reflector")
    assert (done.relation, done.target) == ("contradicts", known[topic])
    fresh = Store.open()
    mine, theirs = fresh.get(done.ids[0]), fresh.get(known[topic])
    assert (mine.status, theirs.status) == ("disputed", "disputed")
    assert mine.disputes == [theirs.id] and theirs.disputes == [mine.id]
    assert mine.conflict == theirs.conflict == done.question
    assert world.facts[true].value in done.question and world.facts[stale].value in done.question
    assert mine.scope == world.topics[topic].scope


def test_a_restatement_is_a_duplicate_and_stored_nowhere(world: World, known):
    name, topic = next(
        (n, t) for n, t in world.topics.items() if not any(world.facts[f].stale for f in t.facts)
    )
    store = Store.open()
    before = {r["id"] for r in store.read("lessons_all")}
    judge = for_store(store, backend=SimulatedBackend(world))
    again = _node(world.lesson(list(topic.facts[:2]), verbose=True, salt=7))
    done = consolidate(store, judge, again, source="session-end")
    assert (done.relation, done.target, done.ids) == ("duplicate", known[name], [])
    assert {r["id"] for r in Store.open().read("lessons_all")} == before
