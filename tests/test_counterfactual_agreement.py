"""Counterfactual attribution measures what a served lesson changed, beside what else was served.

Locks in: on the simulated world, a lesson whose presence changes the probe's approach is
counted as changed and agrees with a "used" attribution; an off-topic lesson changes
nothing and disagrees with "used" (and agrees with "unused"); a lesson whose every point
another served lesson also makes changes nothing either (the probe without it still has
the twin), so calling both used disagrees twice; every check is a `counterfactual` event
and the summary counts them, apart for attributed used and unused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.events import read_events
from rose.judge.calls import Judge
from rose.loop.abstraction import replay as _replay
from rose.loop.reflection.counterfactual import CHECKED, agreement, counterfactual
from rose.models import Episode, Node
from rose.sim import SimulatedBackend, World, examples
from rose.sim.markers import strip
from rose.store.facade import Store

pytestmark = pytest.mark.graph


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(5)


def _lessons(world: World) -> tuple[str, dict, dict]:
    """The focus task's prompt, the lesson on its topic, and one on a topic it never reaches."""
    task = examples.focus_task(world)
    by_topic = examples.topic_lessons(world)
    on = by_topic[task.topics[0]]
    reached = {t for f in world.facts_in(on["body"]) for t in world.facts[f].mentions}
    off = next(v for t, v in by_topic.items() if t not in {*task.topics, *reached})
    return strip(task.prompt), on, off


def _store(project: Path, lessons: list[dict], prompt: str, *, used: list[str]) -> Store:
    store = Store.init(project)
    nodes = [Node(id=x["id"], title=x["title"], gist=x["gist"], body=x["body"]) for x in lessons]
    ids = [n.id for n in nodes]
    unused = [i for i in ids if i not in used]
    ep = Episode(prompt=prompt, outcome="success", served=ids, used=used, unused=unused,
                 attributed_by=["assess"])  # fmt: skip
    store.write(nodes, [ep])
    return store


def _run(store: Store, world: World):
    judge = Judge(SimulatedBackend(world), cache_path=None, events_path=store.primary.events)
    checks = counterfactual(store, judge=judge, prober=_replay.in_process_set(judge), calls=30)
    return {c.lesson: c for c in checks}


def test_a_lesson_that_changes_the_approach_agrees_with_used_and_one_that_does_not_disagrees(
    project: Path, world: World
):
    prompt, on, off = _lessons(world)
    store = _store(project, [on, off], prompt, used=[on["id"], off["id"]])
    by = _run(store, world)
    assert by[on["id"]].changed is True and by[on["id"]].agree is True
    assert by[off["id"]].changed is False and by[off["id"]].agree is False
    events = read_events(store.primary.events, kind=CHECKED)
    assert sorted((e["lesson"], e["agree"]) for e in events) == sorted(
        [(on["id"], True), (off["id"], False)]
    )
    summary = agreement(store)
    assert summary["checked"] == 2 and summary["agreed"] == 1 and summary["agreement"] == 0.5
    assert summary["used"] == {"checked": 2, "agreed": 1}
    assert summary["unused"] == {"checked": 0, "agreed": 0}


def test_an_off_topic_lesson_called_unused_agrees(project: Path, world: World):
    prompt, on, off = _lessons(world)
    store = _store(project, [on, off], prompt, used=[on["id"]])
    by = _run(store, world)
    assert by[off["id"]].used is False and by[off["id"]].agree is True
    assert agreement(store)["unused"] == {"checked": 1, "agreed": 1}


def test_a_lesson_another_served_lesson_repeats_changes_nothing(project: Path, world: World):
    prompt, on, _ = _lessons(world)
    twin = {**on, "id": "n_twin0001", "title": "The same notes again"}
    store = _store(project, [on, twin], prompt, used=[on["id"], twin["id"]])
    by = _run(store, world)
    assert [by[i].changed for i in (on["id"], twin["id"])] == [False, False]
    assert agreement(store)["agreement"] == 0.0
