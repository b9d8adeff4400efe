"""The simulated world's homonyms: a topic's name borrowed by another area's wording.

Locks in, over several worlds: a few facts of a host topic name a borrowed topic in the
host's own sense, and no task needs them for the borrowed topic; a lesson holding one says
so in its gist, and the judge, reading words, takes it for a lesson about the borrowed
topic (the mistake is systematic: every task naming that topic alone gets it); a rule
"when the task touches <borrowed>: nothing in the <host> lessons applies" removes it, and
the same rule, wrong, drops a lesson leading with the host that the task did need (a rule
can hurt); without homonyms no gist borrows a name.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.sim import SimulatedBackend, World, examples

SEEDS = range(4)


def _chosen(judge: Judge, prompt: str, cands: list[dict], rules: list[str]) -> set[str]:
    shown = [{"id": f"r_{i:04d}", "text": r} for i, r in enumerate(rules)]
    answer = judge.ask("relevance", {"prompt": prompt, "candidates": cands, "rules": shown})
    return {v.id for v in answer.verdicts if v.verdict in ("relevant", "maybe")}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_borrowed_name_is_chosen_for_its_topic_and_a_rule_removes_it(seed: int):
    world = World.generate(seed)
    assert world.homonyms and World.generate(seed, homonyms=0).homonyms == {}
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    lessons = examples.topic_lessons(world)
    cands = [examples.candidate(v) for v in lessons.values()]
    for host, borrowed in world.homonyms.items():
        assert f"{host} {borrowed}" in lessons[host]["gist"]
        tasks = [t for t in world.tasks if t.topics == (borrowed,) and not t.hidden]
        assert tasks
        skip = f"when the task touches {borrowed}: nothing in the {host} lessons applies"
        for task in tasks:
            borrowed_facts = {f for f in task.needs if world.facts[f].topic == host}
            assert not borrowed_facts  # the host's facts are never this work's
            assert _chosen(judge, task.prompt, cands, []) == {
                f"n_{borrowed}",
                f"n_{host}",
            }
            assert _chosen(judge, task.prompt, cands, [skip]) == {f"n_{borrowed}"}


def test_a_wrong_rule_drops_a_needed_lesson():
    world = World.generate(0)
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    host, borrowed = next(iter(world.homonyms.items()))
    task = next(t for t in world.tasks if t.topics == (borrowed,) and not t.hidden)
    needed = [f for f in task.needs if f not in world.known]
    # A lesson about both, led by the host: the task needs its facts of the borrowed topic.
    both = examples.lesson(world, "n_both", [world.topics[host].facts[0], *needed])
    assert world.topics_in(f"{both['title']} {both['gist']}")[0] == host
    cands = [examples.candidate(both)]
    skip = f"when the task touches {borrowed}: nothing in the {host} lessons applies"
    assert _chosen(judge, task.prompt, cands, []) == {"n_both"}
    assert _chosen(judge, task.prompt, cands, [skip]) == set()
