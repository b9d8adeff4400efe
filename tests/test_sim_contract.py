"""The contract between the templates and the simulated backend, for every call.

Locks in: the simulated model answers from the very prompt text a real backend would
receive, so the templates' layout (tags, one-line candidates, lesson blocks) and the
simulation's parser must agree. For each call this renders a world-built context through
the real template, lets the simulated backend answer, validates the answer through the
judge, and checks the answer is the one the prompt's words dictate. A template that
drifts from the layout makes these fail instead of silently feeding the loop nonsense.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import CALLS, Judge, template_source
from rose.sim import Agent, SimulatedBackend, World, examples
from rose.sim.parse import sentences


@pytest.fixture(scope="module")
def world() -> World:
    # Without homonyms: a gist borrowing a topic's name would match it by design, and these
    # pin the layout the answers are read from, not the world's vocabulary.
    return World.generate(5, homonyms=0)


@pytest.fixture(scope="module")
def ctx(world):
    return examples.contexts(world)


@pytest.fixture
def judge(world) -> Judge:
    return Judge(SimulatedBackend(world), cache_path=None, events_path=None)


@pytest.fixture(scope="module")
def task(world):
    return examples.focus_task(world)


def test_every_call_is_answered(judge, ctx):
    assert set(ctx) == set(CALLS)
    for name, context in ctx.items():
        assert isinstance(judge.ask(name, context), CALLS[name].answer)
    assert [c for c, _ in judge.backend.requests] == list(ctx)


def test_relevance(judge, ctx, task):
    answer = judge.ask("relevance", ctx["relevance"])
    # only what may bear on the task is listed: every other candidate is unrelated
    assert {v.id: v.verdict for v in answer.verdicts} == {f"n_{task.topics[0]}": "relevant"}
    assert len(ctx["relevance"]["candidates"]) > 1


def test_relevance_second_pass_reaches_hidden_topic(judge, world):
    task = next(t for t in world.tasks if t.hidden)
    bridge = next(f for f in task.needs if world.facts[f].mentions)
    src = examples.lesson(world, "n_src", [bridge])
    dst = examples.lesson(world, "n_dst", world.topics[task.hidden[0]].facts)
    vague = {"id": "n_vague", "title": "General notes", "gist": "Assorted advice."}
    assert task.hidden[0] not in world.topics_in(task.prompt)
    cands = [examples.candidate(dst), vague]
    first = judge.ask("relevance", {"prompt": task.prompt, "candidates": cands})
    assert [(v.id, v.verdict) for v in first.verdicts] == [("n_vague", "descend")]
    second = judge.ask("relevance", {"prompt": task.prompt, "candidates": cands, "found": [src]})
    assert (second.verdicts[0].id, second.verdicts[0].verdict) == (dst["id"], "maybe")


def test_related(judge, ctx, world, task):
    answer = judge.ask("related", ctx["related"])
    assert [m.id for m in answer.matches] == [f"n_{task.topics[0]}"]


def test_reconcile_contradiction(judge, ctx):
    answer = judge.ask("reconcile", ctx["reconcile"])
    assert (answer.relation, answer.target) == ("contradicts", "n_old")
    assert answer.question.endswith("?")


@pytest.mark.parametrize(
    "relation", ["duplicate", "refines", "specialises", "orthogonal", "contradicts"]
)
def test_reconcile_relations(judge, world, relation):
    topic = next(
        t
        for t in world.topics.values()
        if len(t.facts) >= 4 and not any(world.facts[f].stale for f in t.facts)
    )
    facts = list(topic.facts)
    other = next(t for t in world.topics.values() if t.name != topic.name)
    stale = next(f for f in world.facts.values() if f.stale)
    new, old = {
        "duplicate": (facts[:2], facts[:3]),
        "refines": (facts[:3], facts[:2]),
        "specialises": (facts[2:], facts[:2]),
        "orthogonal": (facts[:2], list(other.facts)),
        "contradicts": ([stale.id], [stale.base + "a"]),
    }[relation]
    answer = judge.ask(
        "reconcile",
        {
            "lesson": examples.lesson(world, "", new),
            "existing": [examples.lesson(world, "n_x", old)],
        },
    )
    assert answer.relation == relation
    assert answer.target == ("" if relation == "orthogonal" else "n_x")


def test_scope(judge, ctx, world, task):
    answer = judge.ask("scope", ctx["scope"])
    assert answer.scope == world.topics[task.topics[0]].scope


def test_assess(judge, ctx):
    answer = judge.ask("assess", ctx["assess"])
    assert (answer.outcome, answer.steered) == ("success", True)
    assert answer.used_ids() == ["n_needed"]
    assert [u.id for u in answer.lessons] == ["n_needed", ctx["assess"]["served"][1]["id"]]


def test_reflect_mints_what_the_user_taught(judge, ctx, world, task):
    answer = judge.ask("reflect", ctx["reflect"])
    assert answer.found
    session = Agent(world, explains=1.0).session(task, examples.block([ctx["assess"]["served"][0]]))
    taught = [f for f in session.first.missing if f not in world.known]
    minted = {x.family: world.facts_in(x.body) for x in answer.new_lessons}
    assert sorted(f for facts in minted.values() for f in facts) == sorted(taught)
    assert next(iter(minted)) == world.facts[taught[0]].topic
    for topic, facts in minted.items():  # one lesson a topic
        assert {world.facts[f].topic for f in facts} == {topic}
    quiet = {**ctx["reflect"], "digest": "User: hi\nAgent: done"}
    assert judge.ask("reflect", quiet).found is False


def test_rank_repairs(judge, ctx, world, task):
    answer = judge.ask("rank_repairs", ctx["rank_repairs"])
    _, real = examples.repair_claims(world, [examples.unknown(world, task)[0]])
    scores = {r.id: r.usefulness for r in answer.ranking}
    (right,) = real
    top_two = sorted(scores, key=scores.__getitem__, reverse=True)[:2]
    assert right in top_two and scores[right] >= 0.8  # it ties with a decoy of the same subject
    assert min(scores.values()) <= 0.5


def test_compress_declares_what_it_drops(judge, ctx, world):
    before = world.facts_in(ctx["compress"]["lesson"]["body"])
    answer = judge.ask("compress", ctx["compress"])
    after = world.facts_in(answer.body)
    declared = [f for d in answer.dropped for f in world.facts_in(d.claim)]
    assert sorted(after + declared) == sorted(before)
    assert world.facts_in(ctx["compress"]["evidence"][0])[0] in after
    assert all(world.facts_in(s) for s in sentences(answer.body))  # filler went first
    assert len(answer.body) < len(ctx["compress"]["lesson"]["body"])


def test_compress_cuts_until_the_budget(judge, world, task):
    lesson = examples.lesson(world, "n_t", task.needs, verbose=False)
    evidence = [world.facts[task.needs[0]].terse]
    answer = judge.ask("compress", {"lesson": lesson, "evidence": evidence, "target_ratio": 0.5})
    assert answer.dropped and world.facts_in(answer.body) == [task.needs[0]]
    preserved = judge.ask(
        "compress",
        {
            "lesson": lesson,
            "evidence": evidence,
            "target_ratio": 0.5,
            "preserve": [world.facts[f].terse for f in task.needs],
        },
    )
    assert preserved.dropped == [] and world.facts_in(preserved.body) == list(task.needs)


def test_replay_probe_then_judge(judge, ctx, world, task):
    probe = judge.ask("replay_probe", ctx["replay_probe"])
    accepted = ctx["replay_judge"]["accepted"]
    verdict = judge.ask(
        "replay_judge", {"prompt": task.prompt, "accepted": accepted, "approach": probe.approach}
    )
    assert verdict.verdict == "pass"
    assert judge.ask("replay_judge", ctx["replay_judge"]).verdict == "fail"
    thin = {**ctx["replay_probe"]["lesson"], "body": "Be careful."}
    thin_probe = judge.ask("replay_probe", {"prompt": task.prompt, "lesson": thin})
    again = {"prompt": task.prompt, "accepted": accepted, "approach": thin_probe.approach}
    assert judge.ask("replay_judge", again).verdict == "fail"


def test_merge_keeps_principles_declares_details(judge, ctx, world):
    answer = judge.ask("merge", ctx["merge"])
    kept = world.facts_in(answer.body)
    assert kept and all(world.facts[f].kind != "detail" for f in kept)
    children = [f for lesson in ctx["merge"]["lessons"] for f in world.facts_in(lesson["body"])]
    declared = [f for d in answer.dropped for f in world.facts_in(d.claim)]
    assert sorted(kept + declared) == sorted(children)
    assert {d.kind for d in answer.dropped if world.facts_in(d.claim)} <= {"parameter"}
    by_id = {lesson["id"]: lesson["body"] for lesson in ctx["merge"]["lessons"]}
    for d in answer.dropped:  # each claim names the child stating it
        assert set(world.facts_in(d.claim)) <= set(world.facts_in(by_id[d.holder]))
    assert len(world.topics_in(answer.gist)) == 2


def test_a_drifted_template_is_caught(world, ctx):
    drifted = template_source("relevance").replace("- [{{ c.id }}]", "* {{ c.id }}:")
    judge = Judge(
        SimulatedBackend(world),
        cache_path=None,
        events_path=None,
        templates={"relevance": drifted},
    )
    assert judge.ask("relevance", ctx["relevance"]).verdicts == []


def test_split_makes_a_lesson_of_each_section_verbatim(judge, ctx):
    answer = judge.ask("split", ctx["split"])
    text = ctx["split"]["text"]
    assert len(answer.lessons) == 2  # one paragraph under each of two headings
    for lesson in answer.lessons:
        assert lesson.body in text  # verbatim
        assert f"## {lesson.title}\n\n{lesson.body}" in text  # titled by its heading
