"""Two reconcile runs on one store at once reconcile each waiting lesson once.

Locks in: `jobs.max_concurrent` lets two reconcile jobs run together; both used to read
the same pending list and reconcile every lesson twice (3 lessons, 6 `reconcile` events,
and a contradiction would add its `disputes` link twice). Runs now take turns on
`jobs/reconcile.lock` and re-read each lesson first, skipping one no longer waiting.
"""

from __future__ import annotations

import multiprocessing
import time

import pytest

from rose.events import read_events
from rose.loop.reflection.consolidate import pending, reconcile_pending
from rose.model.scripted import ScriptedBackend
from rose.store.facade import Store
from tests._reconcile import lesson, related

pytestmark = pytest.mark.graph

IDS = ("n_wait0001", "n_wait0002", "n_wait0003")


class _Slow(ScriptedBackend):
    """Takes a moment per answer, so the two runs overlap."""

    def complete(self, call, prompt, schema, *, timeout_s):  # type: ignore[override]
        time.sleep(0.2)
        return super().complete(call, prompt, schema, timeout_s=timeout_s)


def _run(go) -> None:  # in a process of its own
    from rose.judge.calls import for_store

    store = Store.open()
    judge = for_store(store, backend=_Slow({"related": [related()] * 10}))
    go.wait(30)
    reconcile_pending(store, judge=judge)


def test_two_runs_at_once_reconcile_each_lesson_once(store: Store):
    for i, lid in enumerate(IDS):
        store.save(lesson(lid, f"Waiting lesson {i} says something.", provisional=["reconcile"]))
    assert pending(store) == list(IDS)
    ctx = multiprocessing.get_context("spawn")  # nothing of this process's graph is shared
    go = ctx.Event()
    runs = [ctx.Process(target=_run, args=(go,)) for _ in range(2)]
    for p in runs:
        p.start()
    time.sleep(0.5)
    go.set()
    for p in runs:
        p.join(120)
    assert [p.exitcode for p in runs] == [0, 0]
    events = read_events(store.primary.events, kind="reconcile")
    assert sorted(e["id"] for e in events) == list(IDS)
    assert pending(Store.open()) == []
