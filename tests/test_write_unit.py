"""Several lessons and episodes written as one unit: one lock, one sync, all or none.

Locks in: a new level of a lesson took two saves (the new node, then the original's
`parents`), two locks and two syncs, and a crash between them left the graph half
changed. Now one write takes them all, links may point within it, and a write that dies
half way is finished from its journal by the next open.
"""

from __future__ import annotations

import pytest

from rose.files import journal
from rose.graph import sync as sync_mod
from rose.models import Claim, Episode, Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def test_a_new_level_and_its_source_in_one_write(store: Store, monkeypatch: pytest.MonkeyPatch):
    base = store.add("Retry idempotent calls: 100ms, 400ms, 1.6s, with jitter.", family="net")
    top = Node(
        title="Retry briefly",
        body="Retry idempotent calls with backoff.",
        family="net",
        level=1,
        derived_from=[base.id],
        dropped=[Claim(claim="the delays are 100ms, 400ms, 1.6s", holder=base.id)],
    )
    base.parents = [top.id]
    syncs = []
    real = sync_mod.sync
    monkeypatch.setattr("rose.store.facade.sync", lambda *a, **k: syncs.append(1) or real(*a, **k))
    ep = Episode(outcome="success", used=[top.id])
    store.write([top, base], [ep])
    assert len(syncs) == 2  # the open's own, and the one after the files: not one per file
    edges = store.query("MATCH (a:Lesson)-[:DERIVED_FROM]->(b:Lesson) RETURN a.id AS a, b.id AS b")
    assert edges == [[{"a": top.id, "b": base.id}]]
    assert store.get(top.id).stats.successes == 1


def test_a_cycle_within_one_write_is_refused(store: Store):
    a = Node(id="n_aaaa0001", title="A", body="a", family="x")
    b = Node(id="n_bbbb0001", title="B", body="b", family="x", derived_from=["n_aaaa0001"])
    a.derived_from = ["n_bbbb0001"]
    with pytest.raises(Exception, match="cycle"):
        store.write([a, b])
    assert not list(store.primary.nodes.rglob("*.md"))  # nothing of it was written


def test_a_write_that_dies_half_way_is_finished_by_the_next_open(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    a = Node(id="n_half0001", title="First", body="one", family="x")
    b = Node(id="n_half0002", title="Second", body="two", family="x", parents=["n_half0001"])
    calls = []
    real = journal.write_text

    def dies_after_one(path, text):
        if calls:
            raise KeyboardInterrupt  # the process is killed between two files
        calls.append(path)
        real(path, text)

    with monkeypatch.context() as m:
        m.setattr(journal, "write_text", dies_after_one)
        with pytest.raises(KeyboardInterrupt):
            store.write([a, b])
    assert (store.primary.root / journal.NAME).exists()
    assert len(list(store.primary.nodes.rglob("*.md"))) == 1
    got = Store.open(store.primary.root.parent).get("n_half0002")  # the next process
    assert got.title == "Second"
    assert not (store.primary.root / journal.NAME).exists()
    edges = store.query("MATCH (a:Lesson)-[:DERIVED_FROM]->(b:Lesson) RETURN a.id AS a, b.id AS b")
    assert edges == [[{"a": "n_half0001", "b": "n_half0002"}]]
