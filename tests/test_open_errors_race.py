"""A broken lesson stays reported when another process syncs between this one's scan and
its open: the scan found the files as the graph now holds them, so the open takes the
graph's record of broken files, not the scan's (which was made before the other process
read the broken file). Found by review: the list went empty and stayed empty, so `rose
doctor` and `rose status` no longer named the broken file."""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.store import health, opened
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def test_a_sync_between_scan_and_open_keeps_the_broken_file_reported(store: Store):
    store.add("Retry flaky network calls with backoff.", family="net")
    store.add("Pin the graph engine's version.", family="deps")
    broken = next(store.primary.nodes.rglob("*.md"))
    broken.write_text("---\n: [broken\n---\nbody\n", encoding="utf-8")
    root = store.primary.root
    late = Store(root, None)
    known, _ = opened.unchanged(late)  # this process scans; it has not opened the database yet
    assert known is not None and known.errors == []  # the scan reads no file's text
    with Store(root, None).graph() as first:  # another process syncs first
        first.q("lesson_id_list")
    stack, g, _ = late._synced(late.lock_timeout_s, False, known)  # then this one opens
    with stack:
        late._refresh_view(g)
        opened.remember(late)
    assert [Path(p) for p, _ in late.last_sync.errors] == [broken]
    later = Store(root, None)
    with later.graph() as g:
        assert [Path(p.path) for p in health.problems(later, g)] == [
            broken
        ]  # and it stays reported
