"""A merged parent is replayed over the union of its children's regression sets.

Locks in: each child's own episodes (those it was used on alone, and those used together)
are replayed against that child's probe as the reference, so an episode of both children is
replayed once for each; with room for all of them, every one is; with `compress.sample`
smaller than the number of children, each child still gets one replay.
"""

from __future__ import annotations

from rose import config
from rose.loop.abstraction import merge as mg
from rose.loop.abstraction import replay as _replay
from rose.store import dag
from rose.store.facade import Store
from tests._merge import judge, pair, prober


def test_every_episode_of_both_children_is_replayed_against_that_child(project):
    p = pair(project, seed=2)
    config.set_override(p.store.primary.config, "compress.sample", "50")
    config.set_override(p.store.primary.config, "compress.held_out", "0")
    store = Store.open(project)
    j = judge(p)
    (attempt,) = mg.merge_due(store, judge=j, prober=prober(j), dry_run=True)
    own = {c.id: _replay.cases(dag.regression_set(store, c.id)) for c in (p.a, p.b)}
    assert {k: sorted(v) for k, v in attempt.replayed.items()} == {
        k: sorted(c.episode for c in cases) for k, cases in own.items()
    }
    both = {e.id for e in p.together}
    assert both <= set(attempt.replayed[p.a.id]) & set(attempt.replayed[p.b.id])
    assert set(attempt.replayed[p.a.id]) - both and set(attempt.replayed[p.b.id]) - both
    assert len(attempt.replays) == sum(map(len, own.values()))
    probes = [prompt for call, prompt in j.backend.requests if call == "replay_probe"]
    for child, cases in own.items():  # the reference: the child's own probe, on each prompt
        for case in cases:
            assert any(f'<lesson id="{child}">' in q and case.prompt in q for q in probes)


def test_each_child_is_replayed_even_when_the_sample_is_smaller(project):
    p = pair(project, seed=2)
    config.set_override(p.store.primary.config, "compress.sample", "1")
    j = judge(p)
    (attempt,) = mg.merge_due(Store.open(project), judge=j, prober=prober(j), dry_run=True)
    assert {k: len(v) for k, v in attempt.replayed.items()} == {p.a.id: 1, p.b.id: 1}
