"""A lesson kept during a judge outage gets its scope judged by the later reconcile.

Locks in: kept with no scope chosen, the lesson is marked `scope` as well as `reconcile`
(one whose caller chose a scope is not); the later reconcile asks `scope` before
anything else, and a lesson judged global moves out of the project store into the global
one (created if missing), its project file gone, then is reconciled there; one judged
project stays put; and a move that dies between writing the new file and removing the old
is finished by the next open, leaving the lesson in the global store only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rose.errors import BackendUnavailable
from rose.files import journal
from rose.files.layout import global_root
from rose.jobs.capture import capture
from rose.loop.reflection.consolidate import pending, reconcile_pending
from rose.store.facade import Store
from tests._reconcile import judge, reconciled

pytestmark = pytest.mark.graph

BODY = "Prefer `git switch` to `git checkout` for branches: it cannot clobber files."
GLOBAL = {"scope": "global", "reason": "true of git anywhere"}


def _kept(store: Store, *, scope: str | None = None) -> str:
    down = BackendUnavailable("scripted", "down")
    j, _b = judge(store, scope=[down], related=[down], reconcile=[down])
    return capture(store, j, Store.draft(BODY), source="user", scope=scope).ids[0]


def _files(root: Path, lesson_id: str) -> list[Path]:
    return list((root / "nodes").rglob(f"{lesson_id}.md"))


def test_a_default_scope_is_marked_not_judged_and_a_chosen_one_is_not(store: Store):
    assert Store.open().get(_kept(store)).provisional == ["title", "gist", "scope", "reconcile"]
    chosen = Store.open().get(_kept(store, scope="project"))
    assert chosen.provisional == ["title", "gist", "reconcile"]


def test_judged_global_it_moves_to_the_global_store(store: Store):
    kept = _kept(store)
    assert not global_root().exists()
    j, backend = judge(store, scope=[GLOBAL], reconcile=[reconciled("orthogonal")])
    (done,) = reconcile_pending(store, judge=j)
    assert [r.call for r in backend.requests][0] == "scope"
    assert done.relation == "orthogonal"
    assert _files(store.primary.root, kept) == []  # the project copy is gone
    assert len(_files(global_root(), kept)) == 1
    node = Store.open().get(kept)
    assert (node.scope, node.provisional, node.body) == ("global", [], BODY)
    assert node.title == "Written title"  # then reconciled, in the global store
    assert pending(Store.open()) == []


def test_judged_project_it_stays(store: Store):
    kept = _kept(store)
    here = {"scope": "project", "reason": "this repository's"}
    j, _b = judge(store, scope=[here], reconcile=[reconciled("orthogonal")])
    (done,) = reconcile_pending(store, judge=j)
    assert done.relation == "orthogonal"
    node = Store.open().get(kept)
    assert (node.scope, node.provisional) == ("project", [])
    assert len(_files(store.primary.root, kept)) == 1


def test_a_move_that_dies_half_way_is_finished_by_the_next_open(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    kept = _kept(store)
    Store.init(scope="global")
    real = journal._do

    def dies_after_writing(files, remove):
        real(files, [])
        raise KeyboardInterrupt  # killed before the old file is removed

    monkeypatch.setattr(journal, "_do", dies_after_writing)
    j, _b = judge(store, scope=[GLOBAL], reconcile=[reconciled("orthogonal")])
    with pytest.raises(KeyboardInterrupt):
        reconcile_pending(Store.open(), judge=j)
    assert len(_files(store.primary.root, kept)) == 1  # both copies, and the journal
    monkeypatch.setattr(journal, "_do", real)
    node = Store.open().get(kept)
    assert node.scope == "global" and "scope" not in node.provisional
    assert _files(store.primary.root, kept) == []
    assert len(_files(global_root(), kept)) == 1
