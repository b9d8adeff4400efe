"""A judge outage never costs a lesson, and a later job reconciles it.

Locks in: when the scope call, the related walk or the reconcile call cannot be answered
(unavailable, timed out, an answer that does not fit), the lesson is stored as it came,
marked `reconcile` in `provisional` (title and gist still provisional, and its scope when
no one judged it), and the reconcile job is queued without starting a runner;
`reconcile_pending` later reconciles it (here a duplicate: superseded, no longer pending,
counted); the real job, run by the job runner against the simulated world, judges its
scope (global: moved there) and finds the contradiction it holds; and a job whose judge is
still down fails, leaving the lesson waiting.
"""

from __future__ import annotations

import json

import pytest

from rose import config
from rose.errors import BackendTimeout, BackendUnavailable
from rose.events import read_events
from rose.inspect.status import status
from rose.jobs import bodies
from rose.jobs import queue as jobs
from rose.jobs.capture import capture
from rose.loop.reflection.consolidate import pending, reconcile_pending
from rose.model.registry import simulated_model
from rose.sim import World
from rose.sim.examples import conflict_pair
from rose.store.facade import Store
from tests._reconcile import judge, lesson, reconciled, related

pytestmark = pytest.mark.graph

BODY = "Retry idempotent remote calls. S3 needs the body parsed before a retry."


def _queued(store: Store) -> list[dict]:
    return [r for r in jobs.jobs(store.primary) if r["kind"] == "reconcile"]


def test_an_unavailable_judge_keeps_the_lesson_marked_and_queues_the_job(store: Store):
    j, _b = judge(store, scope=[BackendUnavailable("scripted", "no model here")])
    done = capture(store, j, Store.draft(BODY), source="user")
    assert done.relation == "unreconciled" and "no model here" in done.why
    node = Store.open().get(done.ids[0])
    assert node.provisional == ["title", "gist", "scope", "reconcile"]
    assert (node.body, node.scope) == (BODY, "project")
    assert pending(store) == [node.id]
    (rec,) = _queued(store)
    assert (done.job, rec["state"], rec["pid"]) == ("queued", "queued", None)  # no runner yet
    assert json.loads((store.primary.jobs / f"{rec['id']}.payload").read_text()) == {
        "ids": [node.id]
    }
    (event,) = read_events(store.primary.events, kind="add")
    assert (event["source"], event["relation"], event["id"]) == ("user", "unreconciled", node.id)


@pytest.mark.parametrize("failure", ["timeout", "invalid"])
def test_a_failure_past_the_scope_call_keeps_it_too(store: Store, failure: str):
    store.save(lesson("n_old00001", "Retry with backoff."))
    answer = (
        BackendTimeout("scripted", 20)
        if failure == "timeout"
        else reconciled("contradicts", "n_old00001")  # a contradiction with no question
    )
    j, _b = judge(store, related=[related(matches=("n_old00001",))], reconcile=[answer])
    done = capture(
        store, j, Store.draft(BODY, title="S3 retries"), source="reflector", scope="project"
    )
    assert done.relation == "unreconciled"
    node = Store.open().get(done.ids[0])
    assert (node.scope, node.provisional) == ("project", ["gist", "reconcile"])
    assert Store.open().get("n_old00001").status == "active"  # nothing half applied


def test_the_lesson_is_reconciled_later(store: Store):
    store.save(lesson("n_old00001", "Retry idempotent remote calls.", family="http"))
    j, _b = judge(store, scope=[BackendUnavailable("scripted", "down")])
    kept = capture(store, j, Store.draft(BODY), source="session-end").ids[0]
    j, backend = judge(
        store,
        scope=[{"scope": "project", "reason": "this repository's"}],
        related=[related(matches=("n_old00001",))],
        reconcile=[reconciled("duplicate", "n_old00001")],
    )
    (done,) = reconcile_pending(store, judge=j)
    assert (done.relation, done.target) == ("duplicate", "n_old00001")
    related_prompt = next(r.prompt for r in backend.requests if r.call == "related")
    assert f'<lesson id="{kept}">' in related_prompt and f"[{kept}]" not in related_prompt
    node = Store.open().get(kept)
    assert (node.status, node.provisional) == ("superseded", [])
    assert pending(store) == []
    assert {r["id"] for r in store.read("apexes", scope="")} == {"n_old00001"}
    captured = status(Store.open())["captured"]
    assert captured["reconciled_later"] == 1 and captured["duplicates"] == 1
    assert captured["by_source"]["session-end"] == 1 and captured["unreconciled"] == 0


def test_the_reconcile_job_runs_and_finds_the_contradiction(store: Store):
    world = World.generate(4, size="small")
    config.set_override(store.primary.config, "agent", "simulated")
    config.set_override(store.primary.config, "model", simulated_model(seed=4, size="small"))
    true, stale = conflict_pair(world)
    old = world.lesson([true])
    assert world.topics[world.facts[true].topic].scope == "global"
    Store.init(scope="global").save(
        lesson("n_true0001", old.body, title=old.title, gist=old.gist, family=old.family),
        scope="global",
    )
    j, _b = judge(store, scope=[BackendUnavailable("scripted", "down")])
    new = world.lesson([stale], verbose=True)
    kept = capture(store, j, Store.draft(new.body), source="user").ids[0]
    (rec,) = _queued(store)
    assert jobs.main(["drain", str(store.primary.root), "project"]) == 0
    assert jobs.jobs(store.primary)[0]["state"] == "done", jobs.jobs(store.primary)[0]
    fresh = Store.open()
    node = fresh.get(kept)
    assert (node.status, node.disputes, node.provisional) == ("disputed", ["n_true0001"], [])
    assert node.scope == "global"  # the judge said so: moved out of the project store
    assert node.title == f"{world.facts[stale].topic.capitalize()} notes"  # reconcile wrote it
    assert fresh.get("n_true0001").disputes == [kept]


def test_a_job_whose_judge_is_still_down_fails_and_the_lesson_waits(store: Store):
    j, _b = judge(store, scope=[BackendUnavailable("scripted", "down")])
    kept = capture(store, j, Store.draft(BODY), source="user").ids[0]
    (rec,) = _queued(store)
    job = jobs.JobContext(store.primary, rec, {"ids": [kept]})
    with pytest.raises(BackendUnavailable):  # agent claude: no model CLI under the tests
        bodies.reconcile(job)
    assert pending(store) == [kept]
