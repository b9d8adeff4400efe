"""The simulated world's assess, through the real template, says why a served lesson went unused.

Locks in: a lesson whose fact the agent acted on out of habit is ``redundant``; a lesson on
a topic neither the task nor the digest names is ``irrelevant``; a lesson on the task's
topic that the agent did not act on is ``ignored``; a used lesson has no cause, and an
empty digest gives none (there is nothing to tell from). Read by `assess_unit`, the causes
reach the verdict for the unused lessons only.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.loop.reflection.attribute import assess_unit
from rose.models import Node
from rose.sim import Agent, SimulatedBackend, Turn, World, examples


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(2)


def _judge(world: World) -> Judge:
    return Judge(SimulatedBackend(world), cache_path=None, events_path=None)


def _node(lesson: dict[str, str]) -> Node:
    return Node(id=lesson["id"], title=lesson["title"], gist=lesson["gist"], body=lesson["body"])


def test_causes_of_unused_lessons(world: World):
    task = next(t for t in world.tasks if set(t.needs) & world.known)
    habit = examples.lesson(world, "n_habit01", [next(f for f in task.needs if f in world.known)])
    needed = examples.lesson(world, "n_needed1", [f for f in task.needs if f not in world.known])
    session = Agent(world).session(task, examples.block([habit, needed]))
    worked = world.subjects_in(task.prompt + session.transcript)
    far = next(t for t in world.topics if t not in worked)
    elsewhere = examples.topic_lessons(world)[far]
    served = [habit, needed, elsewhere]
    answer = _judge(world).ask(
        "assess", {"prompt": task.prompt, "digest": session.transcript, "served": served}
    )
    by_id = {u.id: u for u in answer.lessons}
    assert by_id["n_needed1"].used and by_id["n_needed1"].cause == ""
    assert (by_id["n_habit01"].used, by_id["n_habit01"].cause) == (False, "redundant")
    assert (by_id[elsewhere["id"]].used, by_id[elsewhere["id"]].cause) == (False, "irrelevant")

    verdict = assess_unit(
        _judge(world),
        prompt=task.prompt,
        digest=session.transcript,
        served=[_node(x) for x in served],
    )
    assert verdict.used == ["n_needed1"]
    assert verdict.causes == {"n_habit01": "redundant", elsewhere["id"]: "irrelevant"}


def test_a_relevant_lesson_the_agent_ignored_is_ignored(world: World):
    lessons = examples.topic_lessons(world)
    judge = _judge(world)
    seen = 0
    for task in world.tasks[:24]:
        lesson = lessons[task.topics[0]]
        session = Agent(world, seed=1, decay=0.1).session(
            task, [Turn(examples.block([lesson]), age=30)], steer=False
        )
        if lesson["id"] in session.first.used:
            continue  # it was attended to after all
        answer = judge.ask(
            "assess", {"prompt": task.prompt, "digest": session.digest, "served": [lesson]}
        )
        (use,) = answer.lessons
        assert (use.used, use.cause) == (False, "ignored")
        seen += 1
    assert seen > 5


def test_an_empty_digest_gives_no_cause(world: World):
    task = examples.focus_task(world)
    served = list(examples.topic_lessons(world).values())[:4]
    answer = _judge(world).ask("assess", {"prompt": task.prompt, "digest": "", "served": served})
    assert [u.cause for u in answer.lessons] == [""] * 4
