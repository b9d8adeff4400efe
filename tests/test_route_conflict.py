"""A rule a reflection proposes is settled against the rules in use that say the opposite.

The `rule_conflict` call (the simulated model reads the rules' words) names the stored
rules for the same kind of task with the opposite advice; the records decide: a stored
rule with a miss retires and the new one is written, a stored rule that served with no
miss keeps its place and the new one is refused, and when neither has a record neither
stays. A rule for another kind of task is never touched.
"""

from __future__ import annotations

import pytest

from rose import config
from rose.loop.selection import route
from rose.model.registry import simulated_model
from rose.sim import World
from rose.store.facade import Store

pytestmark = pytest.mark.graph

SEED = 2


@pytest.fixture
def topics() -> list[str]:
    return list(World.generate(SEED, size="small").topics)


@pytest.fixture
def store(project) -> Store:
    """A project store whose model is the simulated world's."""
    made = Store.init(project)
    config.set_override(made.primary.config, "agent", "simulated")
    config.set_override(made.primary.config, "model", simulated_model(seed=SEED, size="small"))
    return Store.open(project)


def _propose(store: Store, when: str, then: str, *, missed: set[str] = frozenset()) -> str:
    return route.teach(store, when, then, origin="reflection", missed=missed).id


def test_neither_stays_when_neither_has_a_record(store: Store, topics: list[str]):
    a, b, c = topics[:3]
    skip = route.teach(store, f"the task touches {a}", f"nothing in the {b} lessons applies")
    other = route.teach(store, f"the task touches {c}", f"nothing in the {b} lessons applies")
    with pytest.raises(route.RuleRefused, match="says the opposite"):
        _propose(store, f"the task touches {a}", f"also read the {b} lessons")
    rules = {r.id: r for r in store.rules()[0]}
    assert set(rules) == {skip.id, other.id}  # the new rule was not written
    assert "neither has a record" in rules[skip.id].retired and not rules[other.id].retired


def test_a_stored_rule_with_a_miss_gives_way(store: Store, topics: list[str]):
    a, b = topics[:2]
    skip = route.teach(store, f"the task touches {a}", f"nothing in the {b} lessons applies")
    read = _propose(store, f"the task touches {a}", f"also read the {b} lessons", missed={skip.id})
    rules = {r.id: r for r in store.rules()[0]}
    assert rules[skip.id].retired.startswith(read) and not rules[read].retired
    assert [r.id for r in route.for_selection(store)] == [read]


def test_a_retired_rule_proposed_again_is_not_written(store: Store, topics: list[str]):
    a, b = topics[:2]
    skip = route.teach(store, f"the task touches {a}", f"nothing in the {b} lessons applies")
    assert route.retire(store, skip.id, "turned away lessons work needed 2 times")
    proposal = type("P", (), {"when": skip.when, "then": skip.then})()
    for session in ("s1", "s2", "s3"):
        written, refused = route.from_reflection(store, None, [proposal], source=session)
        assert written == [] and refused == []
    assert [r.retired for r in store.rules()[0]] == ["turned away lessons work needed 2 times"]
