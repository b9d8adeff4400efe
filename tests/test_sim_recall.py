"""On the default world, recall has to choose: its model path runs, and the choice is made
from the words of the lessons' lines.

Locks in: the default world's store is over `recall.max_pack_tokens`, so recall does
not serve everything unfiltered (as it did when the whole world fit); the relevance
call, answered by the simulated model through the real recall walk, picks the lesson of
the topic the prompt names; a lesson whose title and gist name another topic is left
out, however much its body says about the prompt's; one whose line names no topic at
all is too general to judge, so it is opened (and, with nothing below it, served).
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.loop.selection.recall import recall
from rose.models import Node
from rose.sim import SimulatedBackend, World, examples

pytestmark = pytest.mark.graph


def test_recall_takes_the_model_path_on_the_default_world(store):
    world = World.generate(4)
    ids = {draft.family: f"n_{draft.family}" for draft in world.lessons()}
    store.write(
        [
            Node(id=ids[d.family], family=d.family, title=d.title, gist=d.gist, body=d.body)
            for d in world.lessons()
        ]
    )
    task = examples.focus_task(world)
    (topic,) = task.topics
    body = world.lessons()[list(world.topics).index(topic)].body
    other = next(t for t in world.topics if t != topic)
    store.save(Node(id="n_vague", family="misc", title="Misc notes", gist="Odds.", body=body))
    store.save(
        Node(id="n_wrong", family="misc", title="Misc notes", gist=f"About {other}.", body=body)
    )
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    res = recall(store, task.prompt, judge=judge)
    assert res.calls >= 1 and not res.degraded
    assert any("the model decides" in d for d in res.decisions)
    chosen = {item["id"] for item in res.chosen}
    assert ids[topic] in chosen
    assert len(chosen) < len(world.topics)
    verdicts = {v.id: v.verdict for v in res.verdicts}
    assert verdicts[ids[topic]] == "relevant"
    assert verdicts["n_wrong"] == "unrelated" and "n_wrong" not in chosen
    vague = [v for v in res.verdicts if v.id == "n_vague"]
    assert [v.verdict for v in vague] == ["descend", "relevant"] and "n_vague" in chosen
    assert "nothing below" in vague[-1].reason  # served as the lesson the model asked about
