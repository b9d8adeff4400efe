"""A lesson can be compressed vertically and merged sideways, and keeps both parent edges.

Locks in: a compression's use counts for the compressed form, which is then merged with the
lesson it was used beside: the original still names its compression as its parent, the
compression names the merge, and the merge's delta manifest reaches the original's dropped
detail through both; a child that already has a parent (a compression no longer served)
keeps it beside the merge's; and a merged child, superseded, does not turn back into an
apex when the merge is itself compressed.
"""

from __future__ import annotations

from rose.judge.calls import Judge
from rose.loop.abstraction import compress as c
from rose.loop.abstraction import merge as mg
from rose.model.scripted import ScriptedBackend
from rose.models import Node
from rose.store import dag
from rose.store.facade import Store
from tests._merge import judge, pair, plain, prober


def test_compressed_then_merged_keeps_both_edges(project):
    p = pair(project, seed=0, verbose=True)
    j = judge(p)
    squeezed = c.compress(p.store, p.a.id, judge=j, prober=prober(j))
    assert squeezed.result == "accepted", squeezed.reason
    (merged,) = mg.merge_due(p.store, judge=j, prober=prober(j))
    assert merged.result == "accepted", merged.reason
    assert sorted(merged.group) == sorted([squeezed.new, p.b.id])
    original, short, top = (p.store.get(i) for i in (p.a.id, squeezed.new, merged.new))
    assert original.parents == [short.id] and short.derived_from == [original.id]
    assert short.parents == [top.id] and short.origin == "compression"
    assert (top.origin, top.level) == ("merge", 2)
    assert {r["id"] for r in dag.subtree(p.store, top.id)} == {top.id, short.id, original.id,
                                                               p.b.id}  # fmt: skip
    holders = {r["holder"] for r in dag.delta_manifest(p.store, top.id)}
    assert original.id in holders  # what the compression dropped is still reachable
    assert [r["id"] for r in dag.apexes(p.store)] == [top.id]


def test_a_child_keeps_the_parent_it_already_had(project):
    a, b = plain(project, 2)
    store = Store.open(project)
    old = Node(id="n_oldshort", title="A, shorter", body="Retry idempotent calls.", level=1,
               origin="compression", derived_from=[a.id], family="plain",
               status="demoted")  # fmt: skip
    a.parents = [old.id]
    store.write([old, a])
    assert sorted(r["id"] for r in dag.apexes(store)) == [a.id, b.id]  # nothing served above a
    claims = [{"claim": "A timeout is not proof the call failed.", "kind": "caveat",
               "holder": a.id}]  # fmt: skip
    backend = ScriptedBackend({"merge": [{"title": "Calls", "gist": "Calls.", "family": "plain",
                                          "body": "Retry idempotent calls; parse bodies.",
                                          "dropped": claims}]})  # fmt: skip
    for _ in range(4):
        backend.push("replay_probe", {"approach": "retry and parse"})
        backend.push("replay_judge", {"verdict": "pass", "reason": "same"})
    judge_ = Judge(backend, cache_path=None, events_path=store.primary.events)
    (attempt,) = mg.merge_due(store, judge=judge_, prober=lambda lesson, prompt: "retry")
    assert attempt.result == "accepted", attempt.reason
    assert store.get(a.id).parents == [old.id, attempt.new]
    assert store.get(b.id).parents == [attempt.new]


def test_merged_children_stay_below_a_compressed_merge(project):
    a, b = plain(project, 2)
    store = Store.open(project)
    top = Node(id="n_mergedab", title="Both", body="Retry and parse.", level=1,
               origin="merge", derived_from=[a.id, b.id], family="plain")  # fmt: skip
    for child in (a, b):
        child.status, child.parents = "superseded", [top.id]
    store.write([top, a, b])
    shorter = Node(id="n_mergedab2", title="Both", body="Retry; parse.", level=2,
                   origin="compression", derived_from=[top.id], family="plain")  # fmt: skip
    top.status, top.parents = "superseded", [shorter.id]
    store.write([shorter, top])
    assert [r["id"] for r in dag.apexes(store)] == [shorter.id]
    assert mg.candidates(store) == []
