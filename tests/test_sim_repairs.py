"""An over-cut compression fails its task, and the failure, told in words, leads the repair
ranking to the missing claim more often than chance but not always.

Locks in: the `over_cut` knob makes the compressor drop facts past its budget; a
compressed lesson that lost a fact the task needs fails the task (and one that lost
nothing needed does not); the symptom names a topic, a subject and the wrong value,
never a fact id; rank_repairs, shown the real dropped claims among distractors that
share their topic and subject, ranks a claim that explains the failure first well above
chance and below certainty, over several seeds; an over-cut is declared like any cut.
"""

from __future__ import annotations

import re

from rose.judge.calls import Judge
from rose.sim import Agent, SimulatedBackend, World, examples
from rose.sim.markers import find

SEEDS = range(6)


def _compressions(ws: int, over_cut: float):
    """(world, judge, task, compressed lesson, dropped facts) for single-topic tasks."""
    world = World.generate(ws)
    judge = Judge(
        SimulatedBackend(world, seed=ws, over_cut=over_cut), cache_path=None, events_path=None
    )
    lessons = examples.topic_lessons(world)
    for task in world.tasks:
        if task.hidden or len(task.topics) > 1:
            continue
        lesson = lessons[task.topics[0]]
        answer = judge.ask("compress", {"lesson": lesson, "target_ratio": 0.6})
        dropped = [f for d in answer.dropped for f in world.facts_in(d.claim)]
        assert sorted(dropped + world.facts_in(answer.body)) == sorted(
            world.facts_in(lesson["body"])
        )
        yield world, judge, task, {**lesson, "body": answer.body, "gist": answer.gist}, dropped


def test_over_cut_drops_more():
    def mean_dropped(knob: float) -> float:
        counts = [len(d) for ws in SEEDS[:2] for *_, d in _compressions(ws, knob)]
        return sum(counts) / len(counts)

    assert mean_dropped(0.6) > mean_dropped(0.0) + 1


def test_a_compression_that_dropped_a_needed_fact_fails_and_the_symptom_leads_to_it():
    right = ranked = 0
    chance = 0.0
    for ws in SEEDS:
        for world, judge, task, compressed, dropped in _compressions(ws, over_cut=0.5):
            outcome = Agent(world, seed=ws).solve(task, examples.block([compressed]))
            lost = [f for f in dropped if f in task.needs and f not in world.known]
            assert outcome.ok == (not lost)
            if outcome.ok:
                continue
            assert find(outcome.text, "f") == []
            assert not any(re.search(rf"\b{re.escape(f)}\b", outcome.text) for f in world.facts)
            claims, real = examples.repair_claims(world, dropped, salt=ws)
            answer = judge.ask(
                "rank_repairs", {"prompt": task.prompt, "failure": outcome.text, "claims": claims}
            )
            top = max(answer.ranking, key=lambda r: r.usefulness).id
            explains = {cid for cid, f in real.items() if f in outcome.missing}
            right += top in explains
            chance += len(explains) / len(claims)
            ranked += 1
    assert ranked > 50
    rate, base = right / ranked, chance / ranked
    assert rate > 2 * base
    assert 0.35 < rate < 0.85
