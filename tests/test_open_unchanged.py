"""An open with nothing changed needs no database, and still sees every change.

Locks in: `Store.graph()` compares the files with the record the last holder of the database
left beside it (`rose.graph.synced`) and opens the database only when a statement is run, or
when something changed; a sync after an edit reads the rows of the changed files only (from
the kept file states) and falls back to every row when those are missing or broken. Every
change is still seen: a hand edit that keeps the file's size and whole-second mtime, a lesson
written by another store, a deleted database or recall view, a write journal left by a dead
writer, and an unfinished log (a close no longer checkpoints) that a read-only open replays.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rose.graph import engine, synced
from rose.models import Node
from rose.store import facade
from rose.store.facade import Store

pytestmark = pytest.mark.graph


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every database the store opens, in order."""
    seen: list[Path] = []
    real = facade.open_graph

    def counting(path, *args, **kwargs):
        seen.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(facade, "open_graph", counting)
    return seen


@pytest.fixture
def two(store: Store) -> Store:
    store.add("Retry flaky network calls with backoff.", family="net")
    store.add("Pin the graph engine's version.", family="deps")
    return store


def _titles(store: Store) -> list[str]:
    return sorted(r["title"] for r in store.read("lessons_all"))


def test_an_open_with_nothing_changed_opens_no_database(two: Store, opens: list[Path]):
    with two.graph():
        pass
    assert opens == []
    assert two.view()["apexes"] == 2  # the recall view is there and current
    assert opens == []


def test_the_first_statement_opens_the_database(two: Store, opens: list[Path]):
    with two.graph() as g:
        assert opens == []
        rows = g.q("lessons_all")
        assert len(rows) == 2 and opens == [two.graph_path]
        assert len(g.q("lesson_id_list")) == 2 and len(opens) == 1  # once


def test_a_write_through_a_lazily_opened_graph_is_indexed(two: Store, opens: list[Path]):
    two.save(Node(id="n_third00001", family="net", title="Third", body="Time out after 5 s."))
    assert len(opens) == 1
    assert "Third" in _titles(Store(two.primary.root, None))  # another store sees it


def test_a_hand_edit_keeping_size_and_whole_second_mtime_is_seen(two: Store, opens: list[Path]):
    path = next(two.primary.nodes.rglob("*.md"))
    text = path.read_text(encoding="utf-8")
    before = path.stat()
    title = next(ln for ln in text.splitlines() if ln.startswith("title:"))
    edited = title[:-1] + ("X" if title[-1] != "X" else "Y")  # the same length
    path.write_text(text.replace(title, edited), encoding="utf-8")
    # The same second as before, a different nanosecond: a quick editor on a coarse clock.
    second = before.st_mtime_ns // 10**9 * 10**9
    mtime = second + (before.st_mtime_ns + 1) % 10**9
    os.utime(path, ns=(before.st_atime_ns, mtime))
    assert path.stat().st_size == before.st_size
    assert edited.split(":", 1)[1].strip().strip("'\"") in _titles(two)
    assert opens == [two.graph_path]  # it had to look


def test_a_lesson_written_by_another_store_is_seen(two: Store, opens: list[Path]):
    other = Store(two.primary.root, None)
    other.save(Node(id="n_other00001", family="deps", title="From elsewhere", body="Hello."))
    assert "From elsewhere" in _titles(two)


def test_a_deleted_database_is_rebuilt_on_the_next_open(two: Store):
    engine.remove_database(two.graph_path)
    assert len(_titles(two)) == 2
    with two.graph():
        pass  # and the record written for the new one holds
    assert synced.read(two.graph_path)["db"] == synced.identity(two.graph_path)


def test_a_deleted_recall_view_is_rebuilt(two: Store):
    two.primary.recall_view.unlink()
    with two.graph():
        pass
    assert two.primary.recall_view.exists()


def test_a_write_journal_left_behind_is_finished_by_the_next_open(two: Store):
    from rose.files import journal
    from rose.files.nodefile import dump_node

    node = Node(id="n_journal001", family="net", title="Journalled", body="Half written.")
    target = two.primary.node_path(node.family, node.id)
    unit = {"files": [[str(target), dump_node(node)]], "remove": []}  # its writer died
    (two.primary.root / journal.NAME).write_text(json.dumps(unit), encoding="utf-8")
    assert "Journalled" in _titles(two)
    assert target.exists() and not (two.primary.root / journal.NAME).exists()


@pytest.mark.parametrize("kept", ["missing", "garbage", "another state"])
def test_an_edit_is_synced_without_the_kept_file_states(two: Store, kept: str):
    states = two.graph_path.with_name(two.graph_path.name + ".files")
    assert states.exists()
    if kept == "missing":
        states.unlink()
    elif kept == "garbage":
        states.write_bytes(b"\x00not marshal")
    else:
        from rose.files.scan import Survey

        synced.write_listing(two.graph_path, "0" * 32, Survey())
    path = next(two.primary.nodes.rglob("*.md"))
    path.write_text(path.read_text(encoding="utf-8").replace("title:", "title: New", 1))
    got = _titles(two)
    assert len(got) == 2 and any(t.startswith("New") for t in got)
    assert two.last_sync.read == 1  # only the edited file was read again


def test_a_read_only_open_sees_writes_left_in_the_log(two: Store):
    """A close leaves the log unfolded (no checkpoint): other opens replay it."""
    two.save(Node(id="n_logged0001", family="net", title="Logged", body="In the log."))
    rows = two.query("MATCH (l:Lesson {id: 'n_logged0001'}) RETURN l.title AS title")
    assert rows == [[{"title": "Logged"}]]


def test_the_log_is_folded_in_once_past_its_limit(two: Store, monkeypatch: pytest.MonkeyPatch):
    wal = two.graph_path.with_name(two.graph_path.name + ".wal")
    two.save(Node(id="n_small00001", family="net", title="Small", body="x"))
    assert wal.exists() and wal.stat().st_size > 0  # the close left it
    monkeypatch.setattr(engine, "WAL_LIMIT", 1)
    two.save(Node(id="n_small00002", family="net", title="Smaller", body="y"))
    assert not wal.exists() or wal.stat().st_size == 0  # a commit past the limit checkpointed
    assert {"Small", "Smaller"} <= set(_titles(two))
