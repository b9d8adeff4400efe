"""`rose status` shows what was captured, by source (reflector, session end, the user).

Locks in: each lesson offered is counted once under the source that offered it, whatever
became of it (a duplicate is counted as offered and as a duplicate), a lesson still
waiting to be reconciled is counted as such, and the text report says all of it in one
line; a store where nothing was captured says nothing about it.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.errors import BackendFailed
from rose.loop.reflection.consolidate import consolidate
from rose.store.facade import Store
from tests._reconcile import judge, lesson, reconciled, related

pytestmark = pytest.mark.graph


def test_captured_by_source(store: Store):
    assert "\ncaptured " not in CliRunner().invoke(app, ["status"]).output
    j, _b = judge(store)
    consolidate(store, j, lesson("n_first001", "First."), source="reflector", scope="project")
    j, _b = judge(
        store,
        related=[related(matches=("n_first001",))],
        reconcile=[reconciled("duplicate", "n_first001")],
    )
    consolidate(
        store, j, lesson("n_again001", "First, again."), source="session-end", scope="project"
    )
    j, _b = judge(store, scope=[BackendFailed("scripted", "exit 1")])
    consolidate(store, j, Store.draft("Taught by hand."), source="user")
    data = json.loads(CliRunner().invoke(app, ["status", "--json"]).output)["captured"]
    assert data["by_source"] == {"reflector": 1, "session-end": 1, "user": 1}
    assert data["outcomes"] == {"orthogonal": 1, "duplicate": 1, "unreconciled": 1}
    assert (data["duplicates"], data["unreconciled"]) == (1, 1)
    text = CliRunner().invoke(app, ["status"]).output
    assert (
        "captured   3 lesson(s): 1 from reflector, 1 from session end, 1 from user; "
        "1 duplicate(s) not stored; 1 not reconciled yet"
    ) in text
