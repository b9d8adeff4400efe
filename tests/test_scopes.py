"""Two scopes: `~/.rose` is layered under the project store. Both are read, new lessons go to
the project unless told otherwise, and editing a global lesson writes it back to the global
store instead of forking a local copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.files.layout import find_project_root, global_root
from rose.inspect.status import status
from rose.store.facade import Store

pytestmark = pytest.mark.graph


def test_layered_read_and_default_project_write(project: Path):
    Store.init(scope="global")
    store = Store.init(project)
    g = store.add("Global truth.", scope="global")
    p = store.add("Project detail.")
    assert (global_root() / "nodes" / "general" / f"{g.id}.md").exists()
    assert (project / ".rose" / "nodes" / "general" / f"{p.id}.md").exists()
    scopes = {a["id"]: a["scope"] for a in status(store)["apexes"]}
    assert scopes == {g.id: "global", p.id: "project"}


def test_editing_a_global_lesson_writes_it_back(project: Path):
    Store.init(scope="global")
    store = Store.init(project)
    g = store.add("Global truth.", scope="global")
    node = store.get(g.id)
    node.body = "Global truth, refined."
    store.save(node)  # no scope given: it stays where it lives
    assert "refined" in (global_root() / "nodes" / "general" / f"{g.id}.md").read_text()
    assert not list((project / ".rose" / "nodes").rglob(f"{g.id}.md"))


def test_changing_family_moves_the_file(store: Store):
    n = store.add("Some lesson.", family="one")
    n.family = "two"
    store.save(n)
    assert not store.primary.node_path("one", n.id).exists()
    assert store.primary.node_path("two", n.id).exists()
    assert store.get(n.id).family == "two"


def test_global_store_alone_works_and_is_never_a_project(tmp_path: Path, monkeypatch):
    Store.init(scope="global")
    monkeypatch.chdir(global_root().parent)  # walking up from home meets ~/.rose
    assert find_project_root() is None
    store = Store.open()
    assert store.project is None and store.primary.scope == "global"
    n = store.add("Only global here.", scope="global")
    assert store.get(n.id).scope == "global"


def test_rose_home_overrides_discovery(tmp_path: Path, monkeypatch):
    elsewhere = tmp_path / "elsewhere" / ".rose"
    monkeypatch.setenv("ROSE_HOME", str(elsewhere))
    store = Store.init()
    assert store.primary.root == elsewhere.resolve()
    assert (elsewhere / "nodes").is_dir()
