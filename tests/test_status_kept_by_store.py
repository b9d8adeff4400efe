"""`rose status` of one store shows that store's graph server only, never another store's.
Its lesson figure counts the servable lessons (active, disputed) beside the total, archived
and superseded included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose import config
from rose.cli import app
from rose.graph import engine, server
from rose.inspect.status import graph_server, status
from rose.store.facade import Store
from tests._kept import own_folder, wait


@pytest.fixture
def other(tmp_path: Path) -> Path:
    """A second project with a store of its own."""
    root = tmp_path / "other"
    root.mkdir()
    Store.init(root)
    return root


@pytest.mark.graph
def test_a_store_shows_its_own_graph_server_and_never_another_stores(
    store: Store, other: Path, monkeypatch
):
    with own_folder(monkeypatch, "rs-", server.stop_all):
        config.set_override(Store.open(other).primary.config, "graph.keep_open_s", "0")
        store.read("level_counts")  # this store's open starts its server
        assert wait(lambda: server.holder_note(store.graph_path, store.engine), 20)
        mine = status(store)["graph_server"]
        assert mine is not None and mine["path"] == str(store.graph_path)

        theirs = Store.open(other)
        assert status(theirs)["graph_server"] is None
        monkeypatch.chdir(other)
        assert "graph database open" not in CliRunner().invoke(app, ["status"]).output

        # a holder note that names the first store's server is not taken for this store's
        note = engine.holder_file(theirs.graph_path)
        note.write_text(engine.holder_file(store.graph_path).read_text())
        try:
            assert server.status(theirs.graph_path) is not None  # the server does answer
            assert graph_server(theirs.graph_path) is None
        finally:
            note.unlink()
        assert server.status_all() and all(
            os.path.realpath(s["path"]) == os.path.realpath(store.graph_path)
            for s in server.status_all()
        )


@pytest.mark.graph
def test_lessons_counts_the_servable_beside_the_total(store: Store):
    nodes = [store.add(f"Lesson number {i} about the build.", family="build") for i in range(5)]
    for node, state in zip(nodes[1:], ("disputed", "archived", "superseded"), strict=False):
        node.status = state
        store.write([node])
    shown = status(store)
    assert (shown["active_lessons"], shown["lessons"]) == (3, 5)
    text = CliRunner().invoke(app, ["status"]).output
    assert "lessons    3 active (5 in all) in 1 families: build (5)" in text
