"""The simulated agent solves a task exactly when every needed fact is in context or known.

Locks in: the rule that makes compress -> fail -> descend -> rescue run for real. With
every needed fact present the task succeeds with its accepted outcome; without any one
unknown fact it fails and names that fact's symptom; a stale variant does not stand in
for the true one; known facts need no lesson; a steered session records the user's
correction and ends in success.
"""

from __future__ import annotations

import pytest

from rose.sim import Agent, World, solve
from rose.sim.markers import OUTCOME, SYMPTOM, USER, find, last, mark


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(11, tasks=40)


def _context(world: World, facts) -> str:
    return " ".join(world.facts[f].text for f in facts)


def test_solves_exactly_when_facts_present(world):
    for task in world.tasks:
        unknown = [f for f in task.needs if f not in world.known]
        full = solve(world, task, _context(world, unknown))
        assert full.ok and full.missing == ()
        assert full.text.startswith(task.accepted)
        assert last(full.text, OUTCOME) == "ok"
        for gone in unknown:
            partial = solve(world, task, _context(world, [f for f in unknown if f != gone]))
            assert not partial.ok
            assert partial.missing == (gone,)
            assert find(partial.text, SYMPTOM) == [gone]
            assert last(partial.text, OUTCOME) == "fail"


def test_known_facts_need_no_lesson(world):
    task = next(t for t in world.tasks if set(t.needs) & world.known)
    unknown = [f for f in task.needs if f not in world.known]
    assert solve(world, task, _context(world, unknown)).ok
    assert set(solve(world, task, "").applied) == set(task.needs) & world.known


def test_stale_variant_does_not_count(world):
    stale = next(f for f in world.facts.values() if f.stale)
    true = stale.base + "a"
    task = next((t for t in world.tasks if true in t.needs), None)
    if task is None:
        pytest.skip("no task in this world needs the conflicting detail")
    others = [f for f in task.needs if f != true and f not in world.known]
    assert not solve(world, task, _context(world, [*others, stale.id])).ok
    assert solve(world, task, _context(world, [*others, true])).ok


def test_irrelevant_text_does_not_help(world):
    task = world.tasks[0]
    noise = _context(world, [f for f in world.facts if f not in task.needs])
    expected = set(task.needs) <= world.known
    assert solve(world, task, noise + " lorem ipsum").ok == expected


def test_steered_session(world):
    agent = Agent(world)
    task = next(t for t in world.tasks if set(t.needs) - world.known)
    session = agent.session(task, "")
    assert session.steered and not session.first.ok and session.outcome.ok
    assert mark(USER, "steer") in session.digest
    assert session.digest.splitlines()[0] == f"User: {task.prompt}"
    unsteered = agent.session(task, "", steer=False)
    assert not unsteered.steered and not unsteered.outcome.ok
    assert mark(USER, "steer") not in unsteered.digest
    happy = agent.session(task, _context(world, task.needs))
    assert happy.outcome.ok and not happy.steered


def test_world_solve_is_the_agent(world):
    task = world.tasks[1]
    assert world.solve(task, "") == solve(world, task, "")
