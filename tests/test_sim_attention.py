"""The simulated agent has a context window: conflicts cost, old lessons fade, habits make
lessons redundant.

Locks in, over several seeds: given both variants of a disputed detail the agent takes
the stale one about half the time, and never once the conflict's question is in the
block; a lesson injected many turns ago helps less often than the same lesson refreshed
by a one-line reminder; a lesson holding only principles the agent already knows
changes no outcome, and assess does not credit it.
"""

from __future__ import annotations

from rose.judge.calls import Judge
from rose.sim import Agent, SimulatedBackend, Turn, World, examples

SEEDS = range(5)


def test_both_variants_in_context_fail_about_half_the_time_unless_surfaced():
    plain = surfaced = runs = 0
    for ws in SEEDS:
        world = World.generate(ws)
        true, stale = examples.conflict_pair(world)
        task = examples.conflict_task(world)
        rest = [f for f in task.needs if f != true and f not in world.known]
        new = examples.lesson(world, "n_new", [true, *rest])
        old = examples.lesson(world, "n_old", [stale])
        judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
        found = judge.ask("reconcile", {"lesson": old, "existing": [new]})
        assert found.relation == "contradicts"
        with_question = examples.block([new, old], conflicts={"n_old": found.question})
        for seed in range(40):
            agent = Agent(world, seed=seed)
            assert agent.solve(task, examples.block([new])).ok  # one variant: no doubt
            plain += not agent.solve(task, examples.block([new, old])).ok
            surfaced += not agent.solve(task, with_question).ok
            runs += 1
    assert 0.35 < plain / runs < 0.65
    assert surfaced == 0


def test_a_stale_unrefreshed_lesson_helps_less_often_than_a_refreshed_one():
    stale = refreshed = fresh = runs = 0
    for ws in SEEDS:
        world = World.generate(ws, size="small")
        lessons = examples.topic_lessons(world)
        for task in world.tasks:
            served = [lessons[t] for t in dict.fromkeys([*task.topics, *task.hidden])]
            full = examples.block(served)
            reminder = examples.block([], reminders=served)
            agent = Agent(world, seed=ws, decay=0.05)
            fresh += agent.solve(task, full).ok
            stale += agent.solve(task, [Turn(full, age=20)]).ok
            refreshed += agent.solve(task, [Turn(full, age=20), Turn(reminder, age=1)]).ok
            runs += 1
    assert fresh == runs
    assert refreshed / runs > 0.85
    assert stale / runs < 0.5
    no_decay = Agent(World.generate(0, size="small"), decay=0.0)
    task = no_decay.world.tasks[0]
    served = [examples.topic_lessons(no_decay.world)[t] for t in task.topics + task.hidden]
    assert no_decay.solve(task, [Turn(examples.block(served), age=500)]).ok


def test_a_lesson_of_known_principles_is_redundant():
    checked = 0
    for ws in SEEDS:
        world = World.generate(ws)
        judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
        for task in world.tasks:
            known = [f for f in task.needs if f in world.known]
            if not known:
                continue
            rest = [f for f in task.needs if f not in world.known]
            needed = examples.lesson(world, "n_rest", rest) if rest else None
            habit = examples.lesson(world, "n_habit", known)
            base = [needed] if needed else []
            agent = Agent(world, seed=ws)
            without = agent.solve(task, examples.block(base))
            session = agent.session(task, examples.block([*base, habit]))
            assert session.first.ok == without.ok
            assert "n_habit" not in session.first.used
            answer = judge.ask(
                "assess", {"prompt": task.prompt, "digest": session.transcript, "served": [habit]}
            )
            assert answer.used_ids() == []
            checked += 1
    assert checked >= 5
