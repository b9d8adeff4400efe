"""A refinement that brings a subject its target's title and gist do not name is kept apart.

Locks in: such a refinement used to be folded into the target's body under the target's
old title and gist, so recall, which chooses by those lines alone, never served it for the
subject it brought ("Telemetry notes" holding the backups facts deploy tasks needed). Now
the reconcile answer names those subjects (`other_subjects`), and consolidation stores the
new lesson as one of its own, in a family of its own, under the title and gist the
reconciler wrote, leaving the target as it was; a refinement whose subject the target's
line names is still folded in. The simulated reconciler reads the subjects from the
words, as a model would: the topics of the facts it adds that the target's line does not
name; of two lessons it refines, it picks the one whose line names them. Kept apart from a
lesson stored while the judge was down, the lesson stays active, not superseded.
"""

from __future__ import annotations

import pytest

from rose.errors import BackendUnavailable
from rose.events import read_events
from rose.jobs.capture import capture
from rose.judge.calls import Judge, for_store
from rose.loop.reflection.consolidate import consolidate, reconcile_pending
from rose.models import Node
from rose.sim import SimulatedBackend, World, examples
from rose.store.facade import Store
from tests._reconcile import judge, lesson, reconciled, related

SEED = 0


@pytest.fixture(scope="module")
def world() -> World:
    return World.generate(SEED, homonyms=0)


def _facts(world: World, n: int) -> list[list[str]]:
    """The true facts of `n` project topics, each with at least three."""
    out = [
        [f for f in t.facts if not world.facts[f].stale]
        for t in world.topics.values()
        if t.scope == "project"
    ]
    out = [facts for facts in out if len(facts) >= 3]
    assert len(out) >= n
    return out[:n]


def _ask(world: World, new: list[str], *old: list[str]) -> dict:
    j = Judge(SimulatedBackend(world), cache_path=None, events_path=None)
    existing = [examples.lesson(world, f"n_old{i}", facts) for i, facts in enumerate(old)]
    answer = j.ask("reconcile", {"lesson": examples.lesson(world, "", new), "existing": existing})
    return answer.model_dump()


def test_the_simulated_reconciler_names_the_subjects_a_line_leaves_out(world: World):
    a, b = _facts(world, 2)
    topic_b = world.facts[b[0]].topic
    apart = _ask(world, [a[0], b[0]], a[:2])  # the target's line names only a's topic
    assert (apart["relation"], apart["target"]) == ("refines", "n_old0")
    assert apart["other_subjects"] == [topic_b]
    named = _ask(world, [a[0], b[0]], [a[1], a[0], b[1]])  # its gist names both topics
    assert named["relation"] == "refines" and named["other_subjects"] == []
    same = _ask(world, a[:3], a[:2])  # more on the points it makes
    assert same["relation"] == "refines" and same["other_subjects"] == []
    # of two it refines, the one whose line names what it adds
    both = _ask(world, [a[0], b[0], b[2]], a[:2], [b[0], b[1]] + a[:1])
    assert (both["target"], both["other_subjects"]) == ("n_old1", [])


@pytest.mark.graph
def test_a_refinement_on_another_subject_is_a_lesson_of_its_own(store: Store, world: World):
    a, b = _facts(world, 2)
    topic_a, topic_b = world.facts[a[0]].topic, world.facts[b[0]].topic
    old = world.lesson(a[:2])
    target = Node(id="n_target01", title=old.title, gist=old.gist, body=old.body, family=topic_a)
    store.write([target])
    new = world.lesson([a[0], b[0]], verbose=True)
    minted = Node(title=new.title, gist=new.gist, body=new.body, family=new.family,
                  provisional=["family"])  # fmt: skip  # the model's choice, as a reflection's
    j = for_store(store, backend=SimulatedBackend(world))

    done = consolidate(store, j, minted, source="reflector")

    assert (done.relation, done.target, done.apart) == ("refines", "n_target01", [topic_b])
    assert done.lesson is not None and done.ids == [done.lesson.id]
    fresh = Store.open()
    kept = fresh.get(done.lesson.id)
    assert kept.status == "active" and kept.family not in ("general", topic_a)
    assert topic_b in world.topics_in(f"{kept.title} {kept.gist}")
    assert fresh.get("n_target01").body == target.body  # nothing folded in
    assert "a lesson of its own" in done.line() and topic_b in done.line()
    (event,) = read_events(store.primary.events, kind="add")
    assert (event["relation"], event["apart"]) == ("refines", [topic_b])


@pytest.mark.graph
def test_kept_apart_after_an_outage_the_stored_lesson_stays_active(store: Store):
    store.save(lesson("n_old00001", "Retry idempotent remote calls.", family="http"))
    j, _b = judge(store, scope=[BackendUnavailable("scripted", "down")])
    kept = capture(store, j, Store.draft("Retry remote calls; logs rotate daily."),
                   source="session-end").ids[0]  # fmt: skip
    answer = reconciled("refines", "n_old00001", detail="Logs rotate daily.")
    j, _b = judge(
        store,
        scope=[{"scope": "project", "reason": "this repository's"}],
        related=[related(matches=("n_old00001",))],
        reconcile=[{**answer, "other_subjects": ["logs"]}],
    )
    (done,) = reconcile_pending(store, judge=j)
    assert (done.relation, done.apart, done.ids) == ("refines", ["logs"], [kept])
    fresh = Store.open()
    assert fresh.get(kept).status == "active" and fresh.get(kept).provisional == []
    assert "Logs rotate daily." not in fresh.get("n_old00001").body
    assert {r["id"] for r in fresh.read("apexes", scope="")} == {"n_old00001", kept}
