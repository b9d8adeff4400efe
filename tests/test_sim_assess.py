"""assess judges from the digest it is given, not from the task: it can be wrong the ways a
real judge is.

Locks in: an empty digest credits nothing (and is no success); a digest from other work
credits what that digest shows, whatever the task; a lesson the agent was shown long ago
and ignored is relevant and still not used; principles, which leave a trace in a
background digest only when the agent's reasoning was kept or it cited the lesson, are
under-credited there and credited fully from the whole transcript (the fork mode);
details, which every tool call shows, are credited either way.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.sim import Agent, SimulatedBackend, Turn, World, examples

SEEDS = range(4)


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(2)


def _judge(world: World) -> Judge:
    return Judge(SimulatedBackend(world), cache_path=None, events_path=None)


def test_an_empty_digest_credits_nothing(world):
    judge = _judge(world)
    task = examples.focus_task(world)
    served = list(examples.topic_lessons(world).values())[:5]
    served.append(examples.lesson(world, "n_exact", examples.unknown(world, task)))
    answer = judge.ask("assess", {"prompt": task.prompt, "digest": "", "served": served})
    assert answer.used_ids() == []
    assert answer.outcome == "failure" and not answer.steered


def test_a_digest_is_judged_for_what_it_shows_not_for_the_task(world):
    judge = _judge(world)
    lessons = examples.topic_lessons(world)
    task = examples.focus_task(world)
    other = next(t for t in world.tasks if not set(t.topics) & set(task.topics) and not t.hidden)
    digest = Agent(world).session(other, examples.block([lessons[other.topics[0]]])).digest
    served = [lessons[task.topics[0]], lessons[other.topics[0]]]
    answer = judge.ask("assess", {"prompt": task.prompt, "digest": digest, "served": served})
    assert answer.used_ids() == [lessons[other.topics[0]]["id"]]


def test_a_relevant_lesson_the_agent_ignored_is_not_used(world):
    judge = _judge(world)
    lessons = examples.topic_lessons(world)
    seen = 0
    for task in world.tasks:
        lesson = lessons[task.topics[0]]
        for seed in range(6):
            session = Agent(world, seed=seed, decay=0.1).session(
                task, [Turn(examples.block([lesson]), age=30)], steer=False
            )
            if lesson["id"] in session.first.used:
                continue  # it was attended to after all
            answer = judge.ask(
                "assess", {"prompt": task.prompt, "digest": session.digest, "served": [lesson]}
            )
            assert answer.used_ids() == []
            seen += 1
    assert seen > 20


def test_principles_are_under_credited_from_a_digest_and_credited_by_the_fork():
    credited = {("digest", "principle"): 0, ("fork", "principle"): 0, ("digest", "detail"): 0}
    used = {"principle": 0, "detail": 0}
    for ws in SEEDS:
        world = World.generate(ws, size="small")
        judge = _judge(world)
        for task in world.tasks:
            facts = [f for f in task.needs if f not in world.known]
            served = [examples.lesson(world, f"n_{i}", [f]) for i, f in enumerate(facts)]
            session = Agent(world, seed=ws).session(task, examples.block(served))
            for mode, text in (("digest", session.digest), ("fork", session.transcript)):
                answer = judge.ask(
                    "assess", {"prompt": task.prompt, "digest": text, "served": served}
                )
                got = set(answer.used_ids())
                for i, f in enumerate(facts):
                    kind = world.facts[f].kind
                    if (mode, kind) in credited and f"n_{i}" in got:
                        credited[mode, kind] += 1
                    if mode == "digest" and kind in used:
                        used[kind] += f"n_{i}" in session.first.used
    assert credited["fork", "principle"] == used["principle"] > 20
    assert credited["digest", "detail"] == used["detail"] > 20
    assert 0.4 < credited["digest", "principle"] / used["principle"] < 0.85
