"""A writer that finishes while the prompt hook checks the recall view: the hook read the
view just before the writer replaced it, and the files it then scans look newer than that
view. It reads the view again (it was replaced meanwhile) and serves the new one, instead
of taking the slow path to rebuild a view that is already current."""

from __future__ import annotations

import os

import pytest

from rose.hooks import main as hooks
from rose.hosts.payload import Root
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def test_a_view_replaced_during_the_check_is_read_again(store: Store, monkeypatch):
    store.add("Run the migrations before the seeders.")
    store.view()
    roots = [Root(str(store.primary.root), "project")]
    real = hooks._current
    calls = []

    def racing(view, roots_):
        calls.append(view.get("stamp"))
        if len(calls) == 1:  # the writer lands now: a new view, by rename
            store.add("Seed the cache after the migrations.")
            store.view()
        return real(view, roots_)

    monkeypatch.setattr(hooks, "_current", racing)
    view, current = hooks._read_view(roots)
    assert current and len(calls) == 2 and calls[0] != calls[1]
    assert any("Seed the cache" in str(item) for item in view["lessons"])


def test_a_view_stale_and_not_replaced_is_read_once(store: Store, monkeypatch):
    lesson = store.add("Run the migrations before the seeders.")
    store.view()
    file = next(store.primary.root.glob(f"nodes/*/{lesson.id}.md"))
    with open(file, "a", encoding="utf-8") as fh:  # changed by hand: the view is stale
        fh.write("\nAlso after a rollback.\n")
    os.utime(file, ns=(1, 1))
    calls = []
    real = hooks._current
    monkeypatch.setattr(hooks, "_current", lambda v, r: calls.append(1) or real(v, r))
    _, current = hooks._read_view([Root(str(store.primary.root), "project")])
    assert not current and len(calls) == 1
