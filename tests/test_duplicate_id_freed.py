"""A lesson file refused as a duplicate id is indexed once the file holding that id is gone.

Fails today (and at 16b42d3, before the day's changes): the copy's error is kept as the
graph's record and the copy is never read again, so the lesson is missing from the graph
(and the copy reported broken) until `rose reindex`, which finds it at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.files.nodefile import dump_node
from rose.models import Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph

_IDS = "MATCH (l:Lesson) RETURN l.id AS id, l.path AS path"


def _original_and_copy(store: Store) -> tuple[Node, Path, Path]:
    """A lesson synced in family `fa`, then a copy of it under the same id in `fb`, synced
    (and refused as a duplicate)."""
    node = Node(id="n_dup0000001", family="fa", title="A", body="first")
    first = store.primary.node_path("fa", node.id)
    first.parent.mkdir(parents=True)
    first.write_text(dump_node(node), encoding="utf-8")
    store.view()
    copy = store.primary.node_path("fb", node.id)
    copy.parent.mkdir(parents=True)
    copy.write_text(dump_node(node.model_copy(update={"family": "fb"})), encoding="utf-8")
    store.view()
    return node, first, copy


@pytest.mark.parametrize("kept", [True, False])
def test_a_duplicate_is_indexed_when_the_original_is_removed(store: Store, kept: bool):
    """`kept`: what changed is found from the scan kept beside the database, or (without it)
    from every file's row."""
    from rose.graph import synced

    node, first, copy = _original_and_copy(store)
    first.unlink()
    if not kept:
        synced.forget(store.graph_path)
    incremental = store.query(_IDS)[0]
    errors = store.last_sync.errors
    store.reindex()
    assert store.query(_IDS)[0] == [{"id": node.id, "path": str(copy)}]
    assert (incremental, errors) == (store.query(_IDS)[0], [])


def test_a_duplicate_stays_refused_while_the_original_holds_the_id(store: Store):
    node, first, copy = _original_and_copy(store)
    first.write_text(dump_node(node.model_copy(update={"body": "edited"})), encoding="utf-8")
    assert store.query(_IDS)[0] == [{"id": node.id, "path": str(first)}]
    assert [p for p, _ in store.last_sync.errors] == [str(copy)]
