"""Recall tells the backend how many relevance questions are coming before it asks them.

Locks in: once the model decides, the judge's backend is asked to get ready for the first
level's questions (the apexes', in at most `recall.apex_chunks` calls) before any is
asked, and for one more, the second pass's, before the first pass when a second pass
will follow; with the relevance schema each time. Nothing is prewarmed when the store is
served whole (no model call) or when no second pass is asked. `Judge.prewarm` passes a
backend without the method, or one that fails, as nothing started.
"""

from __future__ import annotations

from typing import Any

import pytest

from rose import config
from rose.errors import BackendUnavailable
from rose.judge.calls import Judge, schema_of
from rose.loop.selection.recall import recall
from rose.models import Node
from rose.sim import SimulatedBackend, World
from rose.sim.hosts import scoreboard
from rose.store.facade import Store

pytestmark = pytest.mark.graph


class Warming(SimulatedBackend):
    """The simulated model, recording each prewarm as (questions asked by then, n)."""

    def __init__(self, world: World):
        super().__init__(world)
        self.warmed: list[tuple[int, int]] = []
        self.asked = 0

    def prewarm(self, schema: dict[str, Any], n: int = 1) -> int:
        assert schema == schema_of("relevance")
        self.warmed.append((self.asked, n))
        return n

    def complete(self, call: str, prompt: str, schema: dict[str, Any], *, timeout_s: float):
        self.asked += 1
        return super().complete(call, prompt, schema, timeout_s=timeout_s)


@pytest.fixture
def world_store(store: Store) -> tuple[Store, World]:
    world = World.generate(0)
    store.write([Node(**row) for row in scoreboard.seed_lessons(world)])
    return Store.open(), world


def _recall(store: Store, world: World) -> Warming:
    backend = Warming(world)
    recall(store, world.tasks[0].prompt, judge=Judge(backend, cache_path=None, events_path=None))
    assert backend.asked > 0 or not backend.warmed
    return backend


def test_the_first_level_and_the_second_pass_are_prewarmed_before_they_are_asked(world_store):
    store, world = world_store
    config.set_override(store.primary.config, "recall.second_look", "always")
    backend = _recall(Store.open(), world)
    # 24 apexes: one question, then one more for the second pass, both before any is asked
    assert backend.warmed == [(0, 1), (0, 2)]
    assert backend.asked == 2


def test_without_a_second_pass_only_the_first_level_is_prewarmed(world_store):
    store, world = world_store  # `auto`: 24 apexes fit one question, no second pass
    backend = _recall(store, world)
    assert backend.warmed == [(0, 1)] and backend.asked == 1


def test_the_first_level_counts_its_parallel_questions(world_store):
    store, world = world_store
    config.set_override(store.primary.config, "recall.max_candidates", "10")
    config.set_override(store.primary.config, "recall.second_look_calls", "0")
    backend = _recall(Store.open(), world)
    assert backend.warmed == [(0, 2)]  # 24 apexes in lines of 10: recall.apex_chunks (2)


def test_a_store_served_whole_prewarms_nothing(world_store):
    store, world = world_store
    for key in ("recall.max_pack_tokens", "recall.whole_tokens"):
        config.set_override(store.primary.config, key, "100000000")
    backend = _recall(Store.open(), world)
    assert backend.warmed == [] and backend.asked == 0


def test_judge_prewarm_passes_a_backend_without_it_or_failing(world_store):
    _, world = world_store

    class Failing(SimulatedBackend):
        def prewarm(self, schema: dict[str, Any], n: int = 1) -> int:
            raise BackendUnavailable("claude", "not installed")

    for backend in (SimulatedBackend(world), Failing(world)):
        assert Judge(backend, cache_path=None, events_path=None).prewarm("relevance", 2) == 0
    warming = Warming(world)
    assert Judge(warming, cache_path=None, events_path=None).prewarm("relevance", 3) == 3
    assert Judge(warming, cache_path=None, events_path=None).prewarm("relevance", 0) == 0
    assert warming.warmed == [(0, 3)]
