"""`rose status` of one store shows that store's graph server only, never another store's,
and shows the judge's keepers as what they are: processes keyed by
what they run, shared by every store of the user. Its lesson figure counts the servable
lessons (active, disputed) beside the total, archived and superseded included."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rose import config, kept
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


@contextmanager
def fake_kept(kind: str, key: str, reply: dict) -> Iterator[None]:
    """A process of `kind` listening where ROSE looks for one, answering `reply` to status."""
    path = kept.address(kind, key)
    assert path is not None
    listening = kept.listen(path)
    assert listening is not None
    lock, sock = listening
    sock.settimeout(0.05)
    done = threading.Event()

    def answer() -> None:
        while not done.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            with conn:
                kept.read_all(conn)
                conn.sendall(json.dumps(reply).encode())

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        sock.close()
        path.unlink(missing_ok=True)
        lock.close()


def test_keepers_are_shown_as_shared_by_every_store(store: Store, other: Path, monkeypatch):
    keeper = {"pid": 4101, "kept": 2, "busy": 0, "idle_s": 1.0, "exits_in_s": 50.0}
    with (
        own_folder(monkeypatch, "rs-", lambda: None),
        fake_kept("judge", "k" * 24, keeper),
    ):
        monkeypatch.setenv("ROSE_KEEP_WARM", "0")  # the stores' opens start no graph server
        for root in (store.primary.root.parent, other):
            shown = status(Store.open(root))
            assert shown["kept"] == [{**keeper, "shared": True}]
            assert shown["graph_server"] is None
            monkeypatch.chdir(root)
            text = CliRunner().invoke(app, ["status"]).output
            assert (
                "kept       2 judge CLI(s) started for the next prompt (pid 4101; exits after "
                "50 s more without a question, recall.keep_warm_s; shared by every store)"
            ) in text
            assert "graph database open" not in text


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
