"""The prompt hook tells whether the recall view is current from the scan kept beside the
database: folders that did not change are not listed again, every lesson file is still
stat'ed, so an edit in place or a new file makes the view stale all the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose.files import scan
from rose.files.nodefile import dump_node
from rose.hooks import main as hooks
from rose.hosts.payload import Root
from rose.models import Node
from rose.store.facade import Store
from tests._calls import counted

pytestmark = pytest.mark.graph


def _roots(store: Store) -> list[Root]:
    return [Root(str(path), scope) for path, scope in store.roots]


@pytest.fixture
def settled(store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A store of two lessons whose folders' listings are kept (the listing of a folder is
    trusted once it is older than `RACY_NS`; here at once)."""
    monkeypatch.setattr(scan, "RACY_NS", 0)
    store.add("How the reports endpoint is tuned.")
    store.add("Feature flags gate every reports change.")
    store.view()
    store.view()  # a write marks its folders unlisted: this open lists and keeps them
    return store


def _a_lesson(store: Store) -> Path:
    return next(store.primary.nodes.rglob("n_*.md"))


def test_an_unchanged_store_is_current_without_listing_a_folder(
    settled: Store, monkeypatch: pytest.MonkeyPatch
):
    lists = counted(monkeypatch, scan, "_list_nodes")
    view, current = hooks._read_view(_roots(settled))
    assert view is not None and view["kept_scan"] == settled.graph_path.name + ".files"
    assert current
    assert lists == []


def test_an_edit_in_place_makes_the_view_stale(settled: Store, monkeypatch: pytest.MonkeyPatch):
    path = _a_lesson(settled)
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    lists = counted(monkeypatch, scan, "_list_nodes")
    assert hooks._read_view(_roots(settled))[1] is False
    assert lists == []  # the folder is as it was: only the file's stat moved


def test_a_new_file_makes_the_view_stale(settled: Store, monkeypatch: pytest.MonkeyPatch):
    path = _a_lesson(settled)
    node = Node(id="n_added000001", family=path.parent.name, title="Pulled", body="A teammate's.")
    path.with_name(f"{node.id}.md").write_text(dump_node(node), encoding="utf-8")
    lists = counted(monkeypatch, scan, "_list_nodes")
    assert hooks._read_view(_roots(settled))[1] is False
    assert lists  # its folder changed: listed again


def test_a_view_that_names_no_kept_scan_lists_every_folder(
    settled: Store, monkeypatch: pytest.MonkeyPatch
):
    path = settled.primary.recall_view
    view = json.loads(path.read_text(encoding="utf-8"))
    view.pop("kept_scan")
    path.write_text(json.dumps(view), encoding="utf-8")
    lists = counted(monkeypatch, scan, "_list_nodes")
    assert hooks._read_view(_roots(settled))[1] is True
    assert lists


def test_a_damaged_kept_scan_is_ignored(settled: Store, monkeypatch: pytest.MonkeyPatch):
    from rose.graph import synced

    synced.listing_path(settled.graph_path).write_bytes(b"\x00not a marshal")
    lists = counted(monkeypatch, scan, "_list_nodes")
    assert hooks._read_view(_roots(settled))[1] is True
    assert lists


def test_a_kept_scan_with_flipped_bits_is_refused_before_it_is_read(
    settled: Store, monkeypatch: pytest.MonkeyPatch
):
    """Damaged bytes can make unmarshalling take seconds and gigabytes: the checksum refuses
    them first, and the hook lists the folders instead."""
    import marshal

    from rose.graph import synced

    path = synced.listing_path(settled.graph_path)
    raw = bytearray(path.read_bytes())
    for i in range(len(raw) - 40, len(raw) - 30):
        raw[i] ^= 0x5A
    path.write_bytes(bytes(raw))
    loads = counted(monkeypatch, marshal, "loads")
    assert scan.read_kept(str(path)) is None
    assert loads == []
    lists = counted(monkeypatch, scan, "_list_nodes")
    assert hooks._read_view(_roots(settled))[1] is True
    assert lists
