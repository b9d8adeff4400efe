"""Rules reach recall's selection questions, capped by routing.max_tokens, worst record out first.

Locks in: the relevance walk's prompt carries the rules (in its <rules> section) and never
as candidates; the episode of that prompt names the rules given; each rule's record is
counted from those episodes (selections, served, used); when the cap binds, the rule
whose selections served the most that went unused is the one left out; with everything
fitting the budget no rule is read and no question asked; `routing.enabled: false` gives
none.
"""

from __future__ import annotations

import pytest

from rose.judge.calls import Judge
from rose.loop.selection import route
from rose.loop.selection.recall import recall
from rose.model.scripted import ScriptedBackend
from rose.models import Episode, Node, RoutingRule

pytestmark = pytest.mark.graph


def _big_store(store, n=12):
    body = "Some detail that matters here. " * 60
    store.write(
        [
            Node(id=f"n_big{i:04d}", family=f"f{i}", title=f"T{i}", gist=f"G{i}", body=body)
            for i in range(n)
        ]
    )


def _answer(ids):
    return {"verdicts": [{"id": i, "verdict": "relevant", "reason": "x"} for i in ids]}


def test_rules_reach_the_selection_prompt_and_never_the_candidates(store):
    _big_store(store)
    rule = store.save_rule(RoutingRule(id="r_aaaa0001", when="the task runs tests", then="read f1"))
    backend = ScriptedBackend({"relevance": [_answer([f"n_big{i:04d}" for i in range(12)])]})
    res = recall(store, "run the tests", judge=Judge(backend, cache_path=None, events_path=None))
    (req,) = backend.requests
    rules_part = req.prompt.split("<rules>")[1].split("</rules>")[0]
    cands = req.prompt.split("<candidates>")[1].split("</candidates>")[0]
    assert "when the task runs tests: read f1" in rules_part
    assert "r_aaaa0001" not in cands and "the task runs tests" not in cands
    assert res.rules == [rule.id]
    assert all(not i["id"].startswith("r_") for i in res.chosen)


def test_no_rule_is_read_when_the_store_fits(store):
    store.save(Node(id="n_small001", family="f", title="T", gist="G", body="short"))
    store.save_rule(RoutingRule(id="r_aaaa0001", when="the task runs tests", then="read f"))
    backend = ScriptedBackend()
    res = recall(store, "run the tests", judge=Judge(backend, cache_path=None, events_path=None))
    assert res.rules == [] and backend.requests == [] and res.chosen


def test_the_cap_drops_the_worst_record_first(store):
    _big_store(store, 3)
    good = store.save_rule(RoutingRule(id="r_good0001", when="the task runs tests", then="read f1"))
    bad = store.save_rule(RoutingRule(id="r_badd0001", when="the task is docs", then="read f2"))
    new = store.save_rule(RoutingRule(id="r_newr0001", when="the task deploys", then="read f0"))
    ids = ["n_big0000", "n_big0001", "n_big0002"]
    store.save_episodes(
        [
            Episode(id="e_goodgood01", served=ids[:1], used=ids[:1], rules=[good.id]),
            Episode(id="e_goodgood02", served=ids[:1], used=ids[:1], rules=[good.id, bad.id]),
            Episode(id="e_badbadbad1", served=ids, used=[], rules=[bad.id]),
        ]
    )
    rec = route.records(store)
    assert rec[good.id] == route.Record(selections=2, served=2, used=2)
    assert rec[bad.id] == route.Record(selections=2, served=4, used=1)
    every = route.for_selection(store)
    assert [r.id for r in every] == [good.id, new.id, bad.id]
    cost = sum(len(r.text()) for r in every)  # room for two of the three, not all
    store.config.routing.max_tokens = cost // 4 + 2
    kept = [r.id for r in route.for_selection(store)]
    assert bad.id not in kept and good.id in kept
    store.config.routing.enabled = False
    assert route.for_selection(store) == []
