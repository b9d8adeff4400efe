"""Broken lesson files are named by path and reason, and every other lesson keeps working;
the graph follows hand edits and deletions; deleting the database loses nothing."""

from __future__ import annotations

import shutil

import pytest

from rose.errors import CycleError, LessonNotFound
from rose.files.nodefile import dump_node
from rose.inspect.status import status
from rose.models import Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def _problems(store: Store) -> dict[str, str]:
    return {p["path"]: p["reason"] for p in status(store)["health"]["problems"]}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\nid: [unclosed\n---\nbody\n", "not valid YAML"),
        ("---\ntitle: no id here\n---\nbody\n", "no id"),
        ("just text, no front matter\n", "no YAML front matter"),
        ("---\nid: n_aaaabbbb\ntitle: x\nlevel: -3\n---\n", "level"),
    ],
)
def test_broken_file_is_named_and_skipped(store: Store, text: str, reason: str):
    good = store.add("A good lesson.")
    bad = store.primary.nodes / "general" / "n_aaaabbbb.md"
    bad.write_text(text, encoding="utf-8")
    problems = _problems(store)
    assert reason in problems[str(bad)]
    assert [a["id"] for a in status(store)["apexes"]] == [good.id]


def test_missing_parent_and_cycle_are_reported_by_path(store: Store):
    a = store.add("Lesson a.")
    b = store.add("Lesson b.")
    # Hand edits: a names a parent that does not exist; b and c derive from each other.
    a.parents = ["n_doesnotexist"]
    store.primary.node_path(a.family, a.id).write_text(dump_node(a), encoding="utf-8")
    c = Node(title="c", level=1, derived_from=[b.id])
    b.derived_from = [c.id]
    for n in (b, c):
        store.primary.node_path(n.family, n.id).write_text(dump_node(n), encoding="utf-8")
    problems = _problems(store)
    path_a = str(store.primary.node_path(a.family, a.id))
    assert "n_doesnotexist" in problems[path_a]
    assert any("cycle" in r for r in problems.values())


def test_writes_refuse_cycles_and_unknown_links(store: Store):
    a = store.add("Lesson a.")
    b = store.save(Node(title="b", level=1, derived_from=[a.id]))
    a.derived_from = [b.id]
    with pytest.raises(CycleError):
        store.save(a)
    with pytest.raises(LessonNotFound):
        store.save(Node(title="c", derived_from=["n_nosuchlesson"]))
    # Nothing was written by the refused saves.
    assert store.get(a.id).derived_from == []


def test_hand_edit_and_delete_are_picked_up(store: Store):
    a = store.add("Original text.")
    path = store.primary.node_path(a.family, a.id)
    path.write_text(path.read_text().replace("Original text.", "Edited by hand."))
    assert store.get(a.id).body == "Edited by hand."
    path.unlink()
    assert status(store)["lessons"] == 0


def test_unchanged_files_are_not_reread(store: Store):
    for i in range(3):
        store.add(f"Lesson {i}.")
    with store.graph():
        pass
    with store.graph():
        assert store.last_sync.read == 0
    store.add("One more.")
    with store.graph():
        assert store.last_sync.read == 0  # the write already indexed it


def test_deleting_the_database_loses_nothing(store: Store):
    a = store.add("Lesson a.", family="one")
    store.save(Node(title="b", level=1, derived_from=[a.id], family="one"))
    before = status(store)
    path = store.graph_path
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    after = status(Store.open())
    for key in ("lessons", "families", "levels", "apexes", "health"):
        assert after[key] == before[key]


def test_reindex_matches_incremental_state(store: Store):
    a = store.add("Lesson a.")
    store.save(Node(title="b", level=1, derived_from=[a.id]))
    before = status(store)
    report = store.reindex()
    assert report.full and report.read == 2
    assert status(store)["apexes"] == before["apexes"]


def test_database_from_another_schema_is_rebuilt(store: Store):
    from rose.graph.engine import open_graph

    a = store.add("Survives a schema change.")
    with open_graph(store.graph_path, store.engine) as g:
        g.q("meta_set", key="schema", value="an-older-schema")
    assert store.get(a.id).body == "Survives a schema change."
