"""Relevance judges a candidate by the words of its line, so written gists matter, and a
bridged topic is found only once the bridging lesson has been read.

Locks in, over several worlds: a lesson whose title and gist do not name a topic is not
recalled for a task about that topic, though its body holds what the task needs (the
same lesson with a gist naming it is); a gist written by the simulated model names at
most two topics, so a lesson about three is not recalled for its third; a task whose
prompt never names a topic it needs gets that topic's lesson only as ``maybe``, and only
on a second pass that has read the bridging lesson.
"""

from __future__ import annotations

from rose.judge.calls import Judge
from rose.sim import SimulatedBackend, World, examples

SEEDS = range(4)


def _verdicts(judge: Judge, prompt: str, candidates, found=()) -> dict[str, str]:
    answer = judge.ask(
        "relevance", {"prompt": prompt, "candidates": candidates, "found": list(found)}
    )
    given = {v.id: v.verdict for v in answer.verdicts}
    return {c["id"]: given.get(c["id"], "unrelated") for c in candidates}  # left out: unrelated


def test_a_gist_that_omits_its_topic_is_not_recalled_for_it():
    checked = 0
    for ws in SEEDS:
        world = World.generate(ws)
        judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
        for task in world.tasks:
            if task.hidden or len(task.topics) > 1:
                continue
            topic = task.topics[0]
            other = next(t for t in world.topics if t != topic)
            # Two lines for one lesson holding what the task needs; only the words differ.
            named = {"id": "n_named", "title": "Notes", "gist": f"What to know about {topic}."}
            omitted = {"id": "n_omitted", "title": "Notes", "gist": f"What to know about {other}."}
            verdicts = _verdicts(judge, task.prompt, [named, omitted])
            assert verdicts == {"n_named": "relevant", "n_omitted": "unrelated"}
            checked += 1
    assert checked > 20


def test_a_written_gist_names_two_topics_so_a_third_goes_unrecalled():
    for ws in SEEDS:
        world = World.generate(ws)
        judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
        a, b, c = list(world.topics)[:3]
        facts = [world.topics[t].facts[0] for t in (a, b, c)]
        wide = examples.candidate(examples.lesson(world, "n_wide", facts))
        for topic, expected in ((a, "relevant"), (b, "relevant"), (c, "unrelated")):
            prompt = f"Please fix the {topic} client."
            assert _verdicts(judge, prompt, [wide])["n_wide"] == expected


def test_a_bridged_topic_is_reachable_only_after_the_bridging_lesson_is_read():
    first_pass = second_pass = tasks = 0
    for ws in SEEDS:
        world = World.generate(ws)
        judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
        lessons = examples.topic_lessons(world)
        for task in world.tasks:
            if not task.hidden:
                continue
            shown = [lessons[t] for t in task.topics]
            # ...and the lessons whose gists borrow a shown topic's name (homonyms).
            shown += [lessons[h] for h, b in world.homonyms.items() if b in task.topics]
            target = lessons[task.hidden[0]]["id"]
            cands = [examples.candidate(v) for v in lessons.values()]
            first = _verdicts(judge, task.prompt, cands)
            chosen = [lessons[t] for t in lessons if first[lessons[t]["id"]] == "relevant"]
            assert {c["id"] for c in chosen} == {s["id"] for s in shown}
            second = _verdicts(judge, task.prompt, cands, found=chosen)
            first_pass += first[target] in ("relevant", "maybe")
            second_pass += second[target] == "maybe"
            tasks += 1
    assert tasks > 10
    assert first_pass == 0 and second_pass == tasks
