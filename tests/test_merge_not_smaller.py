"""A merged parent that is not smaller than its children together is refused.

Locks in: the prompt states the budget (one token fewer than the children's bodies
together); a parent as long as the children together, or longer, is refused before any
replay, with the sizes in the reason; nothing is written (the children stay the apexes);
the refusal is a `merge` event, so the group waits for a new co-use before another try.
"""

from __future__ import annotations

import pytest

from rose import tokens
from rose.events import read_events
from rose.judge.calls import Judge
from rose.loop.abstraction import merge as mg
from rose.model.scripted import ScriptedBackend
from rose.store import dag
from rose.store.facade import Store
from tests._merge import plain


def _answer(body: str, dropped: list[dict] | None = None) -> dict:
    return {"title": "Both", "gist": "Both lessons.", "family": "plain", "body": body,
            "dropped": dropped or []}  # fmt: skip


@pytest.mark.parametrize("extra", [0, 7])
def test_a_parent_not_smaller_than_its_children_is_refused(project, extra: int):
    a, b = plain(project, 2)
    store = Store.open(project)
    together = tokens.count(a.body) + tokens.count(b.body)
    body = f"{a.body} {b.body}" + " Mind this." * extra
    assert tokens.count(body) >= together
    backend = ScriptedBackend({"merge": [_answer(body, [{"claim": "x", "kind": "other",
                                                         "holder": a.id}])]})  # fmt: skip
    judge = Judge(backend, cache_path=None, events_path=store.primary.events)
    (attempt,) = mg.merge_due(store, judge=judge, prober=lambda lesson, prompt: "unused")
    assert attempt.result == "rejected" and attempt.replays == []
    assert attempt.reason.startswith("not smaller than its children")
    assert f"{together} for them together" in attempt.reason
    assert [r.call for r in backend.requests] == ["merge"]  # no replay was asked for
    assert f"<budget>{together - 1} tokens</budget>" in backend.requests[0].prompt
    assert sorted(r["id"] for r in dag.apexes(store)) == [a.id, b.id]
    assert store.get(a.id).status == "active" and store.get(a.id).parents == []
    (event,) = read_events(store.primary.events, kind="merge")
    assert event["attempted"] and event["result"] == "rejected" and event["co_uses"] == 3
    assert "no new co-use" in mg.candidates(store)[0].reason
