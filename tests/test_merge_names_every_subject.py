"""A merged parent's title and gist name every child's subject.

Locks in: a merged parent is served in its children's place and found by its title and
gist alone, yet the simulated merger wrote a gist naming at most two of its children's
topics ("ledger, payments and more") and a title naming three, so work on a third or
fourth child's subject never reached the parent. The merge prompt now asks for a title
and gist naming every child's subject, and the simulated merger, answering from that
prompt, names the topic of every child's facts in both.
"""

from __future__ import annotations

from rose.judge.calls import Judge, render
from rose.judge.models import MergeContext
from rose.sim import SimulatedBackend, World, examples


def test_the_merged_parent_names_every_childs_subject():
    world = World.generate(0, homonyms=0)
    topics = list(world.topics)[:4]
    children = [
        examples.lesson(world, f"n_child{i}", [world.topics[t].facts[0]])
        for i, t in enumerate(topics)
    ]
    context = {"lessons": children, "budget_tokens": 10_000}
    prompt = render("merge", MergeContext.model_validate(context))
    assert "naming every child's subject" in " ".join(prompt.split())
    j = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    parent = j.ask("merge", context)
    assert set(world.topics_in(parent.gist)) >= set(topics)
    assert set(world.topics_in(parent.title)) >= set(topics)
