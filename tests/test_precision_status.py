"""`rose status` reports precision (used ÷ served) from the graph's episodes, with its counts.

Locks in: the figure is counted over each episode's served lessons, overall, per recall
mode of the prompt (fits / judged / degraded, and unknown only when there is any) and per
scope of the served lesson; a lesson used without being served that unit does not count;
where nothing was served there is no ratio (None in JSON, "—" in text), never a 0 or a
100 % made of nothing.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rose.cli import app
from rose.inspect.precision import summarise
from rose.inspect.status import status
from rose.models import Episode, Node
from rose.store.facade import Store

pytestmark = pytest.mark.graph

P1, P2, G1 = "n_proj000001", "n_proj000002", "n_glob000001"


@pytest.fixture
def both(store: Store) -> Store:
    Store.init(scope="global")
    store = Store.open()
    store.save(Node(id=P1, title="Project one", body="One."))
    store.save(Node(id=P2, title="Project two", body="Two."))
    store.save(Node(id=G1, title="Global one", body="Everywhere."), scope="global")
    return store


def _ep(served, used, recall="", outcome="success") -> Episode:
    return Episode(served=served, used=used, recall=recall, outcome=outcome)


def test_precision_overall_by_mode_and_by_scope(both: Store):
    both.save_episodes(
        [
            _ep([P1, P2, G1], [P1], "fits"),  # 1 of 3
            _ep([P1, G1], [P1, G1], "judged"),  # 2 of 2
            _ep([P2], [], "judged", "failure"),  # 0 of 1
            _ep([P1, P2], [P2], ""),  # 1 of 2, mode not known
            _ep([P1], [P1, P2], "degraded"),  # P2 used but not served: not counted
        ]
    )
    p = status(both)["precision"]
    assert (p["served"], p["used"], p["precision"]) == (9, 5, round(5 / 9, 3))
    modes = p["by_recall"]
    assert {m: (f["served"], f["used"]) for m, f in modes.items()} == {
        "fits": (3, 1),
        "judged": (3, 2),
        "degraded": (1, 1),
        "unknown": (2, 1),
    }
    assert modes["judged"]["precision"] == round(2 / 3, 3) and modes["degraded"]["precision"] == 1
    scopes = p["by_scope"]
    assert (scopes["project"]["served"], scopes["project"]["used"]) == (7, 4)
    assert (scopes["global"]["served"], scopes["global"]["used"]) == (2, 1)
    assert scopes["global"]["precision"] == 0.5


def test_nothing_served_is_no_ratio_not_zero(both: Store):
    both.save_episodes([_ep([], [], "fits"), _ep([P1], [P1], "judged")])
    p = status(both)["precision"]
    assert p["precision"] == 1.0
    assert p["by_recall"]["fits"] == {"served": 0, "used": 0, "precision": None}
    assert p["by_recall"]["degraded"]["precision"] is None and "unknown" not in p["by_recall"]
    assert p["by_scope"]["global"]["precision"] is None


def test_an_empty_store_has_no_precision_at_all(store: Store):
    p = status(store)["precision"]
    assert (p["served"], p["used"], p["precision"]) == (0, 0, None)
    assert all(f["precision"] is None for f in [*p["by_recall"].values(), *p["by_scope"].values()])


def test_status_text_and_json_show_precision(both: Store):
    both.save_episodes([_ep([P1, P2], [P1], "judged"), _ep([G1], [], "fits")])
    runner = CliRunner()
    res = runner.invoke(app, ["status"])
    assert res.exit_code == 0, res.output
    assert "precision  33% (1/3) of served lessons used" in res.output
    assert "judged 50% (1/2)" in res.output and "fits 0% (0/1)" in res.output
    assert "degraded — (0/0)" in res.output and "global 0% (0/1)" in res.output
    res = runner.invoke(app, ["status", "--json"])
    assert json.loads(res.output)["precision"]["by_recall"]["judged"]["precision"] == 0.5


def test_summarise_counts_rows_from_any_scope():
    rows = [
        {"recall": "fits", "scope": "project", "served": 4, "used": 1},
        {"recall": "weird", "scope": "global", "served": 2, "used": 2},
    ]
    p = summarise(rows)
    assert (p["served"], p["used"], p["precision"]) == (6, 3, 0.5)
    assert p["by_recall"]["unknown"]["precision"] == 1.0
    assert p["by_scope"]["project"]["precision"] == 0.25
