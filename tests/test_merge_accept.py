"""Two lessons used together earn a shared parent that passes replay, on the simulated world.

Locks in: an accepted merge is a new lesson of origin `merge`, one level above the highest
child, derived from both; each child is superseded (kept, not served) and names the parent
among its parents, so the parent is the only apex; it is smaller than the children together
and every claim it leaves out names the child that holds it, so the apex's delta manifest
reaches their detail; the attempt is a `merge` event, the demo's count of merges reads it,
and a merged group is not attempted again; the `merge` job attempts what is due (here a
parent the simulated model cannot write from prose it has no facts in, refused unreplayed).
"""

from __future__ import annotations

from rose import config
from rose.events import read_events
from rose.jobs import bodies
from rose.jobs.queue import KINDS, JobContext
from rose.loop.abstraction import merge as mg
from rose.store import dag
from rose.store.facade import Store
from tests._merge import judge, pair, plain, prober


def test_a_pair_used_together_is_merged(project):
    p = pair(project, seed=0)
    j = judge(p)
    (attempt,) = mg.merge_due(p.store, judge=j, prober=prober(j))
    assert attempt.result == "accepted", attempt.reason
    assert attempt.replays and all(r.passed for r in attempt.replays)
    assert attempt.candidate_tokens < attempt.tokens
    parent, a, b = (p.store.get(i) for i in (attempt.new, p.a.id, p.b.id))
    assert (parent.origin, parent.level) == ("merge", 1)
    assert sorted(parent.derived_from) == sorted([a.id, b.id])
    for child in (a, b):
        assert child.status == "superseded" and child.parents == [parent.id]
    assert parent.dropped and {c.holder for c in parent.dropped} <= {a.id, b.id}
    assert [r["id"] for r in dag.apexes(p.store)] == [parent.id]
    holders = {r["holder"] for r in dag.delta_manifest(p.store, parent.id)}
    assert holders <= {a.id, b.id} and holders
    assert mg.merge_summary(p.store) == {"accepted": 1, "rejected": 0, "demoted": 0}
    assert mg.candidates(p.store) == []  # the children are no longer apexes
    assert mg.merge_due(p.store, judge=j, prober=prober(j)) == []


def test_the_job_attempts_what_is_due(project):
    a, b = plain(project, 2, co_uses=3)
    store = Store.open(project)
    config.set_override(store.primary.config, "agent", "simulated")
    assert KINDS["merge"].target is bodies.merge
    bodies.merge(JobContext(store.primary, {"attempt": 1}, {"session": "s"}))
    (event,) = read_events(store.primary.events, kind="merge")
    assert event["group"] == [a.id, b.id] and event["attempted"]
    assert event["result"] == "rejected" and "under-reported" in event["reason"]
