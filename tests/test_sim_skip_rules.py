"""The simulated reflector writes a rule of what does not apply only where recall chose,
and the simulated relevance judgement follows rules of that kind of work only.

Locks in: a served lesson of a topic the task never named, left unused, gives a "nothing
in the <topic> lessons applies" rule when the reflect prompt says recall chose the served
lessons, and none when every lesson was served (nothing was chosen, nothing to correct);
relevance follows a rule whose condition names a verb or object only when the
task is that work, and a rule to read a topic outweighs one to skip it.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.sim import Agent, SimulatedBackend, World, examples, vocab


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(5)


def _judge(world: World) -> Judge:
    return Judge(SimulatedBackend(world), cache_path=None, events_path=None)


def _plain_task(world: World):
    return next(t for t in world.tasks if len(t.topics) == 1 and not t.hidden)


@pytest.mark.parametrize("chosen", [True, False])
def test_skip_rules_come_only_from_chosen_lessons(world: World, chosen: bool):
    task = _plain_task(world)
    other = next(t for t in world.topics if t not in task.topics)
    unrelated = next(f for f, fact in world.facts.items() if fact.topic == other)
    served = examples.lesson(world, "n_other", [unrelated])
    digest = Agent(world, seed=0).session(task, "").digest
    ctx = {"prompt": task.prompt, "digest": digest, "served": [served], "chosen": chosen}
    answer = _judge(world).ask("reflect", ctx)
    skips = [r for r in answer.rules if "nothing in" in r.then]
    if chosen:
        assert [(r.when, r.then) for r in skips] == [
            (f"the task touches {task.topics[0]}", f"nothing in the {other} lessons applies")
        ]
    else:
        assert skips == []


def test_rules_naming_a_kind_of_work_hold_for_that_work_only(world: World):
    task = _plain_task(world)
    topic = task.topics[0]
    other = next(t for t in world.topics if t != topic)
    lessons = examples.topic_lessons(world)
    cands = [examples.candidate(lessons[topic]), examples.candidate(lessons[other])]
    verb = next(v for v, _ in vocab.VERBS if v not in task.prompt.lower().split())
    judge = _judge(world)

    def chosen(rules: list[str]) -> set[str]:
        shown = [{"id": f"r_{i:04d}", "text": r} for i, r in enumerate(rules)]
        ctx = {"prompt": task.prompt, "candidates": cands, "rules": shown}
        answer = judge.ask("relevance", ctx)
        return {v.id for v in answer.verdicts if v.verdict in ("relevant", "maybe")}

    read = f"when the task touches {topic}: also read the {other} lessons"
    elsewhere = f"when the task is to {verb} the {topic} code: also read the {other} lessons"
    skip = f"when the task touches {topic}: nothing in the {other} lessons applies"
    assert chosen([]) == {lessons[topic]["id"]}
    assert chosen([read]) == {lessons[topic]["id"], lessons[other]["id"]}
    assert chosen([elsewhere]) == {lessons[topic]["id"]}  # not this work
    assert chosen([read, skip]) == {lessons[topic]["id"], lessons[other]["id"]}
    assert chosen([skip]) == {lessons[topic]["id"]}


def test_a_verdict_a_skip_rule_decided_cites_it(world: World):
    """The relevance answer names the rule that turned a lesson away, and only that one."""
    task = next(t for t in world.tasks if len(t.topics) == 1)
    topic = task.topics[0]
    other = next(t for t in world.topics if t != topic)
    lessons = examples.topic_lessons(world)
    cands = [examples.candidate(lessons[topic]), examples.candidate(lessons[other])]
    rules = [
        {"id": "r_skip", "text": f"when the task touches {topic}: nothing in the {other} "
         "lessons applies"},
        {"id": "r_else", "text": f"when the task touches {other}: skip the {topic} lessons"},
    ]  # fmt: skip
    answer = _judge(world).ask("relevance", {"prompt": task.prompt, "candidates": cands,
                                             "rules": rules})  # fmt: skip
    cited = {v.id: v.rules for v in answer.verdicts}
    assert cited == {lessons[topic]["id"]: [], lessons[other]["id"]: ["r_skip"]}
