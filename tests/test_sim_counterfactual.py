"""The simulated model answers the counterfactual calls from what their prompts show.

Locks in: `counterfactual_probe` with no lesson has nothing to act on, and with several
acts on what they say together about the task; `counterfactual` says the lesson changed
the approach only when the approach with it states one of the lesson's facts, on the
task's topics, that the approach without it lacks: swapping the two approaches, giving
both the same facts, or a lesson on a topic the task never names, is no change.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.sim import SimulatedBackend, World, examples


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(5)


@pytest.fixture(scope="module")
def ctx(world: World) -> dict:
    return examples.contexts(world)


@pytest.fixture
def judge(world: World) -> Judge:
    return Judge(SimulatedBackend(world), cache_path=None, events_path=None)


def test_the_probe_acts_on_every_lesson_shown_or_on_nothing(judge, ctx, world):
    shown = ctx["counterfactual_probe"]
    none = judge.ask("counterfactual_probe", {"prompt": shown["prompt"], "lessons": []})
    assert world.stated(none.approach) == [] and "nothing to act on" in none.approach
    both = judge.ask("counterfactual_probe", shown).approach
    task_lesson = shown["lessons"][0]
    assert set(world.facts_in(task_lesson["body"])) <= set(world.facts_in(both))


def test_changed_only_for_the_lessons_own_facts_on_the_task(judge, ctx, world):
    c = ctx["counterfactual"]
    assert judge.ask("counterfactual", c).changed is True
    swapped = {**c, "with_lesson": c["without_lesson"], "without_lesson": c["with_lesson"]}
    assert judge.ask("counterfactual", swapped).changed is False
    same = {**c, "without_lesson": c["with_lesson"]}
    assert judge.ask("counterfactual", same).changed is False
    task = examples.focus_task(world)
    off_topic = next(t for t in world.topics if t not in task.topics)
    facts = world.topics[off_topic].facts[:2]
    off = examples.lesson(world, "n_off", facts)
    stated = " ".join(world.facts[f].terse for f in facts)
    gained = {**c, "lesson": off, "with_lesson": f"{c['without_lesson']} {stated}"}
    assert judge.ask("counterfactual", gained).changed is False
