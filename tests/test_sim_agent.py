"""The simulated agent solves a task exactly when it acts rightly on every needed fact, and
reports in words, never in ids.

Locks in: the rule that makes compress -> fail -> descend -> rescue run for real. With
every needed fact fresh in context the task succeeds and the agent's summary is prose
(no fact marker, no fact id) stating its details; without any one unknown fact it
fails, and its symptom names that fact's topic and subject and a wrong value, never the
fact; a stale variant does not stand in for the true one; known facts need no lesson; a
steered session records the user's correction and ends in success; the digest keeps
the tool calls and the cited lines but drops some reasoning, the transcript keeps all;
the agent is deterministic for a seed.
"""

from __future__ import annotations

import re

import pytest

from rose.sim import Agent, Turn, World, examples, solve
from rose.sim.markers import FACT, OPEN, OUTCOME, USER, find, last, mark, strip


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(11, tasks=40)


def _context(world: World, facts) -> str:
    return " ".join(world.facts[f].text for f in facts)


def _no_fact_named(world: World, text: str) -> bool:
    plain = strip(text)
    return find(text, FACT) == [] and not any(
        re.search(rf"\b{re.escape(f)}\b", plain) for f in world.facts
    )


def test_solves_exactly_when_facts_present(world):
    for task in world.tasks:
        unknown = [f for f in task.needs if f not in world.known]
        full = solve(world, task, _context(world, unknown))
        assert full.ok and full.missing == ()
        assert full.text.startswith(task.done)
        assert last(full.text, OUTCOME) == "ok"
        assert _no_fact_named(world, full.text)
        details = {f for f in task.needs if world.facts[f].kind == "detail"}
        assert details <= set(world.stated(full.text))  # the summary says the values used
        for gone in unknown:
            partial = solve(world, task, _context(world, [f for f in unknown if f != gone]))
            assert not partial.ok
            assert partial.missing == (gone,)
            assert last(partial.text, OUTCOME) == "fail"
            assert _no_fact_named(world, partial.text)
            fact = world.facts[gone]
            assert fact.topic in world.topics_in(partial.text)
            if fact.kind == "detail":
                assert f"{fact.topic} {fact.subject} was " in partial.text
                assert gone not in world.stated(partial.text)


def test_known_facts_need_no_lesson(world):
    task = next(t for t in world.tasks if set(t.needs) & world.known)
    unknown = [f for f in task.needs if f not in world.known]
    assert solve(world, task, _context(world, unknown)).ok
    assert set(solve(world, task, "").applied) == set(task.needs) & world.known


def test_stale_variant_does_not_count(world):
    task = examples.conflict_task(world)
    true, stale = examples.conflict_pair(world)
    others = [f for f in task.needs if f != true and f not in world.known]
    failed = solve(world, task, _context(world, [*others, stale]))
    assert not failed.ok and failed.missing == (true,)
    assert world.facts[stale].value in failed.text  # it used the stale value, and says so
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


def test_the_agent_cites_and_the_digest_keeps_less_than_the_transcript(world):
    lessons = examples.topic_lessons(world)
    cited = kept = lines = 0
    for task in world.tasks:
        served = [lessons[t] for t in dict.fromkeys([*task.topics, *task.hidden])]
        session = Agent(world).session(task, examples.block(served))
        transcript, digest = session.transcript.splitlines(), session.digest.splitlines()
        assert set(digest) <= set(transcript)
        assert [x for x in transcript if x.startswith(("User:", "Tool:"))] == [
            x for x in digest if x.startswith(("User:", "Tool:"))
        ]
        cited += sum(1 for x in transcript if "(lesson n_" in x)
        reasoning = [x for x in transcript if x.startswith("Agent:") and OUTCOME + ":" not in x]
        reasoning = [x for x in reasoning if OPEN + OUTCOME not in x and "(lesson n_" not in x]
        lines += len(reasoning)
        kept += sum(1 for x in reasoning if x in digest)
    assert cited > 0
    assert 0.1 < kept / lines < 0.5  # the digest keeps about a third of the uncited reasoning


def test_the_agent_is_deterministic_for_a_seed(world):
    task = world.tasks[3]
    context = [Turn(examples.block(examples.topic_lessons(world).values()), age=12)]
    runs = [Agent(world, seed=s).session(task, context) for s in (1, 1, 2, 3, 4, 5)]
    assert runs[0] == runs[1]
    assert len({(r.digest, r.first.ok) for r in runs[1:]}) > 1


def test_world_solve_is_the_agent(world):
    task = world.tasks[1]
    assert world.solve(task, "") == solve(world, task, "")
    with pytest.raises(ValueError):
        Agent(world, decay=1.5)
