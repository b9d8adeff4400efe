"""`rose archive ID` puts a lesson away by hand: recall never serves it, `rose tree` still
shows it, and an unknown or already archived id is a one-line error.

Locks in: `archived` was a status no code could set, so the only way to retire a lesson was
to delete its file (losing it and its lineage) or to hand-edit its front matter. Now the
command archives it, the recall view and the apexes leave it out at once (a lesson below it,
superseded, is not served in its place), its file stays, and the event log records it.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.events import read_events
from rose.models import Node
from rose.store import dag
from rose.store.facade import Store
from tests._lineage import L0, L1, two_levels

pytestmark = pytest.mark.graph

OTHER = "n_other0001"


def _cli(*args: str):
    return CliRunner().invoke(app, list(args), prog_name="rose")


def test_archive_hides_from_recall_and_tree_shows_it(store: Store):
    two_levels(store)
    store.save(Node(id=OTHER, family="cache", title="Cache TTLs", body="TTLs are 60 s."))
    assert sorted(i["id"] for i in store.view()["lessons"]) == [L1, OTHER]

    res = _cli("archive", L1[:8])  # a unique prefix, as the block shows ids
    assert res.exit_code == 0, res.output
    assert f"archived {L1}" in res.output and "was active" in res.output
    assert store.get(L1).status == "archived"
    assert [i["id"] for i in Store.open().view()["lessons"]] == [OTHER]
    assert [a["id"] for a in dag.apexes(store)] == [OTHER]  # L0 stays superseded
    assert store.get(L0).status == "superseded"
    assert (store.primary.root / "nodes" / "retry" / f"{L1}.md").exists()
    tree = _cli("tree").output
    assert f"L1 {L1}" in tree and "[archived]" in tree
    (event,) = read_events(store.primary.events, kind="archive")
    assert (event["id"], event["was"]) == (L1, "active")


def test_unknown_and_already_archived_ids_are_errors(store: Store):
    two_levels(store)
    res = _cli("archive", "n_nosuch01")
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        "rose: no lesson with id 'n_nosuch01'; `rose status` lists what exists"
    ]
    assert _cli("archive", L1).exit_code == 0
    res = _cli("archive", L1)
    assert res.exit_code == 1 and "archived already" in res.output
    assert len(read_events(store.primary.events, kind="archive")) == 1
